"""walscope diff A B: where two runs' write latencies differ, component by
component.

Each write's compensated duration (``dur_adj_ns``) is partitioned into its
components (``<c>_adj_ns``), so the difference of the means is the sum of
the differences of the components' means, exactly: the residual printed
beside it is rounding.  A percentile has no such identity; the p99 is
decomposed with the writes around it: the mean components of the writes
whose rank lies in a small band around the p99 (p98.9 to p99.1 by default,
and at least 3 writes either side) add up to the band's mean duration, not to the p99, and the residual
Δp99 - Σ Δcomponents says by how much the band misses it.

Every delta has a 95% bootstrap interval: each run is resampled on its
own, over writes, or over whole windows where its rows come from windows
(--mode window, or the budget's windows past its burst): writes of one
window share its moment, so the window is the independent draw
(analysis/windows.py), and from fewer than MIN_WINDOWS windows with writes
there is no interval.  Beside the latency: the I/O per write of both runs
(syscalls, syncs, bytes, by file kind).

Pure functions of run folders and frames; viz/diff.py renders.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

import engines
from analysis import answer, components, syscalls
from probepoints import modes
from runfolder import records as R
from runfolder.files import RunFolder
from analysis.windows import (BOOTSTRAP, MIN_WINDOWS, SEED, interval_across_windows,
                              read_windows, window_of)

QUANTILE = 0.99
BAND = 0.001          # the p99 band: ranks within +-0.1% of the p99's,
BAND_MIN_SIDE = 3     # and at least 3 ranks on either side of it
CHUNK_CELLS = 2_000_000   # replicate weights held at once (replicates x writes)
IO_COLUMNS = ("kind", "in_write", "syscall", "bytes")


class DiffError(ValueError):
    """A run that cannot be compared, in one line."""


@dataclass
class Run:
    """What a diff reads from one run folder."""
    path: Path
    engine: str
    mode: str
    summary: dict[str, Any]
    writes: pd.DataFrame          # start_ns, dur_adj_ns, <c>_adj_ns, syscalls, wal_bytes
    components: list[str]
    clusters: np.ndarray          # each write's resampling unit (0..k-1)
    unit: str                     # "writes" or "windows"
    windows_with_writes: int = 0
    io: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        return len(self.writes)

    @property
    def interval(self) -> bool:
        """Whether the run's rows carry a bootstrap interval."""
        if self.unit == "windows":
            return self.windows_with_writes >= MIN_WINDOWS
        return self.n >= 2


def windowed(summary: dict[str, Any]) -> bool:
    """Rows from windows: windows opened and not every write recorded."""
    w = summary.get("windows") or {}
    return bool(w.get("count")) and not (summary.get("budget") or {}).get("every_write")


def clusters_of(starts: np.ndarray, windows: pd.DataFrame) -> tuple[np.ndarray, int]:
    """Each write's window (analysis.windows.window_of), numbered from 0
    over the windows that hold writes; a write outside every window is a
    unit of its own.  Returns (cluster per write, windows with writes)."""
    w = window_of(starts, windows)
    inside = w >= 0
    ids, cl = np.unique(w[inside], return_inverse=True)
    out = np.empty(len(starts), np.int64)
    out[inside] = cl
    out[~inside] = len(ids) + np.arange((~inside).sum())
    return out, len(ids)


def load_run(path: Path) -> Run:
    """A run folder's writes of its (main) engine, their resampling units,
    and its io.parquet if there is one."""
    path = Path(path)
    if not path.is_dir():
        raise DiffError(f"{path}: no such run folder")
    try:
        summary = RunFolder(path).summary()
    except FileNotFoundError:
        raise DiffError(f"{path}: not an analysed run folder (no summary.json; "
                        "walscope analyse it)") from None
    except ValueError as e:
        raise DiffError(f"{path}/summary.json: unreadable ({e})") from None
    engine = summary.get("engine") or engines.UNNAMED
    mode = summary.get("mode", "?")
    folder = RunFolder(path)
    if not folder.writes_parquet.exists():
        raise DiffError(f"{path}: no per-write rows (no writes.parquet; mode {mode})")
    have = set(pq.read_schema(folder.writes_parquet).names)
    own = engine_components(path, engine)
    comps = [c for c in components.DISPLAY_ORDER
             if f"{c}_adj_ns" in have and (own is None or c in own)]
    want = [c for c in ("start_ns", "dur_adj_ns", "engine", "syscalls",
                        "untraced_syscalls", "wal_bytes") if c in have]
    w = pd.read_parquet(folder.writes_parquet, columns=want + [f"{c}_adj_ns" for c in comps])
    if "engine" in w:
        w = w[w["engine"] == engine].reset_index(drop=True)
    if not len(w) or "dur_adj_ns" not in w or not comps:
        row = modes.get(mode)
        why = f" (--mode {mode} records none: trace with the default or --mode full)" \
            if row is not None and not row.records_writes else ""
        raise DiffError(f"{path}: no per-write rows{why}")
    if windowed(summary) and "start_ns" in w:
        cl, k = clusters_of(w["start_ns"].to_numpy(), read_windows(path))
        unit = "windows"
    else:
        cl, k, unit = np.arange(len(w)), 0, "writes"
    io = pd.read_parquet(folder.io_parquet, columns=list(IO_COLUMNS)) \
        if folder.io_parquet.exists() else None
    return Run(path, engine, mode, summary, w, comps, cl, unit, k, io)


def engine_components(path: Path, engine: str) -> set[str] | None:
    """The engine's components in the layout the run was written with (its
    layout.json, else the build's); None where there is neither: then the
    columns of writes.parquet say (another engine's are 0 in its rows)."""
    try:
        return set(components.names(engine, R.Layout.of(path)))
    except R.LayoutError:
        return None


def sync_syscalls(path: Path) -> frozenset[str] | None:
    """The names of the syncing syscalls, from the run's layout as above."""
    try:
        return syscalls.syncs(R.Layout.of(path))
    except R.LayoutError:
        return None


def check_comparable(a: Run, b: Run) -> None:
    if a.engine != b.engine:
        raise DiffError(f"{a.path} is {a.engine} and {b.path} is {b.engine}: "
                        "diff compares runs of one engine")


# -- the statistics, for weights over a run's writes sorted by duration ----

def weighted_stats(W: np.ndarray, X: np.ndarray, q: float, band: float
                   ) -> dict[str, np.ndarray]:
    """For each row of weights W (replicates x writes, whole numbers;
    writes sorted by X[:, 0], the duration): the mean of every column of
    X, the q-quantile of the duration (linear between ranks: np.percentile's
    rule when the weights are 1), and the mean of every column over the
    writes whose rank is within q +- band, and at least BAND_MIN_SIDE
    ranks either side of the quantile's (the band around it; a write drawn
    m times holds m ranks)."""
    r, n = W.shape
    tot = W.sum(axis=1)
    mean = (W @ X) / np.maximum(tot, 1)[:, None]
    cum = np.cumsum(W, axis=1)
    x = X[:, 0]
    quant = np.full(r, np.nan)
    bmean = np.full((r, X.shape[1]), np.nan)
    bn = np.zeros(r)
    for j in range(r):
        c, N = cum[j], tot[j]
        if N < 1:
            continue
        # rank k (0-based) of the expanded sample is held by the first
        # write whose cumulative weight exceeds k
        h = q * (N - 1)
        f = np.floor(h)
        i0, i1 = np.minimum(np.searchsorted(c, [f, f + 1], side="right"), n - 1)
        quant[j] = x[i0] + (h - f) * (x[i1] - x[i0])
        lo = max(min(np.floor((q - band) * (N - 1)), f - BAND_MIN_SIDE), 0)
        hi = min(max(np.ceil((q + band) * (N - 1)), np.ceil(h) + BAND_MIN_SIDE), N - 1) + 1
        # the band is ranks [lo, hi)
        s0, s1 = np.searchsorted(c, [lo, hi - 1], side="right")
        s1 = min(s1, n - 1) + 1
        cs, ws = c[s0:s1], W[j, s0:s1]
        bw = np.clip(np.minimum(cs, hi) - np.maximum(cs - ws, lo), 0, None)
        bn[j] = bw.sum()
        if bn[j]:
            bmean[j] = (bw @ X[s0:s1]) / bn[j]
    return {"mean": mean, "q": quant, "band": bmean, "band_n": bn}


def sorted_matrix(run: Run, comps: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(X, clusters): columns dur_adj_ns then each component's _adj_ns (0
    where the run has no such column), rows sorted by duration; the
    clusters in the same order."""
    w = run.writes
    X = np.column_stack([w["dur_adj_ns"].to_numpy(np.float64)] +
                        [w[f"{c}_adj_ns"].to_numpy(np.float64) if f"{c}_adj_ns" in w
                         else np.zeros(len(w)) for c in comps])
    order = np.argsort(X[:, 0], kind="stable")
    return X[order], run.clusters[order]


def replicates(X: np.ndarray, clusters: np.ndarray, q: float, band: float,
               boot: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """weighted_stats over `boot` bootstrap resamples of the clusters (a
    cluster drawn m times weighs m on each of its writes)."""
    k = int(clusters.max()) + 1 if len(clusters) else 0
    step = max(1, CHUNK_CELLS // max(len(X), 1))
    parts = []
    for s in range(0, boot, step):
        r = min(step, boot - s)
        picks = rng.integers(0, k, size=(r, k)) + (np.arange(r) * k)[:, None]
        counts = np.bincount(picks.ravel(), minlength=r * k).reshape(r, k)
        # a write its own unit: the clusters are a permutation of the
        # writes, and counts are exchangeable, so they need no reordering
        W = counts if k == len(X) else counts[:, clusters]
        parts.append(weighted_stats(W.astype(np.float64), X, q, band))
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def interval(d: np.ndarray) -> tuple[float, float]:
    d = d[np.isfinite(d)]
    if not len(d):
        return float("nan"), float("nan")
    lo, hi = np.percentile(d, [2.5, 97.5])
    return float(lo), float(hi)


def run_interval(run: Run, reps: dict[str, np.ndarray] | None) -> tuple[float, float]:
    """One run's mean duration with its 95% interval: across windows with
    analysis.windows' bootstrap where rows come from windows."""
    if reps is None:
        return float("nan"), float("nan")
    if run.unit == "windows":
        k = int(run.clusters.max()) + 1
        s = np.bincount(run.clusters, weights=run.writes["dur_adj_ns"].to_numpy(float),
                        minlength=k)
        n = np.bincount(run.clusters, minlength=k).astype(float)
        return interval_across_windows(s, n, np.random.default_rng(SEED))
    return interval(reps["mean"][:, 0])


def decompose(a: Run, b: Run, q: float = QUANTILE, band: float = BAND,
              boot: int = BOOTSTRAP, seed: int = SEED) -> dict[str, Any]:
    """Δmean and Δp99 (B - A) of the compensated write latency, by
    component, with residuals and 95% bootstrap intervals."""
    check_comparable(a, b)
    # a component only one run's rows have is 0 in the other's
    comps = [c for c in components.DISPLAY_ORDER
             if c in set(a.components) | set(b.components)]
    rng = np.random.default_rng(seed)
    point, reps = {}, {}
    for name, r in (("A", a), ("B", b)):
        X, cl = sorted_matrix(r, comps)
        point[name] = weighted_stats(np.ones((1, len(X))), X, q, band)
        reps[name] = replicates(X, cl, q, band, boot, rng) if r.interval else None
    both = reps["A"] is not None and reps["B"] is not None

    def rows(stat: str) -> list[dict[str, Any]]:
        out = []
        for i, c in enumerate(["total"] + comps):
            va, vb = float(point["A"][stat][0, i]), float(point["B"][stat][0, i])
            lo, hi = interval(reps["B"][stat][:, i] - reps["A"][stat][:, i]) if both \
                else (float("nan"), float("nan"))
            out.append({"component": c, "a_ns": va, "b_ns": vb, "delta_ns": vb - va,
                        "lo_ns": lo, "hi_ns": hi})
        return out

    mean_rows = rows("mean")
    band_rows = rows("band")
    d_mean = mean_rows[0]["delta_ns"]
    s_mean = sum(r["delta_ns"] for r in mean_rows[1:])
    qa, qb = float(point["A"]["q"][0]), float(point["B"]["q"][0])
    s_band = sum(r["delta_ns"] for r in band_rows[1:])

    def q_interval(f) -> tuple[float, float]:
        return interval(f(reps["B"]) - f(reps["A"])) if both else (float("nan"),) * 2

    qlo, qhi = q_interval(lambda r: r["q"])
    rlo, rhi = q_interval(lambda r: r["q"] - r["band"][:, 1:].sum(axis=1))
    out: dict[str, Any] = {
        "engine": a.engine,
        "quantile": q, "band": band, "bootstrap": boot if both else 0, "seed": seed,
        "runs": {},
        "mean": {"delta_ns": d_mean, "lo_ns": mean_rows[0]["lo_ns"],
                 "hi_ns": mean_rows[0]["hi_ns"], "components_sum_ns": s_mean,
                 "residual_ns": d_mean - s_mean, "components": mean_rows[1:],
                 "a_ns": mean_rows[0]["a_ns"], "b_ns": mean_rows[0]["b_ns"]},
        "p99": {"a_ns": qa, "b_ns": qb, "delta_ns": qb - qa, "lo_ns": qlo, "hi_ns": qhi,
                "band_a_ns": band_rows[0]["a_ns"], "band_b_ns": band_rows[0]["b_ns"],
                "components_sum_ns": s_band, "residual_ns": (qb - qa) - s_band,
                "residual_lo_ns": rlo, "residual_hi_ns": rhi,
                "components": band_rows[1:]},
        "io": {"A": io_per_write(a), "B": io_per_write(b)},
    }
    for name, r in (("A", a), ("B", b)):
        lo, hi = run_interval(r, reps[name])
        out["runs"][name] = {
            "path": str(r.path), "mode": r.mode, "writes": r.n, "unit": r.unit,
            "every_write": bool((row := modes.get(r.mode)) and row.every_write) or
            bool((r.summary.get("budget") or {}).get("every_write")),
            "windows_with_writes": r.windows_with_writes, "interval": r.interval,
            "mean_ns": float(point[name]["mean"][0, 0]), "mean_lo_ns": lo, "mean_hi_ns": hi,
            "p99_ns": float(point[name]["q"][0]),
            "band_writes": int(point[name]["band_n"][0]),
            "command": r.summary.get("command")}
    return out


# -- I/O per write -------------------------------------------------------

def io_per_write(run: Run) -> dict[str, Any]:
    """The run's I/O per recorded write: traced syscalls inside writes, the
    WAL's syncs, writes and bytes (summary.json wal; an engine with a
    section of its own there, SQLite: its syncs inside writes, every
    "*_sync" count of it), and io.parquet's calls, syncs and bytes per file
    kind, inside writes and outside them (flushes, compactions)."""
    n = max(run.n, 1)
    w = run.writes
    out: dict[str, Any] = {
        "writes": run.n,
        "syscalls": float(w["syscalls"].mean()) if "syscalls" in w else None,
        "untraced_syscalls": float(w["untraced_syscalls"].mean())
        if "untraced_syscalls" in w else None,
    }
    s = run.summary
    if own := s.get(run.engine):
        out["syncs"] = sum(v.get("count", 0) for k, v in own.items()
                           if k.endswith("_sync") and isinstance(v, dict)) / n
    elif s.get("wal"):
        wal = s["wal"]
        out["syncs"] = wal.get("sync", {}).get("count", 0) / n
        out["wal_writes"] = wal.get("write", {}).get("count", 0) / n
        out["wal_bytes"] = wal.get("write", {}).get("bytes", 0) / n
    if "wal_bytes" in w and "wal_bytes" not in out:
        out["wal_bytes"] = float(w["wal_bytes"].mean())
    kinds: list[dict[str, Any]] = []
    io = run.io
    if io is not None and len(io):
        names = io["syscall"].astype(str)
        sync_names = sync_syscalls(run.path)
        g = pd.DataFrame({"kind": io["kind"].astype(str),
                          "in_write": io["in_write"].astype(bool),
                          # no layout at hand: fsync, fdatasync, sync_file_range...
                          "sync": names.isin(sync_names) if sync_names is not None
                          else names.str.contains("sync"),
                          "bytes": io["bytes"].astype(np.int64)})
        agg = g.groupby(["in_write", "kind"], sort=True).agg(
            calls=("sync", "size"), syncs=("sync", "sum"), bytes=("bytes", "sum"))
        for (inw, kind), r in agg.iterrows():
            kinds.append({"kind": kind, "in_write": bool(inw), "calls": r["calls"] / n,
                          "syncs": r["syncs"] / n, "bytes": r["bytes"] / n})
        kinds.sort(key=lambda k: (not k["in_write"], -k["calls"]))
    out["by_kind"] = kinds
    out["log_kind"] = log_kind(kinds, run.engine)
    out["io_parquet"] = io is not None
    return out


def log_kind(kinds: list[dict[str, Any]], engine: str) -> str | None:
    """The file kind the rows' log bytes went to: of the engine's log kinds,
    the one with the most bytes inside rows (SQLite: the journal in DELETE
    mode, the -wal file in WAL mode); None where none has any."""
    try:
        logs = engines.get(engine).log_kinds
    except KeyError:
        return None
    inside = [k for k in kinds if k["in_write"] and k["kind"] in logs and k["bytes"]]
    return max(inside, key=lambda k: k["bytes"])["kind"] if inside else None


def answers(sa: dict[str, Any], sb: dict[str, Any]) -> dict[str, Any]:
    """Each run's headline (analysis/answer.py: a folder from before it
    reads as its rows), their difference, and by component where both
    name it; same_lens: both answers come from one lens."""
    ha, hb = answer.headline_of(sa) or {}, answer.headline_of(sb) or {}
    ca, cb = ha.get("components") or {}, hb.get("components") or {}
    comps = sorted(set(ca) | set(cb), key=lambda c: -abs(cb.get(c, 0.0) - ca.get(c, 0.0)))
    return {
        "A": {k: ha.get(k) for k in ("lens", "mean_ns", "p99_ns", "trusted", "why")},
        "B": {k: hb.get(k) for k in ("lens", "mean_ns", "p99_ns", "trusted", "why")},
        "same_lens": ha.get("lens") == hb.get("lens"),
        "delta_ns": (hb.get("mean_ns") or 0.0) - (ha.get("mean_ns") or 0.0),
        "components": [{"component": c, "a_ns": ca.get(c, 0.0), "b_ns": cb.get(c, 0.0),
                        "delta_ns": cb.get(c, 0.0) - ca.get(c, 0.0)} for c in comps],
    }


def diff_runs(a: Path, b: Path, **kw: Any) -> dict[str, Any]:
    """decompose() of two run folders, with each run's headline beside it."""
    ra, rb = load_run(a), load_run(b)
    check_comparable(ra, rb)
    return {"answers": answers(ra.summary, rb.summary), **decompose(ra, rb, **kw)}
