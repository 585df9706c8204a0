"""--mode sample: classify timed perf samples of traced threads.

No uprobes and no syscall tracepoints: each on-CPU sample carries the user
IP, or, when it hit the kernel, the syscall in progress and its fd's file
kind, read from the task's saved user registers.  IPs are mapped through the
process's memory map (snapshotted while it runs) to a symbol of the object,
and the symbol to a component by name.  Blocked time is never sampled: the
off-CPU sums (offcpu.py) give it, by syscall, from sched_switch.
"""
from __future__ import annotations

import bisect
import os
import re
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from elftools.common.exceptions import ELFError

from collectors import records as R
from collectors import symbols
from collectors.attribution import SYNC_SYSCALLS, SYSCALLS, WRITE_SYSCALLS, syscall_name

# demangled-name fragments -> component (first match wins)
RULES: tuple[tuple[str, str], ...] = (
    ("crc32c", "crc"),
    ("WriteThread::AwaitState", "queue"),
    ("WriteThread::JoinBatchGroup", "queue"),
    ("WriteThread::", "queue"),
    ("log::Writer", "wal_append"),
    ("WriteToWAL", "wal_append"),
    ("WritableFileWriter", "wal_append"),
    ("MemTable", "memtable"),
    ("InlineSkipList", "memtable"),
    ("SkipList", "memtable"),
    ("InsertInto", "memtable"),
    ("sqlite3", "sql_exec"),          # SQLite's code, named or not
    ("[libsqlite3", "sql_exec"),
)


def classify_symbol(name: str) -> str:
    for frag, comp in RULES:
        if frag in name:
            return comp
    return "other"


@dataclass
class MapSnapshots:
    """Latest /proc/PID/maps of every pid seen, taken in the background."""
    pids: set[int] = field(default_factory=set)
    maps: dict[int, list[tuple[int, int, int, str]]] = field(default_factory=dict)
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
        self.pids.add(root_pid)

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


class Symbolizer:
    def __init__(self) -> None:
        self._tables: dict[str, tuple[list[int], list[int], list[str], int]] = {}

    def _table(self, path: str):
        if path not in self._tables:
            try:
                rows = symbols.symbol_ranges(path)
                bias = _load_bias(path)
            except (symbols.SymbolError, OSError, ELFError,
                    subprocess.SubprocessError):
                rows, bias = [], 0  # unreadable object: samples name it only
            self._tables[path] = ([r[0] for r in rows], [r[1] for r in rows],
                                  [r[2] for r in rows], bias)
        return self._tables[path]

    def name(self, maps: list[tuple[int, int, int, str]], ip: int) -> str:
        for lo, hi, off, path in maps:
            if lo <= ip < hi:
                starts, ends, names, bias = self._table(path)
                vaddr = ip - lo + off + bias
                i = bisect.bisect_right(starts, vaddr) - 1
                if i >= 0 and vaddr < ends[i]:
                    return names[i]
                return f"[{os.path.basename(path)}]"
        return "[unknown]"


def _load_bias(path: str) -> int:
    """vaddr - file offset of the first executable PT_LOAD (usually 0)."""
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        for seg in ELFFile(f).iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg["p_flags"] & 1:
                return seg["p_vaddr"] - seg["p_offset"]
    return 0


SYNC_NRS = {nr for nr, n in SYSCALLS.items() if n in SYNC_SYSCALLS}
WRITE_NRS = {nr for nr, n in SYSCALLS.items() if n in WRITE_SYSCALLS}


def syscall_component(nr: int, kind: str, engine: str = "rocksdb") -> str | None:
    """The engine's I/O component of a sample taken in a write or sync
    syscall on a file of that kind; None for any other syscall or file."""
    io = "sync" if nr in SYNC_NRS else "write" if nr in WRITE_NRS else None
    if io is None:
        return None
    if engine == "sqlite":
        if kind in ("journal", "wal"):
            return f"journal_{io}_io"
        if kind == "db":
            return f"db_{io}_io"
        return "dir_sync_io" if kind == "dir" and io == "sync" else None
    if kind == "wal" or (kind == "dir" and io == "sync"):
        return f"wal_{io}_io"
    return None


def samples_frame(run_dir: Path, maps: dict[int, list],
                  engine: str = "rocksdb") -> pd.DataFrame:
    s = R.read_records(run_dir, "ws_sample_rec")
    kinds = R.file_kinds()
    sym = Symbolizer()
    names, comps = [], []
    for pid, ip, nr, kind in zip(s["pid"], s["ip"], s["sys_nr"], s["sys_kind"]):
        comp = syscall_component(int(nr), kinds.get(int(kind), "other"), engine)
        if comp:
            names.append("[syscall]")
            comps.append(comp)
            continue
        if ip == 0:   # other syscalls (futex, yield), irqs, faults
            names.append(f"[{syscall_name(int(nr))}]" if nr >= 0 else "[kernel]")
            comps.append("kernel")
            continue
        n = sym.name(maps.get(int(pid), []), int(ip))
        names.append(n)
        comps.append(classify_symbol(n))
    return pd.DataFrame({
        "ts_ns": s["ts_ns"].astype(np.int64), "pid": s["pid"].astype(np.int64),
        "tid": s["tid"].astype(np.int64), "cpu": s["cpu"].astype(np.int32),
        "thread": [c.decode(errors="replace") for c in s["comm"]],
        "symbol": names, "component": comps,
        "in_write": s["in_write"].astype(bool),
        # the probed component current when the sample was taken
        "phase_comp": pd.Categorical.from_codes(
            np.minimum(s["comp"].astype(np.int64), len(PHASE_COMPS) - 1), PHASE_COMPS),
    })


PHASE_COMPS = R.rocksdb_components() + ["?"] if R.BTF_JSON.exists() else ["?"]


# a split's symbols where they are narrower than the component's RULES: a
# write's queue outside its futex waits and yields is the spin of a waiting
# writer (a leader's group bookkeeping in WriteThread:: is not queue)
SPLIT_SYMBOLS = {
    "queue": ("WriteThread::AwaitState", "WriteThread::JoinBatchGroup"),
    # what WriteBatchInternal::InsertInto runs (PerfContext's
    # write_memtable_time): the batch's iteration and its inserter, the
    # skip list, its comparator and arena; outside the WAL call, libc's
    # time in a write is the comparator's memcmp and the arena's memcpy
    "memtable": ("MemTable", "SkipList", "InsertInto", "WriteBatch::Iterate",
                 "WriteBatchInternal::Iterate", "MemTableInserter", "Arena",
                 "GetLengthPrefixedSlice", "[libc.so", "memcmp", "memcpy", "memmove",
                 # RocksDB's own functions it exports no name for, like the
                 # bytewise comparator (an anonymous namespace)
                 "[librocksdb.so"),
}


def split_fractions(samples: pd.DataFrame, split: dict[str, str],
                    min_samples: int = 20) -> dict[str, dict[str, float]]:
    """For each component measured by sampling inside its parent (crc inside
    wal_append, memtable inside other): the share of the parent's in-write
    samples whose symbol is the component's, with its binomial standard
    error."""
    out = {}
    for comp, parent in split.items():
        inside = samples[samples["in_write"] & (samples["phase_comp"] == parent)] \
            if len(samples) else samples
        n = int(len(inside))
        if comp in SPLIT_SYMBOLS and n:
            pat = "|".join(re.escape(x) for x in SPLIT_SYMBOLS[comp])
            k = int(inside["symbol"].str.contains(pat, regex=True).sum())
        else:
            k = int((inside["component"] == comp).sum()) if n else 0
        f = k / n if n >= min_samples else 0.0
        out[comp] = {"parent": parent, "samples": n, "hits": k, "fraction": f,
                     "stderr": float(np.sqrt(f * (1 - f) / n)) if n >= min_samples else 0.0,
                     "applied": n >= min_samples}
    return out


def breakdown(samples: pd.DataFrame, hz: int) -> dict[str, dict[str, float]]:
    """Per component: samples, share of samples, estimated on-CPU time."""
    if not len(samples):
        return {}
    # the write path runs on the threads that issue writes: the foreground
    # threads (not rocksdb:* background threads)
    fg = samples[~samples["thread"].str.startswith(R.BACKGROUND_PREFIX)]
    counts = fg["component"].value_counts()
    total = int(counts.sum())
    return {c: {"samples": int(n), "share": n / total,
                "est_cpu_ns": n / hz * 1e9} for c, n in counts.items()}
