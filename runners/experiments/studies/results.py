"""A study's results, from its matrix folder: per cell, the seed's own
metrics (median and range of the untraced repeats, per benchmark), and
the traced run's per-write attribution.  Saved as results.json, so the
write-up can be rendered again without the runs."""
from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis import components as K
from analysis.answer import headline_of
from runfolder.files import RunFolder
from viz.runs import Run, col, component_means


# the traced mean may differ from the untraced runs' own (a workload that
# times itself: sqlite_tpcc) by this much before its microseconds are not
# the workload's, whatever the self-check said (bench/truth.py's tolerance)
TRUTH_TOLERANCE = 0.15


def off_its_truth(traced_vs_untraced: dict[str, float]) -> bool:
    """Whether any type's compensated traced mean is off its untraced runs'
    own by more than TRUTH_TOLERANCE."""
    return any(abs(r - 1) > TRUTH_TOLERANCE for r in traced_vs_untraced.values())


@dataclass
class Stat:
    median: float
    lo: float
    hi: float
    n: int
    # the untraced repeats by round (NaN where a round has none): a
    # comparison of two cells pairs them round by round
    rounds: list[float] = field(default_factory=list)
    # the A/A band of this metric: [min, max] of the matrix's A/A ratios
    # (first cell's two untraced runs of each round); empty if none ran
    aa: list[float] = field(default_factory=list)

    def spread(self) -> float:
        """(max - min) / median: how far the repeats disagree."""
        return (self.hi - self.lo) / self.median if self.median else 0.0


@dataclass
class CellResult:
    name: str
    values: dict[str, Any]
    # benchmark -> metric -> Stat of the untraced repeats
    metrics: dict[str, dict[str, Stat]] = field(default_factory=dict)
    traced_ops: dict[str, float] = field(default_factory=dict)
    run_dir: str | None = None       # the traced run, relative to the matrix folder
    mode: str = ""
    writes: int = 0
    mean_us: float = 0.0             # compensated, traced run
    p99_us: float = 0.0
    comp_mean_us: dict[str, float] = field(default_factory=dict)
    comp_tail_us: dict[str, float] = field(default_factory=dict)   # writes >= p99
    extra: dict[str, Any] = field(default_factory=dict)   # study-specific facts
    no_rows: str = ""                # why the traced run holds no row, if it does not
    # the traced run's headline (analysis/answer.py): which lens answers for
    # it ("rows" or "untouched"), whether that lens is trusted, and its mean
    # write and components; a claim's component figures come from here
    lens: str = "rows"
    trusted: bool = False
    lens_mean_us: float = 0.0
    lens_comp_us: dict[str, float] = field(default_factory=dict)
    # traced in several rounds: each round's headline ({"run_dir", "lens",
    # "trusted", "mean_us", "comp_us"}); the lens figures above are their
    # medians, lens_mean_range the means' [min, max]
    rounds: list[dict[str, Any]] = field(default_factory=list)
    lens_mean_range: list[float] = field(default_factory=list)

    def stat(self, metric: str, benchmark: str | None = None) -> Stat | None:
        per = self.metrics.get(benchmark) if benchmark else \
            next(iter(self.metrics.values()), None)
        return per.get(metric) if per else None

    def value(self, metric: str, benchmark: str | None = None) -> float:
        s = self.stat(metric, benchmark)
        return s.median if s else float("nan")

    def round_shares(self, comps: tuple[str, ...]) -> list[float]:
        """The named components' share of each traced round's mean write
        (each from its own lens); empty for a cell traced once."""
        return [sum(r["comp_us"].get(c, 0.0) for c in comps) / r["mean_us"]
                for r in self.rounds if r["mean_us"]]

    def lens_part(self, comps: tuple[str, ...]) -> tuple[float, float]:
        """The named components' microseconds in the mean write of the cell's
        answering lens (the headline's), and that mean; traced in rounds,
        the median round's share of the median mean (so that part / mean is
        the share judge.composition judges)."""
        shares = self.round_shares(comps)
        if shares:
            return statistics.median(shares) * self.lens_mean_us, self.lens_mean_us
        return sum(self.lens_comp_us.get(c, 0.0) for c in comps), self.lens_mean_us

    def share(self, comps: tuple[str, ...], tail: bool = False) -> float:
        """The components' share of the rows' mean write (tail: of the
        writes at or past the p99)."""
        d = self.comp_tail_us if tail else self.comp_mean_us
        tot = sum(d.values())
        return sum(d.get(c, 0.0) for c in comps) / tot if tot else 0.0


@dataclass
class Results:
    study: str
    quick: bool
    environment: dict[str, Any]
    cells: list[CellResult]
    # "A vs B" -> walscope diff of the two cells' traced runs (study.py
    # attach_diffs): {"a", "b", "text" (the diff table), "delta_mean_ns",
    # "residual_ns", "delta_p99_ns"}
    diffs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def diff(self, a: str, b: str) -> dict[str, Any] | None:
        return self.diffs.get(f"{a} vs {b}")

    def cell(self, **values: Any) -> CellResult:
        """The one cell whose axes have these values."""
        want = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in values.items()}
        hits = [c for c in self.cells
                if all(str(c.values.get(k)).lower() == v.lower() for k, v in want.items())]
        if len(hits) != 1:
            raise KeyError(f"{values}: {len(hits)} cells match")
        return hits[0]

    def has(self, **values: Any) -> bool:
        try:
            self.cell(**values)
            return True
        except KeyError:
            return False

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1, default=float) + "\n")

    @staticmethod
    def load(path: Path) -> "Results":
        raw = json.loads(path.read_text())
        cells = []
        for c in raw["cells"]:
            c["metrics"] = {b: {m: Stat(**s) for m, s in per.items()}
                            for b, per in c["metrics"].items()}
            if "lens" not in c:   # written before headlines: the rows answered
                c.update(lens="rows", lens_mean_us=c.get("mean_us", 0.0),
                         lens_comp_us=dict(c.get("comp_mean_us") or {}),
                         trusted=bool((c.get("extra", {}).get("self_check") or {})
                                      .get("trusted")))
            # the workload's own clock outranks any self-check
            c["trusted"] = c["trusted"] and not off_its_truth(
                c.get("extra", {}).get("traced_vs_untraced_mean") or {})
            cells.append(CellResult(**c))
        return Results(raw["study"], raw["quick"], raw["environment"], cells,
                       raw.get("diffs", {}))


METRICS = ("ops_sec", "micros_op", "p99_us", "mean_us", "p50_us", "write_amplification",
           "sst_write_amplification",
           "last_level_byte_ratio", "last_level_stored_ratio", "tpmC", "flush_bytes",
           "compaction_bytes", "wal_bytes", "bytes_written", "count",
           "space_amplification", "db_bytes", "db_sst_bytes")


def stat(xs: list[float], rounds: list[float] | None = None,
         aa: list[float] | None = None) -> Stat | None:
    xs = [float(x) for x in xs if x is not None and not pd.isna(x)]
    if not xs:
        return None
    return Stat(statistics.median(xs), min(xs), max(xs), len(xs), rounds or [], aa or [])


def by_round(runs: pd.DataFrame, metric: str) -> list[float]:
    """A metric's value per round (the rep column), NaN where missing."""
    if not len(runs) or metric not in runs:
        return []
    vals = runs.groupby("rep")[metric].median()
    return [float(vals.get(r, np.nan)) for r in range(int(runs["rep"].max()) + 1)]


def aa_bands(df: pd.DataFrame, cells: list[str], pooled: bool = False
             ) -> dict[str, dict[str, list[float]]]:
    """Per benchmark and metric, the A/A band of these A/A cells (one family's
    pairs): min and max over every pair and round of a cell's baseline over
    its second untraced run of the same round. pooled: one band per metric
    over every benchmark the pairs ran (key "all"), so that a family whose
    two A/A cells run different benchmarks (study 001) still has two pairs
    behind each band: a ratio of two runs of one cell is noise whatever the
    benchmark."""
    ratios: dict[str, dict[str, list[float]]] = {}
    for cell in cells:
        g = df[df["cell"] == cell]
        for bench, gb in g.groupby("benchmark", sort=False, dropna=False):
            base, aa = gb[gb["kind"] == "baseline"], gb[gb["kind"] == "aa"]
            key = "all" if pooled or pd.isna(bench) else str(bench)
            per = ratios.setdefault(key, {})
            for m in METRICS:
                a, b = by_round(base, m), by_round(aa, m)
                per.setdefault(m, []).extend(
                    judge_ratio(x, y) for x, y in zip(a, b) if x == x and y == y)
    return {b: {m: [min(q), max(q)] for m, q in per.items() if q}
            for b, per in ratios.items()}


def judge_ratio(a: float, b: float) -> float:
    """a / b as the verdict rule reads it (judge.ratio), zeros read as what
    they are: two zeros are equal (1), a value over zero is unbounded, zero
    over a value is 0 (003's stored last-level share falls 0.43 -> 0.00: a
    drop, not a division by zero)."""
    if b == 0:
        return 1.0 if a == 0 else float("inf")
    return a / b


def family_bands(df: pd.DataFrame, env: dict[str, Any]
                 ) -> tuple[dict[str, str], dict[str, dict[str, dict[str, list[float]]]]]:
    """Each cell's A/A family and each family's bands; a matrix from before
    families has one, its aa_cell's."""
    if env.get("aa_cells"):
        families = dict(env.get("families") or {})
        return families, {f: aa_bands(df, cells, pooled=True)
                          for f, cells in env["aa_cells"].items()}
    if env.get("aa_cell"):
        return {}, {"all": aa_bands(df, [env["aa_cell"]])}
    return {}, {}


def attribution(cr: CellResult, run: Run) -> None:
    """The traced run's per-write numbers the write-ups use."""
    s = run.summary
    w = run.writes
    cr.mode = s.get("mode", "")
    cr.writes = s["writes"]["count"]
    if not cr.writes or not len(w):
        cr.no_rows = no_rows_reason(s)
        return
    d = s["writes"]["duration_adj"]
    cr.mean_us, cr.p99_us = d["mean_ns"] / 1e3, d["p99_ns"] / 1e3
    for c, (m, t) in component_means(run).items():
        cr.comp_mean_us[c], cr.comp_tail_us[c] = m, t
    g = s.get("groups", {})
    x: dict[str, Any] = {"leaders": g.get("leaders"), "followers": g.get("followers"),
                         "wal_syncs": s.get("wal", {}).get("sync", {}).get("count"),
                         "wal_writes": s.get("wal", {}).get("write", {}).get("count"),
                         "windows": (s.get("windows") or {}).get("count"),
                         # how far the run's latencies can be trusted (analysis/selfcheck.py)
                         "self_check": s.get("self_check"),
                         "row_step": run.step}   # 1 in this many writes loaded
    if "leader" in w and (~w["leader"]).any() and "queue_behind_sync_ns" in w:
        f = w[~w["leader"]]
        lat = float(f["dur_adj_ns"].mean()) if "dur_adj_ns" in f else float(f["dur_ns"].mean())
        x["follower_mean_us"] = lat / 1e3
        x["follower_behind_sync_us"] = float(f["queue_behind_sync_ns"].mean()) / 1e3
        x["follower_behind_wal_write_us"] = float(f["queue_behind_wal_write_ns"].mean()) / 1e3
        x["leader_mean_us"] = float(col(w[w["leader"]], "dur").mean()) / 1e3 \
            if "dur_adj_ns" in w else float(w.loc[w["leader"], "dur_ns"].mean()) / 1e3
    if "migrations" in w:
        x["migrations_per_1000"] = 1000 * float(w["migrations"].mean())
    if len(run.io) and "wal_write_io" in cr.comp_mean_us:
        x.update(sst_overlap(w, run.io))
    tt = s.get("thread_time", {}).get("roles", {}).get("foreground")
    if tt:
        x["fg_runq_s"], x["fg_oncpu_s"] = tt["runq_ns"] / 1e9, tt["oncpu_ns"] / 1e9
    if s.get("by_type"):
        x["by_type"] = {t: {"mean_us": v["mean_adj_ns"] / 1e3,
                            "components_us": {c: n / 1e3 for c, n in v["components"].items()}}
                        for t, v in s["by_type"].items()}
        by_type_tails(w, x["by_type"])
    if "lock_wait_adj_ns" in w or "lock_wait_ns" in w:
        x["lock_wait"] = lock_waits(w)
    cr.extra = x
    h = headline_of(s)
    if h:
        cr.lens, cr.trusted = str(h["lens"]), bool(h.get("trusted"))
        cr.lens_mean_us = float(h["mean_ns"]) / 1e3
        cr.lens_comp_us = {c: float(v) / 1e3 for c, v in (h.get("components") or {}).items()}


def by_type_tails(w: pd.DataFrame, by_type: dict[str, dict[str, Any]]) -> None:
    """Each transaction type's own p99 and the mean components of the rows
    at or above it; how many of its rows ran a checkpoint (SQLite)."""
    if "txn_type" not in w:
        return
    lat = col(w, "dur")
    # col() finds checkpoint_adj_ns, the column a Run loads (it loads no
    # raw checkpoint_ns), and is 0 where the engine has no checkpoints
    ck = col(w, "checkpoint") > 0
    for t, g in w.groupby("txn_type"):
        bt = by_type.get(str(t))
        if bt is None or not len(g):
            continue
        lt = lat[g.index]
        p99 = float(np.percentile(lt, 99))
        tail = g[lt >= p99]
        bt.update(rows=len(g), checkpoints=int(ck[g.index].sum()), p99_us=p99 / 1e3,
                  tail_components_us={c: float(col(tail, c).mean()) / 1e3
                                      for c in bt["components_us"]})


# a lock wait this long is another process holding the lock: one client's
# own fcntl() lock calls take about 10 us a transaction
LONG_LOCK_WAIT_US = 1000.0


def lock_waits(w: pd.DataFrame) -> dict[str, Any]:
    """lock_wait over every row of every type: its mean and p99, and the
    rows that waited over LONG_LOCK_WAIT_US (how many, the longest and its
    type, their share of all the lock_wait time): contention may be a few
    long waits that move the mean and not the p99."""
    lw = col(w, "lock_wait").to_numpy(dtype=float) / 1e3
    if not len(lw):
        return {"rows": 0}
    long = lw > LONG_LOCK_WAIT_US
    top = int(np.argmax(lw))
    return {"rows": len(lw), "mean_us": float(lw.mean()),
            "p99_us": float(np.percentile(lw, 99)), "over_us": LONG_LOCK_WAIT_US,
            "long": int(long.sum()), "max_us": float(lw[top]),
            "max_type": str(w["txn_type"].iloc[top]) if "txn_type" in w else "",
            "long_share": float(lw[long].sum() / lw.sum()) if lw.sum() else 0.0}


# far above any transaction type's p99 here (a few ms at most): a client
# kept waiting, not work
STALL_MS = 100.0


def stalls(cell_dir: Path) -> dict[str, Any] | None:
    """The untraced runs' committed transactions (the workload's own
    txlog.csv, as its summary counts them: ok rows) that took over
    STALL_MS: how many of how many, the longest, and their share of all
    those transactions' time (so of a mean); None without a txlog."""
    logs = [f.txlog_csv for d in sorted(cell_dir.glob("baseline*"))
            if (f := RunFolder(d)).txlog_csv.exists()]
    if not logs:
        return None
    t = pd.concat([pd.read_csv(p, usecols=["latency_ns", "ok"]) for p in logs])
    ms = t.loc[t["ok"] == 1, "latency_ns"].to_numpy(dtype=float) / 1e6
    slow = ms > STALL_MS
    return {"runs": len(logs), "transactions": len(ms), "over_ms": STALL_MS,
            "stalled": int(slow.sum()), "longest_ms": float(ms.max()) if len(ms) else 0.0,
            "share": float(ms[slow].sum() / ms.sum()) if ms.sum() else 0.0}


def no_rows_reason(s: dict[str, Any]) -> str:
    """Why a traced run recorded no write, from its summary."""
    if not s.get("engines"):
        return "walscope found no engine in the traced run"
    win = s.get("windows") or {}
    if win:
        n = win.get("count", 0)
        return (f"the traced run ended before its first window opened ({s.get('mode')} mode)"
                if not n else f"none of its {n} window{'s' if n != 1 else ''} "
                "held a write")
    return "the workload wrote nothing the engine's probes saw (it only read?)"


def sst_overlap(w: pd.DataFrame, bg: pd.DataFrame) -> dict[str, float]:
    """Writes whose WAL I/O overlapped a flush or compaction write (bg: the
    rocksdb:* threads' write syscalls, as viz.runs.Run loads them) against
    those whose did not: count and mean WAL I/O time (write + sync,
    compensated)."""
    if not len(bg) or not len(w):
        return {}
    # ts_ns is the syscall's entry
    starts = np.sort(bg["ts_ns"].to_numpy())
    ends = np.sort((bg["ts_ns"] + bg["lat_ns"]).to_numpy())
    ws, we = w["start_ns"].to_numpy(), (w["start_ns"] + w["dur_ns"]).to_numpy()
    # background writes begun before a write's end less those ended before its start
    busy = (np.searchsorted(starts, we) - np.searchsorted(ends, ws)) > 0
    walio = (col(w, "wal_write_io") + col(w, "wal_sync_io")).to_numpy() / 1e3
    lat = col(w, "dur").to_numpy() / 1e3 if "dur_adj_ns" in w else w["dur_ns"].to_numpy() / 1e3
    out = {"overlap_writes": int(busy.sum()), "clear_writes": int((~busy).sum())}
    if busy.any() and (~busy).any():
        out.update(overlap_walio_us=float(walio[busy].mean()),
                   clear_walio_us=float(walio[~busy].mean()),
                   overlap_mean_us=float(lat[busy].mean()),
                   clear_mean_us=float(lat[~busy].mean()),
                   overlap_p99_us=float(np.percentile(lat[busy], 99)),
                   clear_p99_us=float(np.percentile(lat[~busy], 99)))
    return out


def traced_rounds(cr: CellResult, runs: list[tuple[str, Path]]) -> None:
    """A cell traced in several rounds: each round's headline (its lens, its
    trust, its mean write and components) in cr.rounds, and the cell's lens
    figures their medians across the rounds, with the mean's range: an
    interval from repeats, not from the writes of one run. Trusted only
    where every round's lens is (the workload's own clock is read on the
    rounds' median, by collect)."""
    got = []
    for name, path in runs:
        f = RunFolder(path)
        if not f.summary_json.exists():
            continue
        h = headline_of(json.loads(f.summary_json.read_text()))
        if not h:
            continue
        got.append({"run_dir": name, "lens": str(h["lens"]),
                    "trusted": bool(h.get("trusted")),
                    "mean_us": float(h["mean_ns"]) / 1e3,
                    "comp_us": {c: float(v) / 1e3
                                for c, v in (h.get("components") or {}).items()}})
    if not got:
        return
    cr.rounds = got
    lenses = [r["lens"] for r in got]
    cr.lens = max(set(lenses), key=lenses.count)
    cr.trusted = all(r["trusted"] for r in got)
    means = [r["mean_us"] for r in got]
    cr.lens_mean_us = statistics.median(means)
    cr.lens_mean_range = [min(means), max(means)]
    comps = {c for r in got for c in r["comp_us"]}
    cr.lens_comp_us = {c: statistics.median(r["comp_us"].get(c, 0.0) for r in got)
                       for c in sorted(comps)}


def collect(study: str, quick: bool, matrix_dir: Path) -> Results:
    df = pd.read_parquet(matrix_dir / "matrix.parquet")
    if {"flush_bytes", "compaction_bytes", "bytes_written"} <= set(df.columns):
        df["sst_write_amplification"] = (df["flush_bytes"] + df["compaction_bytes"]) \
            / df["bytes_written"].where(df["bytes_written"] > 0)
        if "db_bytes" in df:   # what stayed on disk over what the writes carried
            df["space_amplification"] = df["db_bytes"] \
                / df["bytes_written"].where(df["bytes_written"] > 0)
    env = json.loads((matrix_dir / "environment.json").read_text())
    axes = [c for c in df.columns if c.startswith("axis_")]
    # the A/A band of a metric, from the pairs of the cell's family, of the
    # same benchmark where they ran it, else of their only (or first) one
    families, by_family = family_bands(df, env)
    cells = []
    for name, g in df.groupby("cell", sort=False):
        first = g.iloc[0]
        cr = CellResult(name=str(name), values={a[5:]: first[a] for a in axes})
        family = families.get(str(name), "all")
        bands = by_family.get(family, {})
        fallback = next(iter(bands.values()), {})
        truth_ratio: dict[str, float] = {}
        truth_by_run: dict[str, dict[str, float]] = {}
        for bench, gb in g.groupby("benchmark", sort=False, dropna=False):
            key = "all" if pd.isna(bench) else str(bench)
            base = gb[gb["kind"] == "baseline"]
            band = bands.get(key, fallback)
            per = {m: st for m in METRICS if m in gb
                   for st in [stat(base[m].tolist(), by_round(base, m), band.get(m))]
                   if st is not None}
            cr.metrics[key] = per
            tr = gb[gb["kind"] == "traced"]
            if len(tr) and "ops_sec" in tr and tr["ops_sec"].notna().any():
                cr.traced_ops[key] = float(tr["ops_sec"].median())
            # the compensated traced latency over the untraced runs' own
            # (sqlite_tpcc's clock): external truth for the traced rows
            if len(tr) and "adj_vs_baseline_mean" in tr \
                    and tr["adj_vs_baseline_mean"].notna().any():
                truth_ratio[key] = float(tr["adj_vs_baseline_mean"].median())
                for d, r in zip(tr.get("run_dir", []), tr["adj_vs_baseline_mean"]):
                    if isinstance(d, str) and r == r:
                        truth_by_run.setdefault(d, {})[key] = float(r)
        runs = list(dict.fromkeys(g["run_dir"].dropna())) if "run_dir" in g else []
        if runs:
            # the middle round's traced run (its folder "traced") answers for
            # the rows, the pictures and walscope diff
            cr.run_dir = str(next((r for r in runs if Path(r).name == "traced"), runs[0]))
            path = matrix_dir / cr.run_dir
            if RunFolder(path).writes_parquet.exists():
                attribution(cr, Run(path, cr.name))
        if families:
            cr.extra["aa_family"] = family
        if len(runs) > 1:
            traced_rounds(cr, [(str(r), matrix_dir / str(r)) for r in runs])
        if truth_ratio:
            # each type's traced mean over its round's untraced one, the
            # median over the traced rounds: one run's reads +-25% here as
            # two untraced runs of one cell do (study 004)
            cr.extra["traced_vs_untraced_mean"] = truth_ratio
            cr.extra["traced_vs_untraced_by_run"] = truth_by_run
            # the workload's own clock outranks any self-check
            cr.trusted = cr.trusted and not off_its_truth(truth_ratio)
        if (st := stalls(matrix_dir / cr.name)) is not None:
            cr.extra["stalls"] = st
        cells.append(cr)
    return Results(study, quick, env, cells)


WAL_PARTS = ("crc", "wal_append", "wal_write_io", "wal_sync_io")
assert all(c in K.DISPLAY_ORDER for c in WAL_PARTS)
