"""How far a windowed run's mean can be off for being a sample.

The default records every write of a short or cheap run (a census: its
mean is every write's) and windows otherwise: then its rows are a sample
of the run, or of its main phase (analysis/phases.py), and their mean is
as good as that sample.  A phase's one window of 68 pgbench rows read
1.55x pgbench's own clock of the same run, where its 400-900-row
neighbours read 1.01-1.17 (bench/results/truth-pgbench-phases.md), and
the self-check, which weighed no sample size, trusted it.

The interval: from ten or more windows with rows, the 95% bootstrap
across windows (windows.interval_across_windows, what summary.json's
windows.estimates give); with fewer, batch means: the rows in time order
cut into BATCHES batches of equal count, the mean's standard error their
means' spread over sqrt(BATCHES), times Student's t at BATCHES - 1
degrees of freedom.  Rows next to each other in time are alike (the same
checkpoint, the same lock holder), so contiguous batches see that, where
a per-row standard error would not.  Fewer than BATCHES x MIN_BATCH_ROWS
rows give no interval: too few to tell how typical they are.  And fewer
than ten windows whose rows cover less than MIN_ACTIVE_SHARE of the span
they stand for (active_share, each window's first row to its last) stand
for their own stretches: no batch of their rows tells how the rest of
the span differs (narrow).  What none
of these sees is a stretch of the run no window was in; the untouched
lens covers those (analysis/untouched.py).

selfcheck.self_check reads it as summary["rows_sample"]: where its
half-width over the mean is more than the tolerance, or there is none,
or the windows are narrow, the rows are not trusted."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from analysis import windows as W

BATCHES = 10
MIN_BATCH_ROWS = 5
# Student's t, 97.5th percentile, BATCHES - 1 = 9 degrees of freedom
T_975 = 2.262
# a sample whose windows held this share of its span or more is read as
# a census (the budget's every-write start is one window, share 1)
CENSUS_SHARE = 0.9
# fewer than MIN_WINDOWS windows whose rows cover less of the span they
# stand for than this stand for their own stretches: a phase window that
# opened as pgbench's backends began held its first 0.05-0.15 s of ~2.5
# s, and its rows read 1.07-1.55x pgbench's own clock of the run in 6
# runs, where windows with rows in 16-28% of it read 1.02-1.08 in 4
# (twenty-first and -second sessions, bench/results/
# truth-pgbench-phases.md, truth-rows-sample-1.md); two windows with rows
# in 9-10% of a synced 1-thread db_bench run read 0.94-1.21x its own
# histogram (truth-budget-dbbench-s22.md)
MIN_ACTIVE_SHARE = 0.1
# the longest 1% of rows carrying this much of their time: the line says
# the mean rests on rare waits (a SQLite driver's busy-handler waits of a
# second: 3 of 4,373 transactions were 37% of its own mean)
RARE_TAIL_SHARE = 0.3


def census(adj: np.ndarray, windows: int = 1) -> dict[str, Any]:
    """Every write of the span recorded: no sampling error."""
    mean = float(adj.mean()) if len(adj) else 0.0
    return {"census": True, "rows": int(len(adj)), "windows": windows,
            "covered_share": 1.0, "active_share": 1.0, "method": "census", "lo_ns": mean, "hi_ns": mean,
            "mean_ns": mean, "tail_share": tail_share(adj), "half_share": 0.0}


def batch_means(starts: np.ndarray, adj: np.ndarray) -> tuple[float, float]:
    """95% interval of the mean from BATCHES contiguous batches (nan, nan:
    too few rows)."""
    n = len(adj)
    if n < BATCHES * MIN_BATCH_ROWS:
        return float("nan"), float("nan")
    order = np.argsort(starts, kind="stable")
    means = np.array([b.mean() for b in np.array_split(adj[order], BATCHES)])
    mean = float(adj.mean())
    half = T_975 * float(means.std(ddof=1)) / np.sqrt(BATCHES)
    return mean - half, mean + half


def tail_share(adj: np.ndarray) -> float:
    """The longest 1% of the rows' part of their sum (at least one row):
    where rare long writes (a lock wait, a checkpoint) carry the mean, it
    rests on how many of them the windows happened to catch."""
    if not len(adj) or adj.sum() <= 0:
        return 0.0
    k = max(1, len(adj) // 100)
    return float(np.sort(adj)[-k:].sum() / adj.sum())


def active_ns(starts: np.ndarray, window: np.ndarray) -> float:
    """The time the windows saw rows in: each window's first row's start
    to its last's (a window open before its phase's work began, or after
    it ended, counts only where it had rows)."""
    inside = window >= 0
    if not inside.any():
        return 0.0
    f = pd.DataFrame({"w": window[inside], "t": starts[inside]}).groupby("w")["t"]
    return float((f.max() - f.min()).sum())


def interval(starts: np.ndarray, adj: np.ndarray, window: np.ndarray,
             covered_share: float | None, span_ns: float | None = None) -> dict[str, Any]:
    """The rows' sample: how many rows and windows, the interval of their
    mean and its half-width over the mean (half_share; None: no interval).
    window: each row's window (windows.window_of); covered_share: the
    share of the span the windows held (>= CENSUS_SHARE: a census);
    span_ns: the span the rows stand for (active_share: the share of it
    the windows saw rows in)."""
    n = len(adj)
    inside = window >= 0
    k_rows = np.bincount(window[inside], minlength=int(window.max()) + 1 if n else 0)
    k = int((k_rows > 0).sum())
    if covered_share is not None and covered_share >= CENSUS_SHARE:
        return census(adj, k)
    out: dict[str, Any] = {"census": False, "rows": int(n), "windows": k,
                           "covered_share": covered_share,
                           "active_share": active_ns(starts, window) / span_ns
                           if span_ns else None}
    adj = adj.astype(np.float64)
    if k >= W.MIN_WINDOWS:
        # the windows with rows only (a phase's rows hold none of the
        # other phases' windows), and the mean of the rows they hold
        _, idx = np.unique(window[inside], return_inverse=True)
        sums = np.bincount(idx, weights=adj[inside], minlength=k)
        lo, hi = W.interval_across_windows(sums, np.bincount(idx, minlength=k).astype(float),
                                           np.random.default_rng(W.SEED))
        out["method"] = "across windows"
        mean = float(adj[inside].mean())
    else:
        lo, hi = batch_means(starts, adj)
        out["method"] = f"{BATCHES} batches of rows in time order"
        mean = float(adj.mean()) if n else 0.0
    out.update(lo_ns=lo, hi_ns=hi, mean_ns=mean, tail_share=tail_share(adj))
    out["half_share"] = (max(mean - lo, hi - mean) / mean
                         if lo == lo and hi == hi and mean > 0 else None)
    return out


def narrow(sample: dict[str, Any]) -> bool:
    """Fewer windows than an interval across windows needs, which saw rows
    in less than MIN_ACTIVE_SHARE of their span: they stand for their own
    stretches, not the span (batches of their rows cannot tell how the
    rest of it differs)."""
    a = sample.get("active_share")
    return bool(not sample.get("census") and sample.get("windows", 0) < W.MIN_WINDOWS
                and a is not None and a < MIN_ACTIVE_SHARE)


def trusted(sample: dict[str, Any] | None, tolerance: float) -> bool:
    """No sample said (a full run, a folder from before), a census, or an
    interval within the tolerance from windows that are not narrow."""
    if not sample or sample.get("census"):
        return True
    h = sample.get("half_share")
    return h is not None and h <= tolerance and not narrow(sample)


def line(sample: dict[str, Any]) -> str:
    """Why the self-check does not trust the rows for being a sample."""
    where = f"{sample['rows']} rows in {sample['windows']} window" + \
        ("" if sample["windows"] == 1 else "s")
    if sample.get("half_share") is None:
        return f"the rows are a sample ({where}):\n  too few to say how typical they are"
    if narrow(sample):
        return (f"the rows are a sample ({where}) with rows in "
                f"{sample['active_share'] * 100:.0f}%\n  of the span they stand for: "
                "those stretches, not the span")
    out = (f"the rows are a sample ({where}):\n  their mean is good to "
           f"+-{sample['half_share'] * 100:.0f}% only")
    tail = sample.get("tail_share") or 0.0
    if tail >= RARE_TAIL_SHARE:
        out += (f"\n  (the longest 1% of rows are {tail * 100:.0f}% of their time: the "
                "mean rests on how many\n  of those rare waits the windows caught)")
    return out
