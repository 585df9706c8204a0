"""The processes a serve traces when it is given several (-p PID -p PID)
or all of them (--all): every process on the host in which an engine is
found, at the start and as they come.

--all finds processes by reading /proc, never by stopping one: a process
nothing traces yet is not held while walscope looks at it.  What it costs
the host, and how it is bounded:
- which objects are candidates: an executable mapping whose file holds an
  engine's mark (engines/: bytes every object that holds the engine holds)
  is inspected, the rest are not (an object is searched for marks once,
  by device, inode, size and change time);
- an inspected object is inspected once, and a rejection is remembered
  across runs (collectors/object_cache.py);
- the rate: /proc is listed every SCAN_S; a process met for the first time
  has its maps read then, and again every RECHECK_S while no engine is in
  it (a program that loads an engine late); a process with an engine is
  traced, with its future children, and read no more.
A traced process that loads an object later is held at that moment as
with -p (collectors/objects.py): only processes with an engine are.
"""
from __future__ import annotations

import mmap
import os
import time
from dataclasses import dataclass, field

import engines
from collectors import loader, procfs

SCAN_S = 1.0          # how often /proc is listed for new processes
RECHECK_S = 10.0      # how often a process with no engine is read again
MARKS = tuple(e.mark for e in engines.ENGINES if e.mark)


def holds_mark(path: str) -> bool:
    """Whether the file holds any engine's mark (an object without one
    cannot hold an engine)."""
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return False
            with mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as m:
                return any(m.find(mark) >= 0 for mark in MARKS)
    except (OSError, ValueError):
        return False


@dataclass
class EngineProcesses:
    """The targets of one collector: the processes given (fixed), or every
    process in which an engine is found (fixed None).  pids() are the
    roots traced so far; a root's children are the collector's to follow."""
    fixed: tuple[int, ...] | None = None
    # processes never taken: walscope itself, and its ancestors up to init
    # (the shell, service manager or test runner that started it: their
    # trees hold every process they started, and walscope)
    exclude: set[int] = field(default_factory=lambda: lineage(os.getpid()))
    traced: set[int] = field(default_factory=set)     # roots handed out
    # processes traced through a traced parent (a server's backends): not
    # read again while they live
    covered: set[int] = field(default_factory=set)
    _marked: dict[tuple[int, int, int, int], bool] = field(default_factory=dict)
    _next_read: dict[int, float] = field(default_factory=dict)  # pid -> when, no engine
    first: list[int] = field(default_factory=list)    # what initial() said
    scan_s: float = SCAN_S
    recheck_s: float = RECHECK_S
    _last_scan: float = 0.0

    def every(self) -> bool:
        return self.fixed is None

    def initial(self) -> list[int]:
        """The processes to look at before the start: those given that
        still run, or the roots among those whose objects hold an engine's
        mark.  The plan inspects their objects and takes() those it finds
        an engine in; the rest are read again later."""
        if self.fixed is not None:
            self.first = [p for p in self.fixed if alive(p)]
            return self.first
        self._last_scan = time.monotonic()
        marked = []
        for p in self._new_pids():
            if self._marked_process(p):
                marked.append(p)
            else:
                self._next_read[p] = self._last_scan + self.recheck_s
        self.first = [p for p in marked if not self._under_traced(p, set(marked))]
        return self.first

    def take(self, pids: list[int], passed: list[int] = ()) -> None:
        """These roots are traced now (their children with them); those
        passed hold no engine now, and are read again in recheck_s."""
        self.traced |= set(pids)
        for p in pids:
            self._next_read.pop(p, None)
        later = time.monotonic() + self.recheck_s
        for p in passed:
            if p not in self.traced:
                self._next_read[p] = later

    def more(self, holds_engine) -> list[int]:
        """--all: the processes met since that hold an engine, as roots
        not traced through a traced parent.  holds_engine(pid) inspects
        the process's objects not seen yet (attaching their probes) and
        says whether one holds an engine."""
        if self.fixed is not None:
            return []
        now = time.monotonic()
        if now - self._last_scan < self.scan_s:
            return []
        self._last_scan = now
        found, new = [], self._new_pids()
        for pid in new:         # a traced parent's children are traced with it
            if self._under_traced(pid, set()):
                self.covered.add(pid)
        for pid in [p for p in new if p not in self.covered] + self._due(now):
            if self._marked_process(pid) and holds_engine(pid):
                found.append(pid)
            else:
                self._next_read[pid] = now + self.recheck_s
        roots = [p for p in found if not self._under_traced(p, set(found))]
        self.covered |= set(found) - set(roots)
        return roots

    def done(self) -> bool:
        """The run has no more to trace: every process given has ended
        (--all is never done)."""
        return self.fixed is not None and not any(alive(p) for p in self.fixed)

    def _new_pids(self) -> list[int]:
        """Processes not met before (and not walscope itself)."""
        out = []
        live = {int(d) for d in os.listdir("/proc") if d.isdigit()}
        # the ended are forgotten (their pids may come again)
        self.traced &= live
        self.covered &= live
        self.exclude &= live | {os.getpid(), 1}
        for pid in [p for p in self._next_read if p not in live]:
            del self._next_read[pid]
        for pid in sorted(live):
            if pid not in self.traced and pid not in self._next_read and \
                    pid not in self.exclude and pid not in self.covered:
                out.append(pid)
        return out

    def _due(self, now: float) -> list[int]:
        """Processes with no engine at their last read, read again now."""
        due = [p for p, t in self._next_read.items() if t <= now]
        for p in due:
            if not alive(p):
                del self._next_read[p]
        return [p for p in due if p in self._next_read]

    def _under_traced(self, pid: int, found: set[int]) -> bool:
        """Traced already through a parent (a server's backend), or the
        child of another process found in the same scan."""
        seen = set()
        st = procfs.proc_stat(pid)
        while st is not None and st.ppid > 1 and st.ppid not in seen:
            if st.ppid in self.traced or st.ppid in found:
                return True
            seen.add(st.ppid)
            st = procfs.proc_stat(st.ppid)
        return False

    def _marked_process(self, pid: int) -> bool:
        """Whether one of the process's executable objects holds an
        engine's mark (each file searched once)."""
        for m in loader.exec_mappings(pid):
            read = m.read_path(pid)
            try:
                st = os.stat(read)
            except OSError:
                continue
            key = (m.dev, m.ino, st.st_size, st.st_ctime_ns)
            if key not in self._marked:
                self._marked[key] = holds_mark(read)
            if self._marked[key]:
                return True
        return False


def alive(pid: int) -> bool:
    st = procfs.proc_stat(pid)
    return st is not None and st.state not in "ZX"


def lineage(pid: int) -> set[int]:
    """pid and its ancestors, init included."""
    out, st = {pid, 1}, procfs.proc_stat(pid)
    while st is not None and st.ppid > 1 and st.ppid not in out:
        out.add(st.ppid)
        st = procfs.proc_stat(st.ppid)
    return out
