"""What a traced process looks like from /proc while it runs: its memory
maps (taken in the background, so IPs can be symbolized after it exits)
and the files it already had open when tracing began (-p PID)."""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from runfolder.files import RunFolder

# (start, end, file offset, path) of an executable mapping
Mapping = tuple[int, int, int, str]


@dataclass
class MapSnapshots:
    """Latest /proc/PID/maps of every pid seen, taken in the background."""
    pids: set[int] = field(default_factory=set)
    maps: dict[int, list[Mapping]] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def snap(self, pid: int) -> None:
        rows = []
        try:
            with open(f"/proc/{pid}/maps") as f:
                for line in f:
                    parts = line.split(None, 5)
                    if len(parts) == 6 and "x" in parts[1] and parts[5].startswith("/"):
                        lo, hi = (int(x, 16) for x in parts[0].split("-"))
                        rows.append((lo, hi, int(parts[2], 16), parts[5].strip()))
        except OSError:
            return
        if rows:
            self.maps[pid] = rows

    def start(self, root_pid: int, interval: float = 0.5) -> None:
        """Snap root_pid's maps from now on (another root, once started)."""
        self.pids.add(root_pid)
        if self._thread is not None:
            self.snap(root_pid)
            return

        def loop() -> None:
            # often at first: a short run must be caught after its exec
            # (the first snap may still see the trampoline shell)
            wait = 0.02
            while not self._stop.wait(wait):
                for pid in list(self.pids):
                    self.snap(pid)
                wait = min(wait * 2, interval)

        self.snap(root_pid)
        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(2)

    def save(self, run_dir: Path) -> None:
        """maps.json: pid -> [start, end, offset, path] of what was mapped."""
        RunFolder(run_dir).maps_json.write_text(json.dumps(
            {str(pid): rows for pid, rows in self.maps.items()}))


def open_files(pids: list[int]) -> dict[int, dict[int, str]]:
    """pid -> fd -> path of the files those processes have open now."""
    out: dict[int, dict[int, str]] = {}
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                out.setdefault(pid, {})[int(fd)] = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                pass
    return out


def save_open_files(run_dir: Path, files: dict[int, dict[int, str]]) -> None:
    """fds.json: what analysis.io names the fds of io records by, before any
    openat the tracer saw."""
    RunFolder(run_dir).fds_json.write_text(json.dumps(
        {str(p): {str(fd): path for fd, path in fds.items()} for p, fds in files.items()}))


@dataclass(frozen=True)
class ProcStat:
    """What /proc/PID/stat says of a process that serve's finding reads."""
    comm: str
    state: str          # R, S, D, T, Z, X, ...
    ppid: int
    start_ticks: int    # when it started, in clock ticks since boot


def proc_stat(pid: int) -> ProcStat | None:
    """/proc/PID/stat parsed (the comm may hold spaces and parentheses: it
    ends at the last ")"); None when the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        return ProcStat(stat[stat.index("(") + 1:stat.rindex(")")], fields[0],
                        int(fields[1]), int(fields[19]))
    except (OSError, ValueError, IndexError):
        return None


def stopped_parent(pid: int) -> int | None:
    """The parent of pid if it is stopped (state T), else None.  su and
    runuser stop themselves when their child stops (they mirror a job
    control stop) and continue the child once continued: a child held at
    an object leaves such a parent stopped, with nobody to continue it."""
    st = proc_stat(pid)
    parent = proc_stat(st.ppid) if st is not None and st.ppid > 1 else None
    return st.ppid if st is not None and parent is not None and parent.state == "T" else None
