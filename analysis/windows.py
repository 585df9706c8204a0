"""--mode window and budget: the windows of a run (windows.tsv, written by
the collector) and what the writes recorded inside them estimate for the
whole run.  In budget mode (the default) a window lasts as long as tracing
every write stays within the budget, so a cheap run is one window that
holds every write; the budget's estimates are windows.tsv's "cost" lines.

A write is recorded when it begins inside a window, and in full: every
component, exactly, as in --mode full.  Each stretch of the run (a window's
length over the duty) holds one window at a uniformly random place, so they
sample the run without aliasing periodic work (flushes, compactions) and
no stretch goes without one.
The unit of the estimate is the window, not the write (writes of one
window share its moment): a component's mean over all recorded writes is
given with a 95% interval from resampling whole windows (bootstrap).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import engines
from runfolder.files import RunFolder

BOOTSTRAP = 1000
SEED = 1
# an interval across windows needs this many windows with writes: with
# fewer, a bootstrap's resamples repeat the same few windows and its
# interval is far too narrow (with one it is a point; docs/attribution.md)
MIN_WINDOWS = 10
COST_COLS = ["ts_ns", "cost", "duty", "writes", "threads", "probe_ns", "period_ns",
             "every_write", "tokens_ns", "sleeps"]


def lines_of(run_dir: Path, kind: str, fields: int) -> list[list[str]]:
    """windows.tsv's lines of one kind (its first field) with this many
    fields after it, split; a line torn or of another length is skipped."""
    try:
        text = RunFolder(run_dir).windows_tsv.read_text()
    except FileNotFoundError:
        return []
    rows = (line.split("\t") for line in text.splitlines())
    return [f[1:] for f in rows if f[0] == kind and len(f) == fields + 1]


def numbers(fields: list[str], kind: type = float) -> list | None:
    """A line's fields as numbers, or None if one is not."""
    try:
        return [kind(x) for x in fields]
    except ValueError:
        return None


def read_windows(run_dir: Path) -> pd.DataFrame:
    """One row per window: open_ns, close_ns, detached_ns, attach_us,
    detach_us, uprobes, late (writes in flight when it gave up waiting)."""
    try:
        text = RunFolder(run_dir).windows_tsv.read_text()
    except FileNotFoundError:
        text = ""
    return windows_from_lines(text.splitlines())


def windows_from_lines(lines: list[str]) -> pd.DataFrame:
    """read_windows' table from windows.tsv's lines (a live reader's)."""
    cols = ["open_ns", "close_ns", "detached_ns", "attach_us", "detach_us", "uprobes", "late"]
    rows: list[dict[str, int]] = []
    for line in lines:   # opens and closes in their order
        f = line.split("\t")
        if f[0] == "open" and len(f) == 4:
            rows.append({"open_ns": int(f[1]), "attach_us": int(f[2]), "uprobes": int(f[3])})
        elif f[0] == "close" and len(f) == 5 and rows and "close_ns" not in rows[-1]:
            rows[-1].update(close_ns=int(f[1]), detached_ns=int(f[2]),
                            detach_us=int(f[3]), late=int(f[4]))
    done = [r for r in rows if "close_ns" in r]   # a torn last window: not one
    return pd.DataFrame(done, columns=cols).astype("int64")


def read_stop(run_dir: Path) -> int | None:
    """When tracing began to stop (the "stop" line): windows closed from
    then on closed because of it, not because their time was up."""
    got = [v[0] for f in lines_of(run_dir, "stop", 1) if (v := numbers(f, int)) is not None]
    return got[-1] if got else None


def rows_cut(windows: pd.DataFrame, counted: int,
             stop_ns: int | None = None) -> dict[str, int]:
    """The rows let go because their window's drain gave up: each window's
    writes still in flight at its detach ("late"), or the BPF side's count
    of those it met again if higher; the longest a drain that gave up had
    held the probes (ns after the close); and rows_cut_ns, a lower bound
    on the time the rows let go had run: each at least its window's drain.
    Rows the BPF side counted beyond the late ones add no time to it, and
    neither do those of a window closed by the stop (stop_ns: their thread
    may have ended with the workload, mid-write)."""
    late = windows[windows["late"] > 0] if len(windows) else windows
    if not len(late):
        return {"rows_cut": max(int(counted), 0), "drain_max_ns": 0, "rows_cut_ns": 0}
    drains = late["detached_ns"] - late["close_ns"]
    timed = late["close_ns"] < stop_ns if stop_ns is not None else late["late"] >= 0
    return {"rows_cut": max(int(counted), int(late["late"].sum())),
            "drain_max_ns": int(drains.max()),
            "rows_cut_ns": int((late["late"] * drains)[timed].sum())}


def read_phases(run_dir: Path) -> list[int]:
    """When the schedule opened a window for writers no window had seen
    (the "phase" lines: collect_windows.c's windows where the work is)."""
    return [v[0] for f in lines_of(run_dir, "phase", 2) if (v := numbers(f, int)) is not None]


def by_window(windows: pd.DataFrame, starts: np.ndarray, phases: list[int],
              t0_ns: int | None = None) -> list[dict[str, Any]]:
    """Each window: when it opened (s from the first's open, or t0_ns), its
    rows, and whether it opened for a new phase's writers."""
    if not len(windows):
        return []
    w = window_of(starts, windows)
    n = np.bincount(w[w >= 0], minlength=len(windows))
    opens = windows["open_ns"].to_numpy()
    t0 = t0_ns if t0_ns is not None else int(opens.min())
    ph = np.asarray(sorted(phases), dtype=np.int64)
    out = []
    for i, o in enumerate(opens):
        # a phase line comes just before its window's open (the attach between)
        j = np.searchsorted(ph, o, side="right") - 1
        prev_close = windows["close_ns"].to_numpy()[i - 1] if i else -1
        out.append({"t_s": (int(o) - t0) / 1e9, "rows": int(n[i]),
                    "phase": bool(j >= 0 and ph[j] > prev_close)})
    return out


def read_budget(run_dir: Path) -> dict[str, float]:
    """The collector's budget line: the budget, its burst and what a
    window costs beyond its inside (ns), the CPUs it counted."""
    got = [v for f in lines_of(run_dir, "budget", 4) if (v := numbers(f)) is not None]
    return dict(zip(("budget", "burst_ns", "window_loss_ns", "ncpu"), got[0])) if got else {}


def read_costs(run_dir: Path) -> tuple[pd.DataFrame, int | None]:
    """The budget's estimates (one row a "cost" line: the cost of tracing
    every write as a share of untraced throughput, the duty it gave, and
    the sample it rests on), and the run's end ("end" line) if written."""
    # a run folder of a walscope before "sleeps" (2026-11-26) has one field
    # fewer: its sleeps are unknown (NaN)
    rows = sorted([v for f in lines_of(run_dir, "cost", len(COST_COLS))
                   if (v := numbers(f)) is not None] +
                  [[*v, float("nan")] for f in lines_of(run_dir, "cost", len(COST_COLS) - 1)
                   if (v := numbers(f)) is not None], key=lambda v: v[0])
    ends = [v[0] for f in lines_of(run_dir, "end", 1) if (v := numbers(f, int)) is not None]
    return pd.DataFrame(rows, columns=COST_COLS), (ends[-1] if ends else None)


def read_write_syscalls(run_dir: Path) -> pd.DataFrame:
    """The traced processes' write syscalls so far (ts_ns, count): the
    collector's "syscw" lines (each thread's own count, the exited ones' as
    kept at their exit), read at each window's open
    and close and at the end."""
    rows = [v for f in lines_of(run_dir, "syscw", 2) if (v := numbers(f, int)) is not None]
    return pd.DataFrame(sorted(rows), columns=["ts_ns", "count"], dtype="int64")


def by_write_syscalls(windows: pd.DataFrame, per_window: np.ndarray,
                      syscalls: pd.DataFrame, end_ns: int | None, recorded: int
                      ) -> dict[str, Any] | None:
    """The writes between windows from the write syscalls made there: the
    windows' writes per write syscall (pooled over the windows) times the
    write syscalls of the gaps.  None when the counts cannot say."""
    if len(syscalls) < 2 or not len(windows):
        return None
    t = syscalls["ts_ns"].to_numpy(np.float64)
    c = np.maximum.accumulate(syscalls["count"].to_numpy(np.float64))   # a count
    at = lambda x: np.interp(x, t, c)  # noqa: E731
    opens = windows["open_ns"].to_numpy(np.float64)
    closes = windows["close_ns"].to_numpy(np.float64)
    inside = float((at(closes) - at(opens)).sum())
    if inside <= 0 or per_window.sum() == 0:
        return None
    end = float(end_ns) if end_ns is not None else t[-1]
    gap_starts = np.concatenate([[t[0]], closes])
    gap_ends = np.concatenate([opens, [end]])
    gaps = float(np.clip(at(gap_ends) - at(gap_starts), 0, None).sum())
    total = recorded + per_window.sum() / inside * gaps
    return {"recorded": int(recorded), "estimated_total": float(total),
            "share": float(recorded / total) if total else None,
            "estimated_from": "write syscalls between windows (the threads' syscw, "
                              "read at each window's edges) at the windows' writes "
                              "per write syscall"}


class LiveWriteSyscalls:
    """by_write_syscalls as windows.tsv grows (walscope serve): the write
    syscalls inside the closed windows and in all, kept as running sums
    from its lines as they come, so that a server traced for days needs no
    more memory than a window's."""

    def __init__(self) -> None:
        self.first: int | None = None      # the first syscw count
        self.last = 0                      # the latest
        self.inside = 0                    # in closed windows
        self.open_count: int | None = None  # at the open window's edge
        self.open_ns: int | None = None
        self.at: dict[int, int] = {}       # syscw counts by moment, since the last close
        self.closed = 0                    # windows closed
        self.last_close_ns = -1
        self.rows_closed = 0               # rows that began in a closed window
        self.rows_open = np.zeros(0, np.int64)   # the others' starts, for now

    def add(self, lines: list[str]) -> None:
        """Whole lines of windows.tsv, in order."""
        for line in lines:
            f = line.split("\t")
            if f[0] == "syscw" and len(f) == 3 and (v := numbers(f[1:], int)) is not None:
                ts, count = v
                self.first = count if self.first is None else self.first
                self.last = max(self.last, count)
                self.at[ts] = count
                if ts == self.open_ns:     # (written just after its open line)
                    self.open_count = count
            elif f[0] == "open" and len(f) == 4 and (v := numbers(f[1:2], int)) is not None:
                self.open_ns, self.open_count = v[0], None
            elif f[0] == "close" and len(f) == 5 and (v := numbers(f[1:2], int)) is not None:
                close = self.at.get(v[0])      # (written before its close line)
                if close is not None and self.open_count is not None:
                    self.inside += max(close - self.open_count, 0)
                self.open_ns = self.open_count = None
                self.closed += 1
                self.last_close_ns = v[0]
                self.at = {t: c for t, c in self.at.items() if t > v[0]}
                done = self.rows_open <= v[0]
                self.rows_closed += int(done.sum())
                self.rows_open = self.rows_open[~done]

    def add_rows(self, starts: np.ndarray) -> None:
        """Rows as they are read (their start_ns): each counts towards the
        windows' writes per write syscall once its window has closed."""
        done = starts <= self.last_close_ns
        self.rows_closed += int(done.sum())
        self.rows_open = np.concatenate([self.rows_open, starts[~done].astype(np.int64)])

    def estimate(self, recorded: int) -> float | None:
        """The writes so far: the recorded ones, and the gaps' write
        syscalls at the closed windows' writes per write syscall (their
        rows over their syscalls: add_rows); the recorded ones alone while
        no window has closed (one window that records every write); None
        before any count, or when the closed windows held no write syscall
        to scale by."""
        if self.first is None:
            return None
        if not self.closed:
            return float(recorded)
        if not self.inside:
            return None
        in_open = self.last - self.open_count if self.open_count is not None else 0
        gaps = max(self.last - self.first - self.inside - in_open, 0)
        return recorded + self.rows_closed / self.inside * gaps


def recorded_share(windows: pd.DataFrame, costs: pd.DataFrame, end_ns: int | None,
                   recorded: int) -> dict[str, Any]:
    """How many writes the run had, estimated where no probe was attached:
    each gap between windows at the untraced rate of the window before it
    (its traced rate times 1 + its estimated cost; budget.h), and the share
    of them recorded.  (by_write_syscalls is the better estimate, where the
    tracer could count them.)"""
    if not len(windows):
        return {"recorded": recorded, "estimated_total": None, "share": None}
    gaps = 0.0
    closes = windows["close_ns"].to_numpy()
    opens = windows["open_ns"].to_numpy()
    nexts = np.append(opens[1:], end_ns if end_ns is not None else closes[-1])
    ts = costs["ts_ns"].to_numpy() if len(costs) else np.zeros(0)
    for close, nxt in zip(closes, nexts):
        if nxt <= close:
            continue
        before = np.searchsorted(ts, close, side="right") - 1
        if before < 0:
            continue
        c = costs.iloc[before]
        rate = c["writes"] / c["period_ns"] * (1 + c["cost"]) if c["period_ns"] else 0.0
        gaps += (nxt - close) * rate
    total = recorded + gaps
    return {"recorded": int(recorded), "estimated_total": float(total),
            "share": float(recorded / total) if total else None,
            "estimated_from": "each gap at its window's rate x (1 + its cost)"}


def summarize_budget(costs: pd.DataFrame, windows: pd.DataFrame, end_ns: int | None,
                     budget: float, recorded: int, line: dict[str, float] | None = None,
                     starts: np.ndarray | None = None,
                     syscalls: pd.DataFrame | None = None) -> dict[str, Any]:
    """summary.json's budget: what the run cost and what it recorded."""
    every = bool(len(windows) == 1 and not (costs["every_write"] == 0).any())
    line = line or {}
    busy = costs[costs["writes"] > 0] if len(costs) and (costs["writes"] > 0).any() else costs
    out: dict[str, Any] = {
        "budget": budget,
        "burst_ms": line["burst_ns"] / 1e6 if "burst_ns" in line else None,
        "every_write_s": float((windows["close_ns"] - windows["open_ns"]).iloc[0] / 1e9)
        if len(windows) else 0.0,
        "every_write": every,
        "estimates": int(len(costs)),
        # while the workload wrote: an idle stretch (a server before its
        # load, a workload's set-up) estimates nothing, a cost of 0
        "cost_median": float(busy["cost"].median()) if len(busy) else None,
        "cost_max": float(costs["cost"].max()) if len(costs) else None,
        # the estimates as they were made: when, the cost of tracing every
        # write then, and the duty the schedule took from it
        "timeline": [{"t_s": (r.ts_ns - windows["open_ns"].min()) / 1e9 if len(windows)
                      else 0.0, "cost": r.cost, "duty": r.duty,
                      "every_write": bool(r.every_write), "writes": int(r.writes),
                      "threads": int(r.threads)} for r in costs.itertuples()],
    }
    per_window = np.zeros(len(windows))
    if starts is not None and len(windows):
        w = window_of(starts, windows)
        per_window = np.bincount(w[w >= 0], minlength=len(windows))
    counted = by_write_syscalls(windows, per_window, syscalls, end_ns, recorded) \
        if syscalls is not None and not every else None
    out.update(counted or recorded_share(windows, costs, end_ns, recorded))
    if every:
        out["share"] = 1.0
        out["estimated_total"] = float(recorded)
    return out


def counted_share(recorded: int, marks: int) -> dict[str, Any]:
    """The share recorded when an engine's counting probe (attached windows
    or not: counters' row_marks) saw every row: exact."""
    return {"recorded": recorded, "estimated_total": float(marks),
            "share": recorded / marks if marks else None,
            "estimated_from": "counted: every row by the engine's counting probe "
                              "(attached between windows too)"}


def window_of(starts: np.ndarray, windows: pd.DataFrame) -> np.ndarray:
    """Each write's window (index), -1 for a write outside every window."""
    if not len(windows):
        return np.full(len(starts), -1)
    opens = windows["open_ns"].to_numpy()
    i = np.searchsorted(opens, starts, side="right") - 1
    inside = (i >= 0) & (starts < windows["close_ns"].to_numpy()[np.maximum(i, 0)])
    return np.where(inside, i, -1)


def interval_across_windows(per_window_sum: np.ndarray, per_window_n: np.ndarray,
              rng: np.random.Generator) -> tuple[float, float]:
    """95% bootstrap interval of sum/n over resampled windows."""
    k = len(per_window_n)
    if k < 2 or per_window_n.sum() == 0:
        return float("nan"), float("nan")
    picks = rng.integers(0, k, size=(BOOTSTRAP, k))
    n = per_window_n[picks].sum(axis=1)
    est = np.where(n > 0, per_window_sum[picks].sum(axis=1) / np.maximum(n, 1), np.nan)
    lo, hi = np.nanpercentile(est, [2.5, 97.5])
    return float(lo), float(hi)


# the write path's on-CPU work, which samples (taken all the run) and
# windows (exact, some of the run) both measure, in the groups both can
# tell apart (crc is inside wal_append where it was not split out)
CPU_GROUPS: dict[str, tuple[str, ...]] = {
    g: cs for e in engines.ENGINES for g, cs in e.cpu_groups}


def compare_with_samples(writes: pd.DataFrame, w: np.ndarray, k: int,
                         samples: dict[str, Any], rng: np.random.Generator
                         ) -> dict[str, Any]:
    """Each on-CPU component's share of the write path's on-CPU work, from
    the windows (95% across windows) and from the samples of the whole run
    (95% binomial); disagree: the intervals do not meet."""
    have = {g: [c for c in cs if f"{c}_adj_ns" in writes] for g, cs in CPU_GROUPS.items()}
    have = {g: cs for g, cs in have.items() if cs}
    counts = {g: sum(samples.get(c, {}).get("samples", 0) for c in cs)
              for g, cs in have.items()}
    total = sum(counts.values())
    inside = w >= 0
    sums = {g: sum(np.bincount(w[inside], weights=writes[f"{c}_adj_ns"].to_numpy()[inside]
                               .astype(float), minlength=k) for c in cs)
            for g, cs in have.items()}
    all_cpu = sum(sums.values())
    out: dict[str, Any] = {}
    for c in have:
        lo, hi = interval_across_windows(sums[c], all_cpu, rng)
        share = float(sums[c].sum() / all_cpu.sum()) if all_cpu.sum() else float("nan")
        row = {"windows": share, "windows_lo": lo, "windows_hi": hi, "samples_n": int(total)}
        if total:
            p = counts[c] / total
            se = float(np.sqrt(p * (1 - p) / total))
            row.update(samples=p, samples_lo=max(0.0, p - 1.96 * se),
                       samples_hi=min(1.0, p + 1.96 * se))
            row["disagree"] = bool(lo == lo and (hi < row["samples_lo"]
                                                 or lo > row["samples_hi"]))
        out[c] = row
    return out


def summarize(windows: pd.DataFrame, writes: pd.DataFrame, components: list[str],
              elapsed_s: float | None, samples: dict[str, Any] | None = None
              ) -> dict[str, Any]:
    """summary.json's windows: the schedule as it ran, and each component's
    mean per write with its interval across windows."""
    out: dict[str, Any] = {"count": int(len(windows))}
    if not len(windows):
        return out
    open_ns = (windows["close_ns"] - windows["open_ns"]).sum()
    attached_ns = (windows["detached_ns"] - windows["open_ns"]).sum() + \
        windows["attach_us"].sum() * 1000
    span_ns = (elapsed_s or 0) * 1e9 or float(windows["detached_ns"].max()
                                               - windows["open_ns"].min())
    out.update({
        "mean_ms": float((windows["close_ns"] - windows["open_ns"]).mean() / 1e6),
        "min_ms": float((windows["close_ns"] - windows["open_ns"]).min() / 1e6),
        "max_ms": float((windows["close_ns"] - windows["open_ns"]).max() / 1e6),
        "duty": float(open_ns / span_ns) if span_ns else None,
        "attached_share": float(attached_ns / span_ns) if span_ns else None,
        "attach_us": float(windows["attach_us"].mean()),
        "detach_us": float(windows["detach_us"].mean()),
        "drain_us": float(((windows["detached_ns"] - windows["close_ns"]) / 1e3).mean()),
        "late_writes": int(windows["late"].sum()),
        # the span the duty is of (the run's elapsed time, else the
        # windows' own extent): what the rows stand for (rows_sample)
        "span_ns": float(span_ns),
    })
    w = window_of(writes["start_ns"].to_numpy(), windows)
    inside = w >= 0
    out["writes"] = int(inside.sum())
    out["writes_outside"] = int((~inside).sum())
    k = len(windows)
    n = np.bincount(w[inside], minlength=k).astype(float)
    out["writes_per_window"] = float(n.mean())
    out["windows_with_writes"] = int((n > 0).sum())
    rng = np.random.default_rng(SEED)
    est: dict[str, Any] = {}
    # the rule for an interval (MIN_WINDOWS), and what the rows rest on
    out["interval"] = bool((n > 0).sum() >= MIN_WINDOWS)
    for c in ["dur"] + components:
        col = f"{c}_adj_ns"
        if col not in writes:
            continue
        v = writes[col].to_numpy()[inside].astype(float)
        s = np.bincount(w[inside], weights=v, minlength=k)
        lo, hi = interval_across_windows(s, n, rng) if out["interval"] \
            else (float("nan"), float("nan"))
        est[c] = {"mean_ns": float(s.sum() / n.sum()) if n.sum() else 0.0,
                  "lo_ns": lo, "hi_ns": hi}
    out["estimates"] = est
    if samples and out["interval"]:
        out["versus_samples"] = compare_with_samples(writes, w, k, samples, rng)
    return out
