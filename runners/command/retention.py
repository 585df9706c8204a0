"""walscope serve's tail-triggered retention: the slow writes kept whole,
in rotating run folders under a disk cap, while the collector's own
folder (the spool) is given back to the file system as it is read.

The feeder (runners/command/serve.py) hands every record it reads from
the spool to ``Retainer.add``, and each batch of rows (compensated, as
the analysis makes them) to ``Retainer.judge``.  A row at or over the
threshold (``--keep-slower``: a duration, or a quantile of the last
minute's rows such as p99.9) marks an interval: the write's own span and
CONTEXT_NS either side.  Once the records of that interval have all come
(LAG_NS after its end, on the records' own clock, CLOCK_MONOTONIC), every
record of every type that overlaps it is written to the open segment: the
slow write, the writes of its group and any other that ran beside it,
their syscalls and run-queue waits, samples and wall sweeps.  A segment is
a run folder (layout.json, calibration.json, run.json with a
"retained" block in its summary keys) that `walscope analyse`, `report`
and `query` read like any other.

Segments are closed (rotated) on SIGHUP, every ``rotate_s``, and when one
reaches an eighth of the disk cap; the oldest closed ones are removed
while the retained folders and the spool together pass ``--max-disk``.
The spool's record files are punched (fallocate PUNCH_HOLE) behind the
feeder: their size stays, their blocks go, and a punched record reads as
zeros, which every reader drops (no record type is 0).

Folders are made 0750 and files 0640, owned by root and, with --group,
that group: readable by root and the group, nobody else.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import datetime as dt
import errno
import json
import os
import re
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from runfolder import records as R
from runfolder.files import (ATTACH_FOUND_TSV, ATTACH_TSV, CALIBRATION_JSON, COLLECTOR_JSON,
                             COLLECTOR_LOG, FDS_JSON, LAYOUT_JSON, MAPS_JSON, OFFCPU_BIN,
                             RECORD_FILES, RUN_JSON, STACKS_BIN, SYMBOLS_JSON, RunFolder)

CONTEXT_NS = 1_000_000            # kept either side of a slow write
LAG_NS = 500_000_000              # an interval is written this long after its end ...
STALL_NS = 10 * LAG_NS            # ... on the records' clock, or this long on the wall's
RECENT_NS = 15_000_000_000        # records kept in memory: a 10 s write's context too
# the smallest --max-disk: the spool holds the records not read yet, a
# second's, ~1.5 MB at 3,300 pgbench transactions a second here
MIN_DISK = 16 << 20
WINDOW_NS = 60_000_000_000        # a quantile threshold's span: the last minute
SEGMENTS_PER_CAP = 8              # a segment is closed at an eighth of the cap
OPENS_KEPT = 20_000               # a life's opens kept for the folders' file names
PREFIX = "slow-"                  # a retained folder's name: slow-<UTC it opened>[-n]
DIR_MODE, FILE_MODE = 0o750, 0o640
# the record files a segment keeps (objects.bin, the tracer's, is not:
# the objects inspected are in run.json's report)
STRUCTS = tuple(RECORD_FILES)
# the spool's files a segment copies as they are when it opens, and again
# when it closes (symbols, maps and the maps the collector dumps at exit
# exist only once serve ends: the last segment has them)
STATIC = (LAYOUT_JSON, CALIBRATION_JSON, FDS_JSON, ATTACH_TSV, MAPS_JSON, SYMBOLS_JSON,
          COLLECTOR_LOG)
AT_END = (STACKS_BIN, OFFCPU_BIN)

_FALLOC_FL_KEEP_SIZE = 0x01
_FALLOC_FL_PUNCH_HOLE = 0x02
_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]


class RetentionError(ValueError):
    """A --keep-slower or --max-disk the user gave that means nothing: one line."""


def punch(path: Path, upto: int) -> None:
    """Give back the blocks of path's first upto bytes (the size stays;
    they read as zeros).  A file system without hole punching keeps them."""
    if upto <= 0:
        return
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        return
    try:
        _libc.fallocate(fd, _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE, 0, upto)
    finally:
        os.close(fd)


def allocated(path: Path) -> int:
    """Bytes a file or folder holds on disk (its blocks, not its size); a
    file gone meanwhile (the collector's counters.json.tmp, renamed each
    second) holds none."""
    try:
        st = path.stat()
    except OSError:
        return 0
    if not path.is_dir():
        return st.st_blocks * 512
    total = 0
    try:
        entries = list(os.scandir(path))
    except OSError:
        return 0
    for e in entries:
        try:
            total += allocated(Path(e.path)) if e.is_dir(follow_symlinks=False) else \
                e.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            pass
    return total


@dataclass(frozen=True)
class Threshold:
    """Which rows are slow: at or over a duration, or over a quantile of
    the last minute's rows (undefined, so nothing kept, until the minute
    holds 1 / (1 - q) of them)."""
    ns: float | None = None
    quantile: float | None = None

    @classmethod
    def parse(cls, text: str) -> "Threshold":
        t = text.strip().lower()
        if m := re.fullmatch(r"p(\d+(?:\.\d+)?)", t):
            q = float(m.group(1)) / 100
            if not 0 < q < 1:
                raise RetentionError(f"--keep-slower {text}: a quantile between p0 and p100 "
                                     "(e.g. p99.9)")
            return cls(quantile=q)
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(ns|us|ms|s)?", t)
        if not m:
            raise RetentionError(f"--keep-slower {text}: give a duration (5ms, 200us) or a "
                                 "quantile of the last minute (p99.9)")
        scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2) or "ms"]
        return cls(ns=float(m.group(1)) * scale)

    def text(self) -> str:
        if self.quantile is not None:
            return f"p{self.quantile * 100:g} of the last minute"
        return f"{(self.ns or 0) / 1e6:g} ms"


def parse_size(text: str) -> int:
    """--max-disk: bytes, or with a K, M, G or T suffix (powers of 1024)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?", text.strip().lower())
    size = int(float(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " ")) if m else 0
    if size < MIN_DISK:
        raise RetentionError(f"--max-disk {text}: give a size of at least 16M (500M, 2G)")
    return size


def spans(struct: str, recs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each record's [start, end] on CLOCK_MONOTONIC: a write's run, a
    syscall's, a run-queue wait's (stamped at its end); a point for the rest."""
    if struct == "ws_write_rec":
        a = recs["start_ns"].astype(np.int64)
        return a, a + recs["dur_ns"].astype(np.int64)
    ts = recs["ts_ns"].astype(np.int64)
    if struct == "ws_io_rec":
        return ts, ts + recs["lat_ns"].astype(np.int64)
    if struct == "ws_sched_rec":
        return ts - recs["dur_ns"].astype(np.int64), ts
    return ts, ts


WRITE_TRIES = 3          # steps a slow write's folder may fail before it is given up


def append_all(f: Any, data: bytes) -> None:
    """data appended to an unbuffered file whole, or not at all (a short
    write, a full disk, is cut back off and raised)."""
    pos = f.tell()
    try:
        n = f.write(data)
        if n != len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    except OSError:
        os.ftruncate(f.fileno(), pos)
        f.seek(pos)
        raise


@dataclass(eq=False)
class Segment:
    """One retained run folder being written."""
    dir: Path
    opened_utc: str
    files: dict[str, Any] = field(default_factory=dict)
    writes_kept: int = 0          # rows written (slow ones and those beside them)
    slow: int = 0                 # slow rows it was opened or kept for
    first_ns: int | None = None
    last_ns: int | None = None
    serial: int = 0               # which segment wrote a record (Retainer.marks)
    done: list[tuple[int, int]] = field(default_factory=list)   # intervals written
    failures: int = 0             # steps in a row whose write to it failed
    counters_at_open: list[int] = field(default_factory=list)    # the collector's


class Retainer:
    """The slow writes, kept whole in segments under out_dir; the spool
    punched behind the reader; the disk cap held.  Called from the feeder's
    thread only (rotate() may be asked from any: it is done there)."""

    def __init__(self, out_dir: Path, spool: Path, layout: R.Layout, keep: Threshold,
                 max_disk: int, rotate_s: float | None = None, gid: int | None = None,
                 mono_to_unix_ns: int = 0, rotate_on: threading.Event | None = None) -> None:
        self.out_dir, self.spool = out_dir, RunFolder(spool)
        self.layout, self.keep, self.max_disk = layout, keep, max_disk
        self.rotate_s, self.gid = rotate_s, gid
        self.mono_to_unix_ns = mono_to_unix_ns
        self.recent: dict[str, np.ndarray] = {
            s: np.zeros(0, dtype=layout.struct_dtype(s)) for s in STRUCTS}
        # beside each recent record, the serial of the last segment it went to
        self.marks: dict[str, np.ndarray] = {s: np.zeros(0, np.int64) for s in STRUCTS}
        self.serials = 0
        # the life's opens and unlinks (the newest OPENS_KEPT): a folder gets
        # all those before its end, so its syscalls' fds have their paths
        self.opens = np.zeros(0, dtype=layout.struct_dtype("ws_open_rec"))
        self.last_minute = np.zeros((0, 2), dtype=np.float64)   # (end_ns, dur_adj_ns)
        # slow rows' intervals, each with the segment its exemplar names
        self.pending: list[tuple[int, int, Segment]] = []
        self.segment: Segment | None = None      # the one slow rows go to now
        self.closing: list[Segment] = []          # rotated, intervals still to come
        # closed folders, oldest first: an earlier serve's too (they count
        # towards the cap), by when they were last written
        self.closed: list[Path] = sorted(
            (p for p in out_dir.iterdir() if p.is_dir() and p.name.startswith(PREFIX)),
            key=lambda p: p.stat().st_mtime)
        self.names = {p.name for p in self.closed}
        # a closed folder's blocks, taken once (they do not change after)
        self.sizes: dict[Path, int] = {p: allocated(p) for p in self.closed}
        self.removed = 0          # closed segments removed to hold the cap
        self.removed_names: list[str] = []   # ... by name, until the feeder takes them
        self.life_closed: list[Path] = []    # closed since the process was followed
        self.newest_ns = 0        # the records' clock: the latest moment read
        self.said_full = False
        self.lost = 0             # slow writes given up: their folder could not be written
        self._said: set[str] = set()
        self.slow = 0             # slow rows judged (each an interval kept)
        self._rotate = rotate_on or threading.Event()
        self._opened_at = time.monotonic()

    def follow(self, spool: Path, mono_to_unix_ns: int) -> None:
        """A process's spool, before its records come (the next one's after
        close(): a server restarted)."""
        self.spool, self.mono_to_unix_ns = RunFolder(spool), mono_to_unix_ns
        self.life_closed, self.newest_ns = [], 0
        self.opens = self.opens[:0]
        for s in STRUCTS:
            self.recent[s] = self.recent[s][:0]
            self.marks[s] = self.marks[s][:0]

    # -- what the feeder hands over ---------------------------------------
    def add(self, struct: str, recs: np.ndarray) -> None:
        """Records just read from the spool, kept in memory RECENT_NS."""
        if len(recs) and struct == "ws_open_rec":
            self.opens = np.concatenate([self.opens, recs],
                                        dtype=self.opens.dtype)[-OPENS_KEPT:]
        if len(recs):   # (dtype=: promotion would drop the struct's padding)
            self.newest_ns = max(self.newest_ns, int(spans(struct, recs)[1].max()))
            self.recent[struct] = np.concatenate([self.recent[struct], recs],
                                                 dtype=self.recent[struct].dtype)
            self.marks[struct] = np.concatenate([self.marks[struct],
                                                 np.zeros(len(recs), np.int64)])

    def judge(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Rows (analysis/writes.py's frame) just read: the slow ones, whose
        intervals will be kept, with the name exemplars give them
        ("<segment>/<tid>/<start_ns>") in a column "kept"."""
        none = rows.iloc[:0].assign(kept=pd.Series(dtype=object))
        if rows.empty:
            return none
        start = rows["start_ns"].to_numpy(np.int64)
        end = start + rows["dur_ns"].to_numpy(np.int64)
        adj = rows["dur_adj_ns"].to_numpy(np.float64)
        threshold = self.threshold_ns(end, adj)
        if threshold is None:
            return none
        slow = adj >= threshold
        if not slow.any():
            return none
        seg = self._open()
        kept = rows[slow].copy()
        kept["kept"] = [f"{seg.dir.name}/{int(t)}/{int(s)}"
                        for t, s in zip(kept["tid"], kept["start_ns"])]
        seg.slow += int(slow.sum())
        self.slow += int(slow.sum())
        self.pending += [(int(a) - CONTEXT_NS, int(b) + CONTEXT_NS, seg)
                         for a, b in zip(start[slow], end[slow])]
        return kept

    def threshold_ns(self, end: np.ndarray, adj: np.ndarray) -> float | None:
        if self.keep.ns is not None:
            return self.keep.ns
        q = self.keep.quantile or 0.999
        now = np.column_stack([end.astype(np.float64), adj])
        self.last_minute = np.concatenate([self.last_minute, now])
        newest = self.last_minute[:, 0].max()
        self.last_minute = self.last_minute[self.last_minute[:, 0] >= newest - WINDOW_NS]
        if len(self.last_minute) < 1 / (1 - q):
            return None
        return float(np.quantile(self.last_minute[:, 1], q))

    def rotate(self) -> None:
        """Close the open segment at the next step (SIGHUP)."""
        self._rotate.set()

    # -- writing ----------------------------------------------------------
    def step(self, read_to: dict[str, int], now_ns: int | None = None,
             final: bool = False, hold: bool = True) -> None:
        """After a read: the intervals whose records have all come written
        (LAG_NS after their end on the records' own clock, the latest moment
        read: a collector that falls behind delays them; STALL_NS on the
        wall's, should the records stop), old records dropped, the spool
        punched up to where it was read (read_to: struct -> offset), the
        segment rotated if due, and (hold) the cap held."""
        now_ns = time.monotonic_ns() if now_ns is None else now_ns
        seen = max(self.newest_ns, now_ns - STALL_NS)

        def is_ready(iv: tuple[int, int, Segment]) -> bool:
            return final or iv[1] + LAG_NS <= seen
        ready = [iv for iv in self.pending if is_ready(iv)]
        for seg in {id(iv[2]): iv[2] for iv in ready}.values():
            mine = [iv for iv in ready if iv[2] is seg]
            try:
                self._write(seg, merge([(a, b) for a, b, _ in mine]))
                seg.failures = 0        # (steps failed in a row)
            except OSError as e:
                # pending until written: a full disk leaves them for the
                # next step (the cap, held below, may make room), WRITE_TRIES
                # times; the rest of the step goes on
                seg.failures += 1
                self._say(f"cannot write {seg.dir.name}: {e.strerror or e}")
                if seg.failures < WRITE_TRIES:
                    continue
                self.lost += len(mine)
            done = {id(iv) for iv in mine}
            self.pending = [iv for iv in self.pending if id(iv) not in done]
        # records that came after their interval was written (a syscall that
        # ended long after the write): added while the folder is open
        for seg in (self.segment, *self.closing):
            if seg is not None and seg.done:
                seg.done = [iv for iv in seg.done if iv[1] >= seen - RECENT_NS]
                if seg.done:
                    try:
                        self._write(seg, seg.done)
                    except OSError as e:
                        self._say(f"cannot write {seg.dir.name}: {e.strerror or e}")
        oldest = min([a for a, _, _ in self.pending], default=seen - LAG_NS) - RECENT_NS
        for s, recs in self.recent.items():
            if len(recs):
                young = spans(s, recs)[1] >= oldest
                self.recent[s], self.marks[s] = recs[young], self.marks[s][young]
        for s, off in read_to.items():
            punch(self.spool.records(s), off)
        seg = self.segment
        due = self._rotate.is_set() or final or (
            self.rotate_s is not None and time.monotonic() - self._opened_at >= self.rotate_s)
        if seg is not None and (due or allocated(seg.dir) * SEGMENTS_PER_CAP >= self.max_disk):
            self.closing.append(seg)
            self.segment = None
        if due:
            self._rotate.clear()
            self._opened_at = time.monotonic()
        waiting = {id(s) for _, _, s in self.pending}
        for seg in [c for c in self.closing if id(c) not in waiting]:
            self.closing.remove(seg)
            self._close(seg, at_end=final)
        if hold:
            self.hold_cap()

    def _write(self, seg: Segment, intervals: list[tuple[int, int]]) -> None:
        """Every record overlapping the intervals, once per segment (the
        opens: all of the life's, when it closes)."""
        for s in STRUCTS:
            if s == "ws_open_rec":
                continue
            recs = self.recent[s]
            if not len(recs):
                continue
            a, b = spans(s, recs)
            keep = np.zeros(len(recs), dtype=bool)
            for lo, hi in intervals:
                keep |= (b >= lo) & (a <= hi)
            keep &= self.marks[s] != seg.serial   # not twice in one folder
            if not keep.any():
                continue
            got = recs[keep]
            assert got.dtype.itemsize == self.layout.struct_dtype(s).itemsize
            append_all(seg.files[s], got.tobytes())
            self.marks[s][keep] = seg.serial    # (once written)
            if s == "ws_write_rec":
                seg.writes_kept += len(got)
        lo, hi = intervals[0][0], intervals[-1][1]
        seg.first_ns = lo if seg.first_ns is None else min(seg.first_ns, lo)
        seg.last_ns = hi if seg.last_ns is None else max(seg.last_ns, hi)
        seg.done = merge(seg.done + intervals)

    def _say(self, what: str) -> None:
        """A problem said once (a full disk says it at every step)."""
        if what not in self._said:
            self._said.add(what)
            print(f"walscope serve: {what}", file=sys.stderr, flush=True)

    def _open(self) -> Segment:
        if self.segment is not None:
            return self.segment
        now = dt.datetime.now(dt.timezone.utc)
        stamp = now.strftime(PREFIX + "%Y%m%dT%H%M%SZ")
        name, n = stamp, 1
        while name in self.names or (self.out_dir / name).exists():   # never a name again
            n += 1
            name = f"{stamp}-{n}"
        self.names.add(name)
        d = self.out_dir / name
        d.mkdir(mode=DIR_MODE)
        self.own(d, DIR_MODE)
        self.serials += 1
        seg = Segment(d, now.isoformat(), serial=self.serials,
                      counters_at_open=list(self.spool.live_counters().get("counters", [])))
        for s in STRUCTS:
            path = d / RunFolder(d).records(s).name
            seg.files[s] = open(path, "wb", buffering=0)   # (append_all: whole or none)
            self.own(path, FILE_MODE)
        self._copy(d, STATIC)
        self._run_json(seg, closed=False)   # a serve that dies leaves this one
        self.segment = seg
        self._opened_at = time.monotonic()
        return seg

    def _close(self, seg: Segment, at_end: bool = False) -> None:
        end = seg.last_ns if seg.last_ns is not None else 0
        opens = self.opens[self.opens["ts_ns"] <= end]
        append_all(seg.files["ws_open_rec"], opens.tobytes())
        for f in seg.files.values():
            f.close()
        self._copy(seg.dir, STATIC + (AT_END if at_end else ()))
        self._collector_json(seg)
        self._run_json(seg)
        self.closed.append(seg.dir)
        self.life_closed.append(seg.dir)
        self.sizes[seg.dir] = allocated(seg.dir)

    def close(self) -> None:
        """Once the traced process's collector has stopped (its maps dumped,
        the processes' maps saved in the spool): everything pending written,
        the open segments closed with them.  The cap is the caller's to hold
        once the spool is gone."""
        self.step({}, final=True, hold=False)

    def _copy(self, d: Path, names: tuple[str, ...]) -> None:
        for name in names:
            src = self.spool.dir / name
            if src.exists():
                shutil.copyfile(src, d / name)
                self.own(d / name, FILE_MODE)
        for src in self.spool.dir.glob(ATTACH_FOUND_TSV):
            shutil.copyfile(src, d / src.name)
            self.own(d / src.name, FILE_MODE)

    def _run_json(self, seg: Segment, closed: bool = True) -> None:
        """The spool's run.json, with what the segment holds in its summary
        keys (summary.json's "retained"), and when it closed."""
        try:
            info = json.loads(self.spool.run_json.read_text())
        except (OSError, ValueError):
            info = {"summary": {}}
        info["window"] = None       # the windows are the spool's, not the segment's
        info["summary"]["retained"] = {
            "threshold": self.keep.text(),
            "slow_writes": seg.slow,
            "writes_kept": seg.writes_kept,
            "context_ns": CONTEXT_NS,
            "opened_utc": seg.opened_utc,
            "first_ns": seg.first_ns, "last_ns": seg.last_ns,
            "first_utc": utc(seg.first_ns, self.mono_to_unix_ns),
            "last_utc": utc(seg.last_ns, self.mono_to_unix_ns),
        }
        info.pop("end", None)
        if closed:
            info["end"] = dt.datetime.now(dt.timezone.utc).isoformat()
        path, tmp = seg.dir / RUN_JSON, seg.dir / f".{RUN_JSON}.tmp"
        tmp.write_text(json.dumps(info, indent=1) + "\n")
        self.own(tmp, FILE_MODE)
        tmp.replace(path)       # whole, for a reader while serve runs

    def _collector_json(self, seg: Segment) -> None:
        """The collector's report for the segment: the records it holds,
        and the events the collector lost while it was open (the other
        counters are the whole run's: zero here, not the segment's)."""
        names = self.layout.counter_names()
        now = list(self.spool.live_counters().get("counters", []))
        was = seg.counters_at_open + [0] * len(names)
        counters = [max(int(n) - int(w), 0) if name.startswith("lost_") else 0
                    for name, n, w in zip(names, now + [0] * len(names), was)]
        report = {
            "counters": counters,
            "records": {RunFolder(seg.dir).records(s).name:
                        RunFolder(seg.dir).records(s).stat().st_size
                        // self.layout.struct_dtype(s).itemsize for s in STRUCTS},
            "bad_records": 0, "write_error": 0, "poll_error": 0,
            "retained_by": "walscope serve",
        }
        path = seg.dir / COLLECTOR_JSON
        path.write_text(json.dumps(report, indent=1) + "\n")
        self.own(path, FILE_MODE)

    def own(self, path: Path, mode: int) -> None:
        os.chmod(path, mode)
        if self.gid is not None:
            os.chown(path, -1, self.gid)

    # -- the cap ----------------------------------------------------------
    def used(self) -> int:
        """Bytes on disk: the spool and every retained folder."""
        open_ = [s.dir for s in (self.segment, *self.closing) if s is not None]
        return allocated(self.spool.dir) + sum(self.sizes.values()) + sum(
            allocated(p) for p in open_)

    def hold_cap(self) -> None:
        """The oldest closed segments removed while over the cap."""
        while self.closed and self.used() > self.max_disk:
            gone = self.closed.pop(0)
            shutil.rmtree(gone, ignore_errors=True)
            self.sizes.pop(gone, None)
            self.removed += 1
            self.removed_names.append(gone.name)
        if not self.closed and not self.said_full and self.used() > self.max_disk:
            self.said_full = True
            print(f"walscope serve: {self.used() / 2**20:.1f} MiB in {self.out_dir} with no "
                  "retained folder left to remove: the spool and the open folders alone pass "
                  "--max-disk", file=sys.stderr, flush=True)


def merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def utc(mono_ns: int | None, mono_to_unix_ns: int) -> str | None:
    if mono_ns is None or not mono_to_unix_ns:
        return None
    return dt.datetime.fromtimestamp((mono_ns + mono_to_unix_ns) / 1e9,
                                     dt.timezone.utc).isoformat()
