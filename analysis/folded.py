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

import engines
from analysis.columns import ParquetColumns
from analysis.components import QUEUE_PARTS
from runfolder.files import RunFolder

# writes.parquet columns the phase stacks read (with every *_adj_ns)
PHASE_COLUMNS = ("engine", "leader", "txn_type") + tuple(
    dict.fromkeys(e.styles[0] for e in engines.ENGINES if e.styles)) + tuple(
    f"{p}_ns" for p in QUEUE_PARTS) + tuple(
    f"{e.queue}_ns" for e in engines.ENGINES if e.queue)


def frames(engine: str) -> dict[str, tuple[str, ...]]:
    """component (or queue part) -> frames under the engine's row frame,
    the way the attribution sees them (its unit's flame frames)."""
    return dict(engines.get(engine).frames)


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
    """phase_stacks before rounding: sums of batches add up exactly.  Rows
    are drawn under their engine's row frame, grouped by role (leader or
    follower) or by label (the workload's transaction type, else the
    commit style), as the engine's unit says."""
    out: Counter = Counter()
    if not len(writes):
        return out
    names = writes["engine"] if "engine" in writes else pd.Series(engines.UNNAMED, writes.index)
    for name, w in writes.groupby(names, sort=False):
        unit = engines.get(str(name))
        out.update(_engine_phase_us(w, unit, root))
    return out


def _labels(w: pd.DataFrame, unit: engines.Engine) -> pd.Series:
    if unit.flame_group == "role" and unit.roles:
        lead, follow = unit.roles
        return w["leader"].map({True: f"[{lead}]", False: f"[{follow}]"})
    if "txn_type" in w and (w["txn_type"] != "").any():
        return w["txn_type"].where(w["txn_type"] != "", "[unlabelled]")
    if unit.styles and unit.styles[0] in w:
        column, set_, unset = unit.styles
        return w[column].map({True: set_, False: unset})
    return pd.Series(f"[{unit.row}]", w.index)


def _engine_phase_us(w: pd.DataFrame, unit: engines.Engine, root: str) -> Counter:
    out: Counter = Counter()
    scale = None
    if unit.queue:   # compensate the queue split like the queue itself
        raw_q = w[f"{unit.queue}_ns"]
        adj = w.get(f"{unit.queue}_adj_ns", raw_q)
        scale = adj / raw_q.where(raw_q > 0, 1)
    for label, g in w.groupby(_labels(w, unit), sort=True):
        base = (clean_frame(root), unit.flame_root, clean_frame(str(label)))
        for comp, fr in unit.frames:
            if comp.startswith("queue_"):
                us = float((g[f"{comp}_ns"] * scale[g.index]).sum()) / 1e3
            else:
                col = f"{comp}_adj_ns" if f"{comp}_adj_ns" in g else f"{comp}_ns"
                us = float(g[col].sum()) / 1e3
            out[";".join(base + fr)] += us
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
    folder = RunFolder(run_dir)
    paths = {}
    wcols = ParquetColumns(folder.writes_parquet)
    want = [c for c in wcols.columns if c in PHASE_COLUMNS or c.endswith("_adj_ns")]
    phase: Counter = Counter()   # a batch at a time: bounded for any run
    for batch in wcols.batches(want):
        phase.update(phase_us(batch, root))
    stacks = {"phase": rounded(phase)}
    us: Counter = Counter()
    if folder.sched_parquet.exists():
        for batch in ParquetColumns(folder.sched_parquet).batches(
                ["thread", "event", "preempted", "dur_ns"]):
            us.update(runnable_us(batch))
    if folder.io_parquet.exists():
        for batch in ParquetColumns(folder.io_parquet).batches(
                ["thread", "syscall", "kind", "lat_ns"]):
            us.update(blocked_us(batch))
    stacks["offcpu"] = rounded(us)
    if folder.samples_parquet.exists():
        stacks["oncpu"] = oncpu_stacks(pd.read_parquet(folder.samples_parquet))
    # folded from the records by analysis.run (stacks.py, offcpu.py)
    for kind in ("oncpu-stacks", "offcpu-stacks"):
        if folder.folded(kind).exists():
            paths[kind] = folder.folded(kind)
    for kind, c in stacks.items():
        text = fold(c)
        if text:
            p = folder.folded(kind)
            p.write_text(text)
            paths[kind] = p
    return paths
