"""On-CPU stacks of the traced threads, for the on-CPU flame graph.

Two ways, chosen per run and recorded in summary.json (``oncpu_stacks``):
  bpf    the BPF sampler's own stack walk (bpf_get_stackid): cheap, but it
         follows frame pointers, which Debian's librocksdb and most distro
         binaries lack;
  dwarf  ``perf record --call-graph dwarf``: copies 16 KiB of user stack per
         sample and unwinds it afterwards with the objects' DWARF CFI; works
         without frame pointers, costs more per sample.
``auto`` takes bpf only when every probed object keeps frame pointers.  A
stack whose outermost frame is not a thread or process entry point
(_start, clone, start_thread...) is counted as truncated.
"""
from __future__ import annotations

import errno
import os
import re
import select
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

from elftools.common.exceptions import ELFError

from collectors import records as R
from collectors.offcpu import read_stack_map
from collectors import symbols
from collectors.sampling import Symbolizer

METHODS = ("off", "auto", "bpf", "dwarf")
ROOT_FRAMES = ("_start", "__libc_start_main", "__libc_start_call_main", "clone",
               "__clone", "clone3", "__clone3", "start_thread")
FP_PROLOGUES = (b"\x55\x48\x89\xe5", b"\xf3\x0f\x1e\xfa\x55\x48\x89\xe5")


class StackError(RuntimeError):
    pass


def frame_pointer_share(path: str, limit: int = 400) -> float:
    """Share of sizeable functions whose code starts with push %rbp; mov %rsp,%rbp."""
    from elftools.elf.elffile import ELFFile
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            funcs = []
            for name in (".symtab", ".dynsym"):
                sec = elf.get_section_by_name(name)
                if sec is None:
                    continue
                for s in sec.iter_symbols():
                    if s["st_info"]["type"] == "STT_FUNC" and s["st_size"] >= 64 \
                            and s["st_shndx"] != "SHN_UNDEF":
                        funcs.append(s["st_value"])
            funcs = sorted(set(funcs))[:: max(1, len(set(funcs)) // limit)][:limit]
            hits = 0
            for vaddr in funcs:
                off = symbols._vaddr_to_offset(elf, vaddr)
                if off is None:
                    continue
                f.seek(off)
                code = f.read(8)
                hits += any(code.startswith(p) for p in FP_PROLOGUES)
            return hits / len(funcs) if funcs else 0.0
    except (OSError, ELFError):   # an unreadable object keeps none
        return 0.0


def choose(method: str, objects: list[str]) -> str:
    """The method to use for these probed objects (exe, database library)."""
    if method != "auto":
        return method
    ok = objects and all(frame_pointer_share(o) >= 0.8 for o in objects)
    return "bpf" if ok else "dwarf"


def is_truncated(frames: list[str]) -> bool:
    """frames root first.  A complete user stack starts at an entry point, or
    in an object without symbols ("[db_bench]": a stripped program's _start);
    one whose root address maps to no object ("[unknown]") was cut short."""
    if not frames or frames[0] == "[unknown]":
        return True
    root = frames[0]
    return not (root.startswith(ROOT_FRAMES) or (root.startswith("[") and root.endswith("]")))


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


_FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")


def fold_perf(data: Path) -> tuple[Counter, int, int]:
    """(folded stacks thread;root..leaf -> samples, samples, truncated)."""
    p = subprocess.run(["perf", "script", "-i", str(data), "-F", "comm,tid,ip,sym,dso",
                        "--no-inline"], capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise StackError(f"perf script: {p.stderr.strip()[-200:]}")
    out: Counter = Counter()
    total = truncated = 0
    comm, frames = None, []

    def flush() -> None:
        nonlocal total, truncated
        if comm is None:
            return
        user = [f for f in reversed(frames) if not f.startswith("[k]")]
        total += 1
        truncated += is_truncated(user)
        stack = [comm] + list(reversed(frames))
        out[";".join(s.replace(";", ":").replace(" ", "_") for s in stack)] += 1

    for line in p.stdout.splitlines():
        if not line.strip():
            flush()
            comm, frames = None, []
            continue
        if not line.startswith((" ", "\t")):
            flush()
            comm, frames = line.split()[0], []
            continue
        m = _FRAME.match(line)
        if m:
            sym, dso = m.group(1), m.group(2)
            if sym == "[unknown]" and dso != "[unknown]":
                sym = f"[{os.path.basename(dso)}]"
            sym = sym.split("(")[0] if "(" in sym and not sym.startswith("[") else sym
            frames.append(("[k]" if "kernel" in dso else "") + sym)
    flush()
    # kernel frames marked while counting truncation; unmark for the graph
    return Counter({k.replace("[k]", ""): v for k, v in out.items()}), total, truncated


def fold_bpf(run_dir: Path, maps: dict[int, list]) -> tuple[Counter, int, int]:
    """Stacks the BPF sampler walked (frame pointers), symbolised."""
    s = R.read_records(run_dir, "ws_sample_rec")
    stacks = read_stack_map(run_dir)
    sym = Symbolizer()
    out: Counter = Counter()
    total = truncated = 0
    for pid, sid, comm in zip(s["pid"], s["ustack_id"], s["comm"]):
        if sid < 0 or int(sid) not in stacks:
            continue
        frames = [sym.name(maps.get(int(pid), []), ip).split("(")[0]
                  for ip in reversed(stacks[int(sid)])]
        total += 1
        truncated += is_truncated(frames)
        out[";".join([comm.decode(errors="replace")] + frames)] += 1
    return out, total, truncated
