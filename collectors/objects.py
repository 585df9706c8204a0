"""Find every engine walscope knows (engines/) in every object the traced
processes run.

At start, the objects the command (or -p PID) will run are inspected from
the files themselves.  While the run goes on, the BPF side stops a traced
process where it meets objects walscope may not have seen, and the
collector says so ("obj ..."):
- an exec of a file no traced process has run (always: a tracepoint that
  fires only on exec);
- the dynamic loader's hook after dlopen() mapped objects (always: a
  uprobe that fires only on dlopen(), collectors/loader.py);
- an executable mapping of a new file (only where the syscall tracepoints
  are attached: --mode full, and inside windows).
The objects are read through /proc/PID/map_files or /proc/PID/exe (so a
file in another mount namespace, or one deleted since, is the file the
process has), their probes are attached, and only then is the process
continued: nothing in an object has run before its probes are in.  An
object is inspected once (by device and inode): uprobes are per inode, so
they cover every process that maps it later.  An object an earlier run
rejected, unchanged since, is not read again (collectors/object_cache.py).
"""
from __future__ import annotations

import os
import queue
import re
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

import engines
from collectors import loader, log_syncs, procfs
from collectors.loader import kernel_dev, lasting_path
from collectors.attach_lines import resolution_lines, stepped_components
from collectors.symbols import resolver_module
from probepoints.elf import sections, symbols_read
from probepoints.points import Resolution
from probepoints import modes
from collectors.object_cache import ObjectCache, Verdict, stat_of
from runfolder.files import RunFolder
from collectors.session import Collector, SessionError

@dataclass
class ObjectInfo:
    """One inspected object, as summary.json's objects list has it."""
    path: str                   # as the process names it
    how: str                    # start (before the run), exec, mmap, dlopen or
    #                             found (a process serve --all met)
    pid: int | None = None
    build_id: str | None = None
    symbols: str | None = None  # .symtab (a full table) or .dynsym (exports only)
    engine: str | None = None   # an engines.NAMES name, or None (rejected)
    version: str | None = None
    probes: int = 0             # uprobes attached in it
    failed: int = 0             # ... that could not be
    why: str | None = None      # why it was rejected or is degraded
    seen_ns: int | None = None  # ns after the run started, for mmap/exec
    attached_ns: int | None = None
    held_ns: int | None = None  # how long its process was stopped
    cached: bool = False        # the rejection an earlier run read, not read again


def build_id(elf: ELFFile) -> str | None:
    for sec in sections(elf):
        if sec["sh_type"] != "SHT_NOTE":
            continue
        for note in sec.iter_notes():
            if note["n_type"] == "NT_GNU_BUILD_ID":
                return str(note["n_desc"])
    return None


def _elf_facts(path: str) -> tuple[str | None, bool, str | None]:
    """(build id, has a symbol table, why it is unreadable)."""
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            has_symtab = any(s.name == ".symtab" for s in sections(elf))
            return build_id(elf), has_symtab, None
    except (OSError, ELFError) as e:
        return None, False, f"not a readable ELF object ({e})"


def _marked_engine(path: str) -> str | None:
    """An engine whose strings the object holds (for a rejection's why)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    return next((e.title for e in engines.ENGINES if e.mark and e.mark in data), None)


def inspect(read_path: str, shown_path: str, mode: modes.Mode, keep_stepped: bool
            ) -> tuple[ObjectInfo, Resolution | None]:
    """The engine in one object and the probe points mode attaches (read
    through read_path, named shown_path), or why there is none."""
    info = ObjectInfo(path=shown_path, how="start")
    info.build_id, has_symtab, unreadable = _elf_facts(read_path)
    if unreadable:
        info.why = unreadable
        return info, None
    info.symbols = ".symtab" if has_symtab else ".dynsym"
    for engine in engines.ENGINES:
        unit = resolver_module(engine)
        res = unit.resolve([read_path], mode, keep_stepped=keep_stepped)
        if res.object_path is not None:
            break
    else:
        marked = _marked_engine(read_path)
        info.why = (f"holds {marked} but none of its functions are named: stripped"
                    if marked else f"no {engines.titles()} functions")
        return info, None
    info.engine = res.engine
    if res.syscall_rows:   # found unnamed: say so, and what it gives instead
        info.why = res.notes[0] if res.notes else ""
    version_of = getattr(unit, "version_of", None)
    info.version = version_of(shown_path, read_path) if version_of else res.version
    if res.missing:
        info.why = "probe points missing: " + ", ".join(res.missing)
    return info, res


@dataclass
class Event:
    """A collector "obj" line."""
    pid: int
    tid: int
    how: str
    dev: int
    ino: int
    addr: int
    length: int
    stopped: bool
    ts_ns: int
    name: str

    @staticmethod
    def parse(line: str) -> "Event":
        f = line.split(" ", 10)
        return Event(int(f[1]), int(f[2]), f[3], int(f[4]), int(f[5]), int(f[6]),
                     int(f[7]), f[8] == "1", int(f[9]), f[10] if len(f) > 10 else "?")


def shown_path(read: str) -> str:
    """The path a process names an object by, for one read through
    /proc/PID/map_files (another mount namespace's file, or one deleted
    since); other paths are their own."""
    if read.startswith("/proc/") and "/map_files/" in read:
        try:
            return os.readlink(read).removesuffix(" (deleted)")
        except OSError:
            pass
    return read


def _mapping_of(pid: int, addr: int) -> tuple[str, str] | None:
    """(/proc/PID/map_files/RANGE, the path the process shows) of the
    mapping that holds addr."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                if lo <= addr < hi and len(parts) == 6:
                    return (f"/proc/{pid}/map_files/{parts[0]}",
                            parts[5].strip().removesuffix(" (deleted)"))
    except (OSError, ValueError):
        pass
    return None


@dataclass
class ObjectFollower:
    """The objects of a run: inspected at start, and as processes meet them."""
    mode: modes.Mode
    keep_stepped: bool
    run_dir: Path
    t0_ns: int = field(default_factory=time.monotonic_ns)
    objects: list[ObjectInfo] = field(default_factory=list)
    found: list[Resolution] = field(default_factory=list)
    _seen: dict[tuple[int, int], ObjectInfo] = field(default_factory=dict)
    _queue: "queue.Queue[str | None]" = field(default_factory=queue.Queue)
    stepped: set[str] = field(default_factory=set)   # components with stepped sites
    # libc's syncs are probed (collectors/log_syncs.py): every log sync counted
    counts_log_syncs: bool = False
    _thread: threading.Thread | None = None
    _collector: Collector | None = None
    _attaches: int = 0
    # objects met at one stop (keyed by its stamp), until it is continued
    _met: dict[int, list[ObjectInfo]] = field(default_factory=dict)
    # where the earlier runs' rejections are kept (object_cache.CACHE_DIR);
    # None: none kept, as where objects are not followed
    cache_dir: Path | None = None
    _cache: ObjectCache | None = None
    # one inspection at a time: the collector's events (this follower's
    # thread) and the processes serve --all finds (its caller's)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        if self.cache_dir is not None and self.mode.follows_objects:
            self._cache = ObjectCache(self.mode.name, self.keep_stepped, self.cache_dir)

    @property
    def cache_hits(self) -> int:
        return self._cache.hits if self._cache else 0

    @property
    def cache_path(self) -> Path | None:
        return self._cache.path if self._cache else None

    def inspect_start(self, paths: list[str]) -> list[str]:
        """The command's (or -p PID's) own objects, before the run: returns
        the attach lines for those that hold an engine."""
        lines: list[str] = []
        for p in paths:
            try:
                st = os.stat(p)
            except OSError:
                continue
            key = (kernel_dev(st.st_dev), st.st_ino)
            if key in self._seen:
                continue
            info, res, hooks = self._inspect_or_recall(p, shown_path(p))
            self._keep(key, info, res)
            if res is not None:
                lines += resolution_lines(res)
                info.probes = len(res.probes) * 2 - sum(1 for r in res.probes
                                                        if not r.spec.ret)
            lines += hooks
        return lines

    def from_log_files(self, program: str) -> list[str]:
        """No engine found at start, and the user named its log
        (--log-file): the unit that makes rows of a log's syscalls turns on
        for the program; its attach lines (none in a mode without
        syscalls)."""
        unit = next(e for e in engines.ENGINES if e.log_files)
        res = Resolution(engine=unit.name, object_path=program,
                         syscall_rows=self.mode.syscalls)
        res.notes.append(
            "no engine found: its commits come from the logs --log-file names, from "
            "their syscalls alone (no CPU split)" if self.mode.syscalls else
            "no engine found, and this mode traces no syscall: nothing of the logs "
            "--log-file names")
        self.found.append(res)
        return resolution_lines(res)

    def _inspect_or_recall(self, read: str, shown: str
                           ) -> tuple[ObjectInfo, Resolution | None, list[str]]:
        """inspect() and the loader hook's line, or the rejection an earlier
        run kept for this file; a new rejection with nothing to attach, read
        whole, is kept."""
        if self._cache is None:
            return (*inspect(read, shown, self.mode, self.keep_stepped),
                    self._hook_lines(read))
        kept = self._cache.lookup(read)
        if kept is not None:
            return ObjectInfo(path=shown, how="start", build_id=kept.build_id,
                              symbols=kept.symbols, why=kept.why, cached=True), None, \
                self._hook_lines(read)
        before = stat_of(read)
        info, res = inspect(read, shown, self.mode, self.keep_stepped)
        hooks = self._hook_lines(read)
        if res is None and info.symbols and info.why and symbols_read(read):
            self._cache.add(read, before, Verdict(info.build_id, info.symbols, info.why))
        return info, res, hooks

    def save_cache(self) -> None:
        """Keep this run's rejections for the next (after the collector
        has stopped: off the traced run's time)."""
        if self._cache is not None:
            self._cache.save()

    def _hook_lines(self, read_path: str) -> list[str]:
        """The loader hook's attach line, if read_path is a dynamic loader
        and objects are followed in this mode; libc's sync functions', if
        it is a libc and the mode attaches uprobes (collectors/log_syncs.py:
        every log sync counted).
        Read again for an object the cache recalls: the cache keeps only
        that no engine is in it."""
        lines = log_syncs.sync_lines(read_path) if self.mode.probe_set else []
        if lines:
            self.counts_log_syncs = True
        if not self.mode.follows_objects:
            return lines
        line = loader.hook_line(read_path)
        return lines + ([line] if line else [])

    def _keep(self, key: tuple[int, int], info: ObjectInfo,
              res: Resolution | None) -> None:
        self._seen[key] = info
        self.objects.append(info)
        if res is not None:
            self.found.append(res)
            # read now: a /proc/PID/map_files path lasts as long as its process
            self.stepped |= stepped_components(res.probes)

    def follow(self, collector: Collector) -> None:
        """Tell the collector what was inspected already, then handle its
        events in a thread of our own (a handler waits for replies)."""
        self._collector = collector
        for dev, ino in self._seen:
            collector.command(f"seen {dev} {ino}")
        self._thread = threading.Thread(target=self._work, daemon=True)
        self._thread.start()

    def on_object(self, line: str) -> None:
        """The collector's reader thread hands each "obj" line here."""
        self._queue.put(line)

    def close(self, timeout: float = 60) -> None:
        """Handle what is queued (every stopped process is continued)."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout)

    def _work(self) -> None:
        while (line := self._queue.get()) is not None:
            try:
                self._handle(Event.parse(line))
            except (ValueError, IndexError) as e:
                print(f"walscope: bad object event {line!r}: {e}", file=sys.stderr)
            except Exception as e:   # noqa: BLE001 (the next event's process waits)
                print(f"walscope: object event {line!r}: {type(e).__name__}: {e}",
                      file=sys.stderr)

    def _handle(self, ev: Event) -> None:
        assert self._collector is not None
        try:
            with self._lock:
                self._inspect_event(ev)
        finally:
            if ev.stopped:   # never leave it stopped, whatever happened
                try:
                    reply = self._collector.command(f"cont {ev.pid}")
                except SessionError as e:
                    reply = f"err {e}"
                held = time.monotonic_ns() - ev.ts_ns
                for info in self._met.pop(ev.ts_ns, []):
                    info.held_ns = held
                if not reply.startswith("ok") and "No such process" not in reply:
                    print(f"walscope: could not continue pid {ev.pid}: {reply}",
                          file=sys.stderr)
                self._continue_parent(ev.pid)

    def _continue_parent(self, pid: int) -> None:
        """A parent that stopped itself because its child was held (su,
        runuser) goes on too; it then continues the child itself."""
        ppid = procfs.stopped_parent(pid)
        if ppid is not None:
            try:
                os.kill(ppid, signal.SIGCONT)
            except OSError:
                pass

    def _inspect_event(self, ev: Event) -> None:
        if ev.how == "loader":
            self._scan_maps(ev)
            return
        if (ev.dev, ev.ino) not in self._seen:
            self._inspect_file(ev)
        if ev.how == "exec":   # and its loader, which the kernel mapped with it
            self._scan_maps(ev)

    def _scan_maps(self, ev: Event) -> None:
        """Every executable object the stopped process maps and walscope has
        not seen: inspected, its probes attached, and the BPF side told."""
        assert self._collector is not None
        for m in loader.exec_mappings(ev.pid):
            if (m.dev, m.ino) in self._seen:
                continue
            self._inspect_one(m.read_path(ev.pid), m.path, "dlopen", ev, (m.dev, m.ino))
            self._collector.command(f"seen {m.dev} {m.ino}")

    def inspect_process(self, pid: int) -> bool:
        """A process met while the run goes (serve --all): every executable
        object it maps that walscope has not seen, inspected and its probes
        attached (the process is not stopped: it is not traced yet).
        True when one of its objects holds an engine."""
        assert self._collector is not None
        with self._lock:
            ev = Event(pid, pid, "found", 0, 0, 0, 0, False, time.monotonic_ns(), "")
            for m in loader.exec_mappings(pid):
                if (m.dev, m.ino) not in self._seen:
                    self._inspect_one(m.read_path(pid), m.path, "found", ev, (m.dev, m.ino))
                    self._collector.command(f"seen {m.dev} {m.ino}")
            self._met.pop(ev.ts_ns, None)
        return self.holds_engine(pid)

    def holds_engine(self, pid: int) -> bool:
        """Whether a process maps an object inspected and found to hold an
        engine."""
        with self._lock:
            return any((info := self._seen.get((m.dev, m.ino))) is not None and
                       info.engine is not None for m in loader.exec_mappings(pid))

    def _inspect_file(self, ev: Event) -> None:
        if ev.how == "exec":
            read = f"/proc/{ev.pid}/exe"
            try:
                shown = os.readlink(read)
            except OSError:
                shown = ev.name
        else:
            where = _mapping_of(ev.pid, ev.addr)
            if where is None:   # unmapped meanwhile, or the process is gone
                self._keep((ev.dev, ev.ino), ObjectInfo(
                    path=ev.name, how=ev.how, pid=ev.pid, why="gone before it was read",
                    seen_ns=ev.ts_ns - self.t0_ns), None)
                return
            read, shown = where
        self._inspect_one(read, shown, ev.how, ev, (ev.dev, ev.ino))

    def _inspect_one(self, read: str, shown: str, how: str, ev: Event,
                     key: tuple[int, int]) -> None:
        info, res, hooks = self._inspect_or_recall(lasting_path(read, shown, key), shown)
        info.how, info.pid, info.seen_ns = how, ev.pid, ev.ts_ns - self.t0_ns
        self._keep(key, info, res)
        self._met.setdefault(ev.ts_ns, []).append(info)
        lines = (resolution_lines(res) if res is not None else []) + hooks
        if not lines:
            return
        assert self._collector is not None
        self._attaches += 1
        tsv = RunFolder(self.run_dir).attach_found(self._attaches)
        tsv.write_text("".join(line + "\n" for line in lines))
        reply = self._collector.command(f"attach {tsv}", timeout=120)
        m = re.fullmatch(r"ok attach (\d+) (\d+)", reply)
        if m:   # the loader hook is not one of the object's probes
            info.probes = max(int(m.group(1)) - len(hooks), 0)
            info.failed = int(m.group(2))
        else:
            info.why = f"attach failed: {reply}"
        info.attached_ns = time.monotonic_ns() - self.t0_ns

    def report(self) -> list[dict[str, Any]]:
        return [asdict(o) for o in self.objects]

    def engines(self) -> list[str]:
        """Engines found, in the order they were (RocksDB first at start)."""
        return list(dict.fromkeys(r.engine for r in self.found))

    def merged(self) -> Resolution:
        """What was found, as one Resolution: the first object of the
        engine earliest in the registry (engines.ENGINES: RocksDB first)
        names the run's engine and library; probes, missing points, notes
        and sampled splits of every object together."""
        if not self.found:
            return Resolution(objects_checked=[o.path for o in self.objects],
                              engine=engines.UNNAMED)
        main = min(self.found, key=lambda r: engines.NAMES.index(r.engine))
        out = Resolution(
            objects_checked=[o.path for o in self.objects], object_path=main.object_path,
            version=main.version, engine=main.engine,
            groups_unprobed=any(r.groups_unprobed for r in self.found))
        for r in self.found:
            out.probes += r.probes
            out.missing += [m for m in r.missing if m not in out.missing]
            out.notes += [n for n in r.notes if n not in out.notes]
            out.sampled_split.update(r.sampled_split)
        first = next((o for o in self.objects if o.engine == main.engine), None)
        if first is not None:   # the path as the process named it
            out.object_path, out.version = first.path, first.version
        return out
