"""Run the collector and the traced workload together.

The collector loads and attaches first; the workload is forked stopped
(blocked on a pipe before exec), its pid is handed to the collector, and only
then does it exec: it is traced from its first instruction.  The workload
runs as the invoking user with a sanitised environment; the collector runs
in its own session so a Ctrl-C reaches the workload, not the collector, which
is stopped last and drains everything the kernel still holds.
"""
from __future__ import annotations

import grp
import os
import pwd
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable

from collectors import procfs
from runfolder.records import ROOT
from runfolder.files import RunFolder

COLLECT = ROOT / ".output" / "walscope-collect"
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
KEEP_ENV = ("TERM", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "COLUMNS")


class SessionError(RuntimeError):
    """Something the user must fix; the message is one line."""


@dataclass(frozen=True)
class RunAs:
    name: str
    uid: int
    gid: int
    groups: tuple[int, ...]
    home: str
    explicit_root: bool = False

    @staticmethod
    def lookup(name: str | None) -> "RunAs":
        explicit = name is not None
        name = name or os.environ.get("SUDO_USER") or pwd.getpwuid(os.getuid()).pw_name
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            raise SessionError(f"no such user: {name}") from None
        groups = tuple(g.gr_gid for g in grp.getgrall() if name in g.gr_mem)
        return RunAs(name, pw.pw_uid, pw.pw_gid, tuple(sorted({pw.pw_gid, *groups})),
                     pw.pw_dir, explicit_root=explicit and pw.pw_uid == 0)

    def env(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in KEEP_ENV if k in os.environ}
        env.update(PATH=SAFE_PATH, HOME=self.home, USER=self.name,
                   LOGNAME=self.name, SHELL="/bin/sh")
        return env


def option_args(options: dict[str, Any]) -> list[str]:
    """walscope-collect's long options by name as its command line: True
    for a flag, a value for an option, None or False to leave it out."""
    out: list[str] = []
    for name, value in options.items():
        if value is True:
            out.append(f"--{name}")
        elif value is not None and value is not False:
            out += [f"--{name}", str(value)]
    return out


class Collector:
    """The walscope-collect process, driven over its stdin/stdout."""

    def __init__(self, outdir: Path, attach: list[str], options: dict[str, Any],
                 on_object: Callable[[str], None] | None = None):
        """attach: the uprobe lines (attach_lines.attach_lines); options: the
        collector's long options (walscope-collect --help) by name: True
        for a flag, a value for an option, None or False to leave it out;
        on_object: called from the reader thread with each "obj ..." line
        (it must not wait for a reply there: hand it to another thread)."""
        if not COLLECT.exists():
            raise SessionError(f"{COLLECT} is missing: run `make` first")
        self.outdir = outdir
        attach_file = RunFolder(outdir).attach_tsv
        attach_file.write_text("".join(line + "\n" for line in attach))
        cmd = [str(COLLECT), "-o", str(outdir), "--attach", str(attach_file),
               *option_args(options)]
        self.log_path = RunFolder(outdir).collector_log
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._log,
                                     text=True, bufsize=1,
                                     start_new_session=True)
        self.started = time.monotonic()
        self.on_object = on_object
        self._lock = threading.Lock()
        self._replies: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        """Every stdout line: "obj ..." events to their handler, the rest
        (replies, in the order of the commands) to the reply queue."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.strip()
            if line.startswith("obj ") and self.on_object is not None:
                self.on_object(line)
            else:
                self._replies.put(line)
        self._replies.put(None)   # it exited

    def _reply(self, timeout: float) -> str | None:
        try:
            return self._replies.get(timeout=timeout)
        except queue.Empty:
            return None

    def last_error(self) -> str:
        self._log.flush()
        lines = [l for l in self.log_path.read_text().splitlines()
                 if l.startswith("walscope-collect:")]
        return lines[-1] if lines else "collector exited"

    def wait_ready(self, timeout: float = 60) -> None:
        line = self._reply(timeout)
        if line != "ready":
            self.kill()
            raise SessionError(self.last_error())

    def command(self, line: str, timeout: float = 30) -> str:
        """Send one command, return its reply ("ok ..." or "err ..."); from
        any thread (one command is in flight at a time)."""
        assert self.proc.stdin is not None
        with self._lock:
            try:
                self.proc.stdin.write(line + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise SessionError(f"collector gone: {self.last_error()}") from None
            reply = self._reply(timeout)
        if reply is None:
            raise SessionError(f"collector did not answer {line.split()[0]!r}: "
                               f"{self.last_error()}")
        return reply

    def add_pid(self, pid: int) -> None:
        reply = self.command(f"pid {pid}", timeout=10)
        if reply != f"ok pid {pid}":   # "err pid N: why"
            raise SessionError(f"collector did not take pid {pid}: "
                               f"{reply[len('err '):]}")

    def stop(self, timeout: float = 60) -> int:
        try:
            if self.proc.stdin:
                with self._lock:
                    self.proc.stdin.write("quit\n")
                    self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            rc = self.proc.wait(10)
        self._log.flush()
        if rc:   # a failed poll, write or dump: the run is partial, say why
            print(f"walscope: the collector failed (exit {rc}): {self.last_error()}",
                  file=sys.stderr)
        self._log.close()
        return rc

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _tee(src: IO[bytes], dst_file: IO[bytes], echo: bool) -> None:
    for chunk in iter(lambda: src.read1(65536), b""):
        dst_file.write(chunk)
        dst_file.flush()
        if echo:
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()


class Workload:
    """A command forked stopped, released after the collector has its pid."""

    def __init__(self, argv: list[str], run_as: RunAs, log_path: Path,
                 echo: bool = True, cwd: str | None = None,
                 extra_env: dict[str, str] | None = None):
        env = {**run_as.env(), **(extra_env or {})}
        exe = argv[0]
        if "/" not in exe:
            found = shutil.which(exe, path=env["PATH"])
            if not found:
                raise SessionError(f"command not found: {exe}")
            exe = found
        elif not os.path.exists(exe):
            raise SessionError(f"command not found: {exe}")
        if not os.access(exe, os.X_OK) or os.path.isdir(exe):
            raise SessionError(f"not executable: {exe}")
        self.exe = os.path.realpath(exe)
        go_r, self._go_w = os.pipe()
        # a shell trampoline holds the exec until release(): Popen returns
        # once the shell runs, the collector learns its pid, then it execs
        # the command in place (same pid), traced from its first instruction
        trampoline = ["/bin/sh", "-c",
                      f'read -r _ <&{go_r}; exec {go_r}<&-; exec "$@"',
                      "walscope-exec", exe] + argv[1:]
        self._log = open(log_path, "wb")
        kwargs = {}
        if os.getuid() == 0:
            kwargs = dict(user=run_as.uid, group=run_as.gid,
                          extra_groups=list(run_as.groups))
        self.proc = subprocess.Popen(trampoline, env=env, cwd=cwd,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT,
                                     pass_fds=(go_r,), **kwargs)
        os.close(go_r)
        assert self.proc.stdout is not None
        self._tee = threading.Thread(target=_tee,
                                     args=(self.proc.stdout, self._log, echo),
                                     daemon=True)
        self._tee.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def release(self) -> None:
        os.write(self._go_w, b"g\n")
        os.close(self._go_w)

    def wait(self) -> int:
        rc = self.proc.wait()
        self._tee.join(5)
        self._log.close()
        return 128 - rc if rc < 0 else rc

    def interrupt(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGINT)
            except ProcessLookupError:
                pass


def process_tree(pid: int) -> list[int]:
    """pid and its live descendants."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit() and (st := procfs.proc_stat(int(d))) is not None:
            children.setdefault(st.ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def chown_tree(path: Path, run_as: RunAs) -> None:
    if os.getuid() != 0 or run_as.uid == 0:
        return
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            try:
                os.lchown(os.path.join(root, n), run_as.uid, run_as.gid)
            except OSError:
                pass
    os.lchown(path, run_as.uid, run_as.gid)
