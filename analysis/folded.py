"""Folded stacks (FlameGraph's `frame;frame count` format) from a run folder:
the *.folded files viz/flamegraph.py renders.

phase:   stacks synthesised from walscope's own phase nesting, weighted by
         compensated microseconds: exact, needs no unwinding.
offcpu:  run-queue waits of traced threads (from sched.parquet) and blocked
         syscall time (io.parquet), per thread name, in microseconds.
oncpu:   --mode sample samples, by thread, component and symbol.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from analysis.columns import ParquetColumns
from analysis.components import QUEUE_PARTS

# writes.parquet columns the phase stacks read (with every *_adj_ns)
PHASE_COLUMNS = ("leader", "explicit", "txn_type", "queue_ns") + tuple(
    f"{p}_ns" for p in QUEUE_PARTS)

# component -> frames under WriteImpl, the way the attribution sees them
PHASE_FRAMES: dict[str, tuple[str, ...]] = {
    "other": (),
    "queue_behind_sync": ("JoinBatchGroup", "[behind leader sync]"),
    "queue_behind_wal_write": ("JoinBatchGroup", "[behind leader WAL write]"),
    "queue_other": ("JoinBatchGroup", "[waiting]"),
    "crc": ("WriteToWAL", "AddRecord", "crc32c"),
    "wal_append": ("WriteToWAL", "AddRecord"),
    "wal_write_io": ("WriteToWAL", "write", "[kernel]"),
    "wal_sync_io": ("WriteToWAL", "fdatasync", "[blocked]"),
    "memtable": ("InsertInto",),
    "sched_runq": ("[runnable]",),
}


# component -> frames under a SQLite transaction
SQLITE_FRAMES: dict[str, tuple[str, ...]] = {
    "other": ("[application]",),
    "sql_exec": ("sqlite3_step",),
    "journal_write_io": ("sqlite3_step", "write", "[journal]"),
    "journal_sync_io": ("sqlite3_step", "fdatasync", "[journal]"),
    "db_write_io": ("sqlite3_step", "write", "[db]"),
    "db_sync_io": ("sqlite3_step", "fdatasync", "[db]"),
    "dir_sync_io": ("sqlite3_step", "fsync", "[directory]"),
    "journal_lifecycle": ("sqlite3_step", "open/unlink/truncate", "[journal]"),
    "checkpoint": ("sqlite3_step", "sqlite3WalCheckpoint"),
    "lock_wait": ("sqlite3_step", "[locks and busy waits]"),
    "sched_runq": ("[runnable]",),
}


def clean_frame(frame: str) -> str:
    return frame.replace(";", ":").replace(" ", "_") or "[unknown]"


def fold(counter: Counter) -> str:
    """Canonical text: sorted lines `a;b;c N`, zero counts dropped."""
    return "".join(f"{k} {v}\n" for k, v in sorted(counter.items()) if v > 0)


def phase_stacks(writes: pd.DataFrame, root: str = "command") -> Counter:
    """Microseconds per phase path; the queue split is a leaf of queue."""
    return rounded(phase_us(writes, root))


def rounded(c: Counter) -> Counter:
    return Counter({k: int(round(v)) for k, v in c.items()})


def phase_us(writes: pd.DataFrame, root: str = "command") -> Counter:
    """phase_stacks before rounding: sums of batches add up exactly."""
    out: Counter = Counter()
    if not len(writes):
        return out
    if "sql_exec_adj_ns" in writes or "sql_exec_ns" in writes:
        return sqlite_phase_us(writes, root)
    adj = writes.get("queue_adj_ns", writes["queue_ns"])
    raw_q = writes["queue_ns"].where(writes["queue_ns"] > 0, 1)
    scale = adj / raw_q  # compensate the queue split like queue itself
    for lead, part in ((True, "leader"), (False, "follower")):
        w = writes[writes["leader"] == lead]
        if not len(w):
            continue
        sc = scale[w.index]
        base = (clean_frame(root), "WriteImpl", f"[{part}]")
        for comp, frames in PHASE_FRAMES.items():
            if comp.startswith("queue_"):
                us = float((w[f"{comp}_ns"] * sc).sum()) / 1e3
            else:
                col = f"{comp}_adj_ns" if f"{comp}_adj_ns" in w else f"{comp}_ns"
                us = float(w[col].sum()) / 1e3
            out[";".join(base + frames)] += us
    return out


def sqlite_phase_us(writes: pd.DataFrame, root: str) -> Counter:
    """Per transaction type (the workload's label) or commit style."""
    out: Counter = Counter()
    if "txn_type" in writes and (writes["txn_type"] != "").any():
        label = writes["txn_type"].where(writes["txn_type"] != "", "[unlabelled]")
    else:
        label = writes["explicit"].map({True: "BEGIN..COMMIT", False: "autocommit"})
    for name, w in writes.groupby(label):
        base = (clean_frame(root), "transaction", clean_frame(str(name)))
        for comp, frames in SQLITE_FRAMES.items():
            col = f"{comp}_adj_ns" if f"{comp}_adj_ns" in w else f"{comp}_ns"
            out[";".join(base + frames)] += float(w[col].sum()) / 1e3
    return out


def offcpu_stacks(sched: pd.DataFrame, io: pd.DataFrame) -> Counter:
    out: Counter = Counter()
    if len(sched):
        out.update(rounded(runnable_us(sched)))
    if len(io):
        out.update(rounded(blocked_us(io)))
    return out


def runnable_us(sched: pd.DataFrame) -> Counter:
    """Microseconds runnable but waiting for a CPU, per thread and cause."""
    out: Counter = Counter()
    rq = sched[sched["event"] == "runq"]
    for (thread, pre), d in rq.groupby(["thread", "preempted"], observed=True):
        why = "[preempted]" if pre else "[wakeup delay]"
        out[f"{clean_frame(str(thread))};[runnable];{why}"] += float(d["dur_ns"].sum()) / 1e3
    return out


def blocked_us(io: pd.DataFrame) -> Counter:
    """Microseconds blocked in traced syscalls, per thread, syscall, file kind."""
    out: Counter = Counter()
    for (thread, sc, kind), d in io.groupby(["thread", "syscall", "kind"], observed=True):
        out[f"{clean_frame(thread)};[blocked];{clean_frame(str(sc))};{clean_frame(str(kind))}"] += \
            float(d["lat_ns"].sum()) / 1e3
    return out


def oncpu_stacks(samples: pd.DataFrame) -> Counter:
    out: Counter = Counter()
    if not len(samples):
        return out
    for (thread, comp, sym), n in samples.groupby(
            ["thread", "component", "symbol"], observed=True).size().items():
        short = sym.split("(")[0]
        out[f"{clean_frame(thread)};{comp};{clean_frame(short)}"] += int(n)
    return out


def write_folded(run_dir: Path, root: str = "command") -> dict[str, Path]:
    """All folded files of a run folder (root: the phase stacks' root frame,
    the traced command's name); returns kind -> path."""
    run_dir = Path(run_dir)
    paths = {}
    wcols = ParquetColumns(run_dir / "writes.parquet")
    want = [c for c in wcols.columns if c in PHASE_COLUMNS or c.endswith("_adj_ns")]
    phase: Counter = Counter()   # a batch at a time: bounded for any run
    for batch in wcols.batches(want):
        phase.update(phase_us(batch, root))
    stacks = {"phase": rounded(phase)}
    us: Counter = Counter()
    if (run_dir / "sched.parquet").exists():
        for batch in ParquetColumns(run_dir / "sched.parquet").batches(
                ["thread", "event", "preempted", "dur_ns"]):
            us.update(runnable_us(batch))
    if (run_dir / "io.parquet").exists():
        for batch in ParquetColumns(run_dir / "io.parquet").batches(
                ["thread", "syscall", "kind", "lat_ns"]):
            us.update(blocked_us(batch))
    stacks["offcpu"] = rounded(us)
    if (run_dir / "samples.parquet").exists():
        stacks["oncpu"] = oncpu_stacks(pd.read_parquet(run_dir / "samples.parquet"))
    # folded from the records by analysis.run (stacks.py, offcpu.py)
    for kind in ("oncpu-stacks", "offcpu-stacks"):
        if (run_dir / f"{kind}.folded").exists():
            paths[kind] = run_dir / f"{kind}.folded"
    for kind, c in stacks.items():
        text = fold(c)
        if text:
            p = run_dir / f"{kind}.folded"
            p.write_text(text)
            paths[kind] = p
    return paths
