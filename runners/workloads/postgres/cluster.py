"""A cluster's data folder and its postmaster: initdb, start (as a child
of this process, or detached), wait until it accepts connections, stop.

The postmaster is exec'd directly as the folder's owner (no pg_ctl, no
runuser in between), so a tracer that follows this process's children sees
the postmaster and every backend it forks.  Its socket is always DIR
(-k DIR on its command line), so a copied cluster folder runs as well."""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable

from runners.workloads.postgres import binaries
from runners.workloads.postgres.owner import Owner

LOG_NAME = "walscope-postmaster.log"      # the postmaster's stderr, in DIR
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 60.0
POLL_S = 0.02
# sun_path is 108 bytes; the socket is DIR/.s.PGSQL.<port>
MAX_DIR_CHARS = 107 - len("/.s.PGSQL.65535")
PR_SET_PDEATHSIG = 1


class ClusterError(RuntimeError):
    """A step failed: one line (the postmaster's log says more)."""


def run_as(owner: Owner, argv: list[str], cwd: Path | None = None,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """A short command as the cluster owner, output captured."""
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd,
                          env=owner.env(env), stdin=subprocess.DEVNULL,
                          **owner.popen_kw())


def last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "(no output)"


def check_reachable(owner: Owner, folder: Path) -> None:
    """The owner must be able to enter folder (its parents searchable)."""
    p = run_as(owner, ["test", "-x", str(folder), "-a", "-w", str(folder)])
    if p.returncode != 0:
        raise ClusterError(f"{folder}: {owner.name} cannot enter or write it "
                           "(a parent folder is not searchable by that user; "
                           "use a folder under /tmp, or chmod o+x the parents)")


def initdb(data_dir: Path, owner: Owner) -> None:
    """A new cluster: superuser postgres, trust authentication (only the
    owner can reach its socket, in the 0700 data folder), C locale."""
    p = run_as(owner, [binaries.program("initdb"), "-D", str(data_dir),
                       "-U", "postgres", "--auth=trust", "--encoding=UTF8",
                       "--locale=C"])
    if p.returncode != 0:
        raise ClusterError(f"initdb failed: {last_line(p.stderr or p.stdout)}")


def port_of(data_dir: Path, owner: Owner) -> int:
    """The port postgresql.conf gives (asked of postgres itself, -C)."""
    p = run_as(owner, [binaries.program("postgres"), "-D", str(data_dir), "-C", "port"])
    if p.returncode != 0 or not p.stdout.strip().isdigit():
        raise ClusterError(f"{data_dir}: cannot read its port: "
                           f"{last_line(p.stderr or p.stdout)}")
    return int(p.stdout.strip())


def running_pid(data_dir: Path) -> int | None:
    """The pid in DIR/postmaster.pid when that process is alive."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return pid


def _die_with(parent: int) -> Callable[[], None]:
    """preexec_fn: SIGINT (fast shutdown) to the postmaster when this
    runner dies, even by SIGKILL.  Set after the switch of user (which
    clears it); Popen runs preexec_fn after setuid."""
    libc = ctypes.CDLL(None, use_errno=True)

    def arm() -> None:
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGINT), 0, 0, 0)
        if os.getppid() != parent:     # the runner died before prctl
            os._exit(1)
    return arm


def start(data_dir: Path, owner: Owner, detach: bool = False) -> subprocess.Popen:
    """postgres -D DIR -k DIR as the owner, its stderr appended to
    DIR/walscope-postmaster.log.  As a child that dies with this process,
    or (detach) in its own session, to outlive it."""
    if len(str(data_dir)) > MAX_DIR_CHARS:
        raise ClusterError(f"{data_dir}: too long a path for the socket in it "
                           f"(at most {MAX_DIR_CHARS} characters)")
    pid = running_pid(data_dir)
    if pid is not None:
        raise ClusterError(f"{data_dir}: a postmaster is running already (pid {pid}); "
                           "stop it first")
    with open(data_dir / LOG_NAME, "ab") as log:
        kw = owner.popen_kw()
        if detach:
            kw["start_new_session"] = True
        else:
            kw["preexec_fn"] = _die_with(os.getpid())
        return subprocess.Popen([binaries.program("postgres"), "-D", str(data_dir),
                                 "-k", str(data_dir)],
                                stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, cwd=data_dir,
                                env=owner.env(), **kw)


def log_tail(data_dir: Path) -> str:
    try:
        return last_line((data_dir / LOG_NAME).read_text(errors="replace"))
    except OSError:
        return "(no log)"


def wait_ready(proc: subprocess.Popen, data_dir: Path, port: int, owner: Owner,
               timeout: float = READY_TIMEOUT_S) -> None:
    """Until pg_isready says it accepts connections; fails at once when the
    postmaster exits, and after timeout seconds."""
    end = time.monotonic() + timeout
    argv = [binaries.program("pg_isready"), "-q", "-h", str(data_dir), "-p", str(port),
            "-d", "postgres", "-U", "postgres"]
    while True:
        if proc.poll() is not None:
            raise ClusterError(f"postgres exited ({proc.returncode}) while starting: "
                               f"{log_tail(data_dir)}")
        if run_as(owner, argv).returncode == 0:
            return
        if time.monotonic() > end:
            raise ClusterError(f"postgres not accepting connections after {timeout:g} s: "
                               f"{log_tail(data_dir)}")
        time.sleep(POLL_S)


def stop(proc: subprocess.Popen, timeout: float = STOP_TIMEOUT_S) -> int:
    """Fast shutdown (SIGINT: roll back sessions, checkpoint, exit) of a
    postmaster this process started; immediate shutdown (SIGQUIT), then
    SIGKILL, if it takes longer than timeout.  Its exit status."""
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGKILL):
        if proc.poll() is not None:
            break
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            break
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()


def stop_pid(data_dir: Path, timeout: float = STOP_TIMEOUT_S) -> int | None:
    """Fast shutdown of the postmaster DIR/postmaster.pid names (one this
    process did not start): returns its pid once it is gone and the pid
    file removed, None when none was running."""
    pid = running_pid(data_dir)
    if pid is None:
        return None
    os.kill(pid, signal.SIGINT)
    end = time.monotonic() + timeout
    while running_pid(data_dir) == pid:
        if time.monotonic() > end:
            raise ClusterError(f"postmaster {pid} still running {timeout:g} s after "
                               f"SIGINT: {log_tail(data_dir)}")
        time.sleep(POLL_S)
    return pid
