"""A windowed run's phases, and the one with the most writes.

The schedule opens a window when writers appear that no window has seen
(windows.read_phases: the "phase" lines); each such window begins a phase,
and a phase runs to the next one's first window.  A run that sets up and
then runs (pgbench -i, then pgbench; a driver that loads, then its
clients) has its set-up's few long transactions in the first phase.  A
mean over every row mixes the phases in the proportions the windows
happened to sample them in; the headline takes the phase with the most
writes instead (analysis/answer.py), and the table shows each phase.

A phase's writes are estimated as its rows per second of its windows'
time, over the phase's span (from where the schedule saw its new writers,
its "phase" line, to the next phase's, the last to the run's end; the
window opens just after it, the attach between)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from analysis import windows as W


def row_phases(sched: pd.DataFrame, by_window: list[dict[str, Any]],
               starts: np.ndarray) -> np.ndarray:
    """Each row's phase: how many phase windows opened at or before its
    window (0: before the first; -1: a row outside every window)."""
    w = W.window_of(starts, sched)
    count = np.cumsum([bool(x["phase"]) for x in by_window]).astype(np.int64)
    return np.where(w >= 0, count[np.maximum(w, 0)] if len(count) else -1, -1)


def phases(sched: pd.DataFrame, by_window: list[dict[str, Any]], starts: np.ndarray,
           end_ns: int | None, phase_ns: list[int] | None = None) -> list[dict[str, Any]]:
    """The phases that have rows, in order: where each opened (s from the
    first window's open), its rows, windows, their time and its estimated
    writes.  phase_ns: when the schedule saw each phase's new writers (its
    "phase" lines; the window opens just after, the attach between): a
    phase's span begins there."""
    if not len(sched) or not by_window:
        return []
    count = np.cumsum([bool(x["phase"]) for x in by_window]).astype(np.int64)
    w = W.window_of(starts, sched)
    rows = np.bincount(w[w >= 0], minlength=len(sched))
    opens = sched["open_ns"].to_numpy(np.int64)
    closes = sched["close_ns"].to_numpy(np.int64)
    t0 = int(opens.min())
    last = max(int(closes.max()), int(end_ns or 0))
    seen = np.asarray(sorted(phase_ns or ()), dtype=np.int64)

    def begins(i: int) -> int:
        """Where the phase whose first window is i began: its phase line,
        else the window's open."""
        j = np.searchsorted(seen, opens[i], side="right") - 1
        after = int(closes[i - 1]) if i else -1   # not an earlier window's line
        return int(seen[j]) if by_window[i]["phase"] and j >= 0 and seen[j] > after \
            else int(opens[i])
    out = []
    for p in np.unique(count):
        mine = count == p
        first = int(np.argmax(mine))
        nxt = np.nonzero(count > p)[0]
        span_end = begins(int(nxt[0])) if len(nxt) else last
        n = int(rows[mine].sum())
        open_ns = int((closes[mine] - opens[mine]).sum())
        if not n or open_ns <= 0:
            continue
        span = max(span_end - begins(first), open_ns)
        out.append({"phase": int(p), "opened_s": (int(opens[first]) - t0) / 1e9,
                    "rows": n, "windows": int(mine.sum()),
                    "window_s": open_ns / 1e9, "span_s": span / 1e9,
                    "writes_estimated": n * span / open_ns})
    return out


def main_phase(found: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The phase with the most estimated writes, where there are two or
    more phases with rows (None: one phase, the run's rows are its)."""
    if len(found) < 2:
        return None
    return max(found, key=lambda p: p["writes_estimated"])


def rows_summary(rows: pd.DataFrame, comps: list[str]) -> dict[str, Any]:
    """A phase's rows as summary.json has the run's (writes, components):
    what the headline's rows lens and the self-check read."""
    adj = rows["dur_adj_ns"].to_numpy(np.float64)
    raw = rows["dur_ns"].to_numpy(np.float64)
    n = len(adj)
    return {
        "writes": {"count": n,
                   "duration": {"mean_ns": float(raw.mean()) if n else 0.0},
                   "duration_adj": {"mean_ns": float(adj.mean()) if n else 0.0,
                                    "sum_ns": float(adj.sum()),
                                    "max_ns": float(adj.max()) if n else 0.0,
                                    "p99_ns": float(np.percentile(adj, 99)) if n else None}},
        "components": {c: {"mean_ns": float(rows[f"{c}_adj_ns"].mean()) if n else 0.0}
                       for c in comps}}
