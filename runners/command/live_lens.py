"""serve's answer as the analysis gives it (analysis/answer.py), live: the
rows' totals the self-check reads, and the headline of the last minute,
from the rows or from the untouched lens (analysis/untouched.py: the
writers' time between windows, nothing attached to their path), by the
same rule a run folder's summary.json takes; the self-check weighs the
rows held as a sample of the span held (analysis/rows_sample.py), as a
run folder's weighs its rows of the run.

What the untouched lens reads is kept for LiveLens.SPAN_NS of the records'
own clock: the wall sweeps, the windows' lines and the rows' start, thread
and durations (not every column), and each read's row totals.  Without
the run folder's symbols (they come at the end), a preempted thread's
function is not named: the run-queue waits split by the syscall or the
state a sweep found them in, as a run folder's do where a sweep found no
user frame.
"""
from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np
import pandas as pd

import engines
from analysis import answer, rows_sample, selfcheck, untouched
from analysis.compensation import Calibration
from analysis.windows import window_of, windows_from_lines
from runfolder import records as R

ROW_COLUMNS = ["start_ns", "tid", "dur_ns", "dur_adj_ns"]


class RowTotals:
    """Rows' sums, as much of a summary as the self-check and the
    headline's rows lens read (analysis/selfcheck.py, answer.py)."""

    def __init__(self, engine: str, band: float) -> None:
        self.engine, self.band = engine, band
        self.count = 0
        self.raw_ns = self.adj_ns = self.max_ns = 0.0
        self.comp_ns: dict[str, float] = {}

    def add(self, rows: pd.DataFrame, comps: list[str]) -> "RowTotals":
        self.count += len(rows)
        self.raw_ns += float(rows["dur_ns"].sum())
        adj = rows["dur_adj_ns"].to_numpy(np.float64)
        self.adj_ns += float(adj.sum())
        self.max_ns = max(self.max_ns, float(adj.max()) if len(adj) else 0.0)
        for c in comps:
            if f"{c}_adj_ns" in rows:
                self.comp_ns[c] = self.comp_ns.get(c, 0.0) + float(
                    np.maximum(rows[f"{c}_adj_ns"].to_numpy(np.float64), 0).sum())
        return self

    def merge(self, other: "RowTotals") -> "RowTotals":
        self.count += other.count
        self.raw_ns += other.raw_ns
        self.adj_ns += other.adj_ns
        self.max_ns = max(self.max_ns, other.max_ns)
        for c, v in other.comp_ns.items():
            self.comp_ns[c] = self.comp_ns.get(c, 0.0) + v
        return self

    def summary(self) -> dict[str, Any]:
        n = self.count
        return {
            "engine": self.engine, "calibration": {"band": self.band},
            "writes": {"count": n, "duration": {"mean_ns": self.raw_ns / n},
                       "duration_adj": {"mean_ns": self.adj_ns / n, "sum_ns": self.adj_ns,
                                        "max_ns": self.max_ns}},
            "components": {c: {"mean_ns": v / n} for c, v in self.comp_ns.items()}}

    def check(self) -> dict[str, Any] | None:
        return selfcheck.self_check(self.summary()) if self.count else None


class LiveLens:
    """The last SPAN_NS of what the headline reads, per engine."""

    SPAN_NS = 60_000_000_000

    def __init__(self, layout: R.Layout, cal: Calibration) -> None:
        self.layout, self.cal = layout, cal
        self.wall: deque[np.ndarray] = deque()
        self.lines: deque[tuple[int, str]] = deque()       # windows.tsv, by time
        self.rows: dict[str, deque[tuple[int, pd.DataFrame, RowTotals]]] = {}
        self.newest_ns = 0

    def add_wall(self, recs: np.ndarray) -> None:
        if len(recs):
            self.wall.append(recs)
            self.newest_ns = max(self.newest_ns, int(recs["ts_ns"].max()))
            self._trim()        # (held SPAN_NS, rows or none)

    def add_lines(self, lines: list[str]) -> None:
        for line in lines:     # (the windows' opens and closes: all it reads)
            f = line.split("\t", 2)
            if f[0] in ("open", "close") and len(f) > 1 and f[1].isdigit():
                self.lines.append((int(f[1]), line))
        self._trim()

    def add_rows(self, engine: str, rows: pd.DataFrame, totals: RowTotals) -> None:
        """One read's rows of an engine (their frame from writes_frame_from)
        and their totals."""
        if len(rows):
            end = int((rows["start_ns"] + rows["dur_ns"]).max())
            self.rows.setdefault(engine, deque()).append(
                (end, rows[ROW_COLUMNS].copy(), totals))
            self.newest_ns = max(self.newest_ns, end)

    def _trim(self) -> None:
        cut = self.newest_ns - self.SPAN_NS
        while self.wall and int(self.wall[0]["ts_ns"].max()) < cut:
            self.wall.popleft()
        while self.lines and self.lines[0][0] < cut:
            self.lines.popleft()
        for q in self.rows.values():
            while q and q[0][0] < cut:
                q.popleft()

    def headline(self, engine: str) -> dict[str, Any] | None:
        """analysis/answer.py's headline of the last SPAN_NS for engine,
        with the untouched lens it weighed ("untouched" in it); None
        without rows then."""
        self._trim()
        got = self.rows.get(engine)
        if not got:
            return None
        totals = RowTotals(engine, self.cal.band)
        for _, _, t in got:
            totals.merge(t)
        summary = totals.summary()
        cut = self.newest_ns - self.SPAN_NS
        wall = np.concatenate(list(self.wall)) if self.wall else \
            np.zeros(0, self.layout.struct_dtype("ws_wall_rec"))
        wall = wall[wall["ts_ns"] >= cut]
        rows = pd.concat([r for _, r, _ in got], ignore_index=True)
        sched = windows_from_lines([line for _, line in self.lines])
        summary["rows_sample"] = self.rows_sample(rows, sched, wall)
        summary["self_check"] = selfcheck.self_check(summary)
        outside = max(float(getattr(self.cal, f"{engines.get(engine).pair_cost}_out_ns", 0.0)),
                      0.0)
        summary["untouched"] = untouched.lens(
            untouched.wall_frame_from(wall, self.layout), engine,
            sched, rows, None, self.layout, outside)
        out = answer.headline(summary)
        if out is not None:
            out["untouched"] = summary["untouched"]
            out["rows_sample"] = summary["rows_sample"]
        return out

    def rows_sample(self, rows: pd.DataFrame, sched: pd.DataFrame,
                    wall: np.ndarray) -> dict[str, Any]:
        """The rows held as the sample they are (analysis/rows_sample.py),
        of the span held: from the oldest record kept to the newest, and
        the windows' share of it."""
        starts = rows["start_ns"].to_numpy(np.int64)
        first = min([int(starts.min())] + ([int(wall["ts_ns"].min())] if len(wall) else []))
        span = float(self.newest_ns - first)
        covered = float((np.clip(sched["close_ns"], first, self.newest_ns)
                         - np.clip(sched["open_ns"], first, self.newest_ns)).sum())
        return rows_sample.interval(starts, rows["dur_adj_ns"].to_numpy(np.float64),
                                    window_of(starts, sched),
                                    covered / span if span > 0 else None, span or None)
