"""perf record --call-graph dwarf of a traced process tree (--stacks dwarf),
and its symbolization with perf script while the objects are at hand."""
from __future__ import annotations

import errno
import os
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path



class StackError(RuntimeError):
    """perf could not record or symbolize; the message is one line."""


class PerfRecorder:
    """perf record --call-graph dwarf of a process tree, in the background."""

    def __init__(self, pid: int, hz: int, out: Path):
        perf = shutil.which("perf")
        if not perf:
            raise StackError("perf (linux-perf) is needed for --stacks dwarf")
        self.out = out
        self.log = open(out.with_suffix(".log"), "w")
        # events start disabled; "enable" on the control fifo is acknowledged
        # once they are on, so nothing the workload does is missed
        ctl, ack = out.with_suffix(".ctl"), out.with_suffix(".ack")
        for f in (ctl, ack):
            f.unlink(missing_ok=True)
            os.mkfifo(f)
        self.proc = subprocess.Popen(
            [perf, "record", "-q", "-F", str(hz), "--call-graph", "dwarf,16384",
             "-D", "-1", "--control", f"fifo:{ctl},{ack}",
             "-p", str(pid), "-o", str(out)],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self._enable(ctl, ack)
        finally:
            for f in (ctl, ack):
                f.unlink(missing_ok=True)

    def _enable(self, ctl: Path, ack: Path, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while True:   # a writer can open a fifo only once its reader has
            try:
                fd = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as e:
                if e.errno != errno.ENXIO:
                    raise
            if self.proc.poll() is not None or time.monotonic() > end:
                self.stop()
                raise StackError("perf record did not start (see perf.log)")
            time.sleep(0.02)
        rfd = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)
        try:
            os.write(fd, b"enable\n")
            while time.monotonic() < end and self.proc.poll() is None:
                if select.select([rfd], [], [], 0.1)[0] and os.read(rfd, 16):
                    return
            self.stop()
            raise StackError("perf record did not enable its events (see perf.log)")
        finally:
            os.close(fd)
            os.close(rfd)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def script(data: Path, out: Path) -> None:
    """perf script of a recording, as text (comm, tid, ip, sym, dso)."""
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w") as f:
        p = subprocess.run(["perf", "script", "-i", str(data), "-F",
                            "comm,tid,ip,sym,dso", "--no-inline"],
                           stdout=f, stderr=subprocess.PIPE, text=True, timeout=900)
    if p.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise StackError(f"perf script: {p.stderr.strip()[-200:]}")
    tmp.replace(out)
