"""Run folders as the report reads them: summary.json and the columns of
writes.parquet it plots, in bounded memory whatever the run's length."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import engines
from analysis import components
from analysis.aggregate import Dist
from analysis.columns import ParquetColumns
from analysis.components import QUEUE_PARTS
from runfolder.files import SUMMARY_JSON, RunFolder

COMPONENTS = list(components.DISPLAY_ORDER)
COLORS = components.COLORS
TIMELINE_POINTS = 4000      # per scenario
CDF_POINTS = 400


class ReportError(RuntimeError):
    pass


class Run:
    def __init__(self, path: Path, name: str):
        self.path = path
        self.name = name
        folder = RunFolder(path)
        self.summary: dict[str, Any] = folder.summary()
        self.writes, self.dur, self.tail, self.step = read_writes(folder.writes_parquet)
        # the engine's own background threads (RocksDB's flushes and
        # compactions): their writes are the timeline's crosses
        self.background: str | None = engines.get(
            self.summary.get("engine") or engines.UNNAMED).background_threads
        io = folder.io_parquet
        self.io = pd.DataFrame()
        if io.exists() and self.background:  # the timeline shows TIMELINE_POINTS at most
            parts = [b[b["thread"].str.startswith(self.background) & (b["bytes"] > 0)]
                     for b in ParquetColumns(io).batches(["ts_ns", "lat_ns", "thread", "bytes"])]
            self.io = pd.concat(parts) if parts else self.io

    @property
    def sampled(self) -> bool:
        """Only every step-th write is loaded (a long run): sums are scaled,
        means of whole-run components come from summary.json, the CDF and
        the p99 tail from every write."""
        return self.step > 1

    @property
    def partial(self) -> bool:
        return bool(self.summary.get("partial_run"))


# writes.parquet columns the report reads (with every *_adj_ns): a long
# run's table is never loaded whole
WRITE_COLUMNS = ("start_ns", "dur_ns", "dur_adj_ns", "leader", "engine", "explicit",
                 "txn_type", "app_latency_ns", "on_p_ns", "on_e_ns", "on_uniform_ns",
                 "mig_p_to_e", "mig_e_to_p", "mig_same_type") + tuple(
                     f"{p}_ns" for p in QUEUE_PARTS)


REPORT_ROWS = 500_000      # above this, writes are sampled (never the CDF or tail)


class Tail:
    """The writes at or above p99, in bounded memory: exact column means
    over all of them, and only the SLOWEST slowest rows themselves."""
    SLOWEST = TIMELINE_POINTS // 4

    def __init__(self) -> None:
        self.n = 0
        self.sums: pd.Series | None = None
        self.rows = pd.DataFrame()

    def add(self, t: pd.DataFrame) -> None:
        if not len(t):
            return
        num = t.select_dtypes("number")
        self.sums = num.sum() if self.sums is None else self.sums.add(num.sum(), fill_value=0)
        self.n += len(t)
        self.rows = pd.concat([self.rows, t]).nlargest(self.SLOWEST, "dur_ns") \
            if len(self.rows) else t.nlargest(self.SLOWEST, "dur_ns")

    def mean(self, c: str) -> float:
        """A component's compensated mean over the tail (0 if it lacks it)."""
        if not self.n or self.sums is None:
            return 0.0
        for name in (f"{c}_adj_ns", f"{c}_ns", c):
            if name in self.sums:
                return float(self.sums[name]) / self.n
        return 0.0


def read_writes(path: Path) -> tuple[pd.DataFrame, Any, Tail, int]:
    """(writes or every step-th write, every write's latency as a
    analysis.aggregate.Dist in ns, the writes at or above p99, step):
    bounded memory whatever the run's length."""
    cols = ParquetColumns(path)
    want = [c for c in cols.columns if c in WRITE_COLUMNS or c.endswith("_adj_ns")]
    dcol = "dur_adj_ns" if "dur_adj_ns" in cols else "dur_ns"
    dur = Dist()
    for b in cols.batches([dcol]):
        dur.add(b[dcol].to_numpy())
    step = max(1, -(-dur.n // REPORT_ROWS))
    tail = Tail()
    if step == 1:
        w = cols.frame(want)
        if len(w):
            tail.add(w[w[dcol] >= np.percentile(w[dcol], 99)])
        return w, dur, tail, 1
    p99 = dur.percentiles([99])[0]
    sample, seen = [], 0
    for b in cols.batches(want):
        idx = np.arange(seen, seen + len(b))
        sample.append(b[idx % step == 0])
        tail.add(b[b[dcol] >= p99])
        seen += len(b)
    return pd.concat(sample), dur, tail, step


def find_runs(paths: list[Path]) -> list[Run]:
    found: list[tuple[Path, str]] = []
    for p in paths:
        if not p.exists():
            raise ReportError(f"{p}: no such folder")
        folder = RunFolder(p)
        if not folder.summary_json.exists() and folder.writes_bin.exists():
            raise ReportError(f"{p}: not analysed yet (its tracer died?): run "
                              f"`walscope analyse {p}` first")
        if folder.summary_json.exists():
            found.append((p, p.name))
            continue
        subs = sorted(s.parent for s in p.rglob(SUMMARY_JSON)
                      if RunFolder(s.parent).writes_parquet.exists())
        if not subs:
            raise ReportError(f"{p}: no walscope run folders inside")
        found += [(s, str(s.relative_to(p))) for s in subs]
    counts: dict[str, int] = {}
    for _, name in found:
        counts[name] = counts.get(name, 0) + 1
    found = [(p, f"{p.parent.name}/{n}" if counts[n] > 1 else n) for p, n in found]
    runs = []
    for path, name in found:
        try:
            runs.append(Run(path, name))
        except (OSError, ValueError) as e:
            raise ReportError(f"{path}: unreadable run folder ({e})") from None
    return runs


def col(w: pd.DataFrame, c: str) -> pd.Series:
    """A component's compensated ns; zeros if the run's engine lacks it."""
    if f"{c}_adj_ns" in w:
        return w[f"{c}_adj_ns"]
    if f"{c}_ns" in w:
        return w[f"{c}_ns"]
    return pd.Series(0, index=w.index, dtype="int64")


def components_of(runs: list[Run]) -> list[str]:
    """The components any of the runs has, in COMPONENTS order."""
    have = {c for r in runs for c in COMPONENTS
            if f"{c}_adj_ns" in r.writes or f"{c}_ns" in r.writes}
    return [c for c in COMPONENTS if c in have]


def component_means(r: Run, comps: list[str] | None = None) -> dict[str, tuple[float, float]]:
    """Each component's compensated mean over every write and over the p99
    tail (writes at or above p99), in us; a long run's mean from
    summary.json, which every write went into."""
    out = {}
    for c in comps if comps is not None else components_of([r]):
        if not len(r.writes):
            out[c] = (0.0, 0.0)
            continue
        mean = (r.summary["components"].get(c, {}).get("mean_ns", 0) if r.sampled
                else float(col(r.writes, c).mean()))
        out[c] = (mean / 1e3, r.tail.mean(c) / 1e3)
    return out
