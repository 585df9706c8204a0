"""summary.json's numbers from writes.parquet and io.parquet, read a batch
at a time (memory stays bounded whatever the run's length)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

import engines
from analysis import aggregate as G
from analysis import components, compensation, syscalls
from analysis.compensation import Calibration
from runfolder import records as R
from runfolder.files import RunFolder

QUEUE_PARTS = components.QUEUE_PARTS
UNRELIABLE_FRACTION = 0.5   # compensation above this share of a component
# what summarize() reads of io.parquet
IO_SUMMARY_COLUMNS = ("kind", "syscall", "in_write", "lat_ns", "bytes")
# what the BPF side could not follow (its maps' limits, unmatched probes)
TRACKING_GAPS = ("threads_full", "fds_full", "depth_overflow", "phase_mismatch")


def _batches(table: Any, names: list[str]):
    """A DataFrame as one batch, or ParquetColumns a batch at a time."""
    if isinstance(table, pd.DataFrame):
        yield table
    else:
        yield from table.batches(names)


class _IoSums:
    """Counts, ns and bytes of io rows by (syscall set, kinds, inside writes)."""

    def __init__(self, picks: dict[str, tuple[set[str], set[str], bool]]):
        self.picks = picks
        self.out = {k: {"count": 0, "sum_ns": 0, "bytes": 0} for k in picks}

    def add(self, io: pd.DataFrame) -> None:
        for k, (calls, kinds, inside) in self.picks.items():
            m = io["syscall"].isin(calls) & io["kind"].isin(kinds)
            if inside:
                m &= io["in_write"]
            d = io[m]
            o = self.out[k]
            o["count"] += int(len(d))
            o["sum_ns"] += int(d["lat_ns"].sum())
            o["bytes"] += int(d["bytes"].sum())


def io_picks(sums: tuple[tuple[str, engines.IoSum], ...], layout: R.Layout
             ) -> dict[str, tuple[set[str], set[str], bool]]:
    """summary.json's I/O sums: name -> (syscalls, file kinds, inside rows
    only); the syscall groups named in layout."""
    groups = {"write": syscalls.writes(layout), "sync": syscalls.syncs(layout)}
    return {name: (set(groups[x.syscalls] if isinstance(x.syscalls, str) else x.syscalls),
                   set(x.kinds), x.inside_rows) for name, x in sums}


def group_roles(n: int, leaders: int, unit: engines.Engine, groups_unprobed: bool
                ) -> dict[str, Any]:
    """summary.json's groups: leaders, followers and where the roles came
    from (None when no write called the WAL and nothing else tells)."""
    g: dict[str, Any] = {"leaders": leaders, "followers": n - leaders}
    if unit.role_sources is None:
        return g
    probed, from_wal_calls = unit.role_sources
    g["source"] = from_wal_calls if groups_unprobed else probed
    if groups_unprobed and n and not leaders:   # disableWAL: nobody calls it
        g["leaders"] = g["followers"] = None
    return g


def summarize(writes: Any, io: Any, counters: dict[str, int],
              cal: Calibration, engine: str = engines.UNNAMED,
              groups_unprobed: bool = False, only: bool = False, *,
              layout: R.Layout) -> dict[str, Any]:
    """summary.json's numbers.  writes and io: DataFrames, or ParquetColumns
    of a long run (read a batch at a time: memory stays bounded).
    groups_unprobed: a leader is a write that called the WAL (--mode
    writes); with no such write (disableWAL) the roles are not known.
    only: the table holds several engines' writes; summarise this one's.
    layout: the one the records were read with (components, syscalls).
    """
    unit = engines.get(engine)
    comps = components.names(engine, layout)
    flag_cols = [c for c, _ in unit.flag_columns]
    rows_with = {c: 0 for c in (unit.section.rows_with if unit.section else ())}
    calls = unit.calls_column if unit.section else None
    names = (["dur_ns", "dur_adj_ns", "leader", "partial", "truncated", "probe_hits"]
             + flag_cols
             + [f"{c}_{x}" for c in comps for x in ("ns", "adj_ns", "overhead_ns")]
             + [f"{p}_ns" for p in QUEUE_PARTS]
             + ([calls] if calls else []))
    dist = {k: G.Dist() for k in ["dur_ns", "dur_adj_ns"]
            + [f"{c}_ns" for c in comps] + [f"{c}_adj_ns" for c in comps]
            + [f"{p}_ns" for p in QUEUE_PARTS]}
    sums = {k: 0 for k in ["leader", "partial", "truncated", "probe_hits", "calls"]
            + [f"{c}_overhead_ns" for c in comps]}
    flag_sums = {c: 0 for c in flag_cols}
    n = 0
    for b in _batches(writes, names + (["engine"] if only else [])):
        if only:   # a run of several engines: this engine's rows
            b = b[b["engine"] == engine]
        n += len(b)
        for k, d in dist.items():
            d.add(b[k].to_numpy())
        for k in ("leader", "partial", "truncated", "probe_hits"):
            sums[k] += int(b[k].sum())
        for c in comps:
            sums[f"{c}_overhead_ns"] += float(b[f"{c}_overhead_ns"].sum())
        for c in flag_cols:
            flag_sums[c] += int(b[c].sum())
        for c in rows_with:
            rows_with[c] += int((b[f"{c}_ns"] > 0).sum())
        if calls:
            sums["calls"] += int(b[calls].sum())
    # the WAL's sums (an engine without them reads none) and its section's
    wal_sums = _IoSums(io_picks(engines.WAL_IO_SUMS if unit.wal_io else (), layout))
    own_sums = _IoSums(io_picks(unit.section.io_sums if unit.section else (), layout))
    for b in _batches(io, list(IO_SUMMARY_COLUMNS)):
        wal_sums.add(b)
        own_sums.add(b)
    total_raw, total_adj = dist["dur_ns"].sum, dist["dur_adj_ns"].sum
    raw = {c: dist[f"{c}_ns"].stats(total_raw) for c in comps}
    adj = {c: dist[f"{c}_adj_ns"].stats(total_adj) for c in comps}
    unreliable = []
    for c in comps:
        over = sums[f"{c}_overhead_ns"]
        raw_sum = raw[c]["sum_ns"]
        frac = over / raw_sum if raw_sum else 0.0
        adj[c]["overhead_ns"] = int(over)
        adj[c]["overhead_uncertainty_ns"] = int(over * cal.band)
        adj[c]["overhead_fraction"] = frac
        adj[c]["unreliable"] = bool(raw_sum and frac > UNRELIABLE_FRACTION)
        if adj[c]["unreliable"]:
            unreliable.append(c)
    queue = {p: dist[f"{p}_ns"].stats(total_raw) for p in QUEUE_PARTS}
    out: dict[str, Any] = {"engine": engine, "flags": flag_sums}
    if unit.section:
        out[unit.name] = unit.section.build({
            "rows": n, "flags": flag_sums, "calls": sums["calls"], "rows_with": rows_with,
            "io": own_sums.out})
    io_out = {k: wal_sums.out.get(k, {"count": 0, "sum_ns": 0, "bytes": 0})
              for k, _ in engines.WAL_IO_SUMS}
    leaders = sums["leader"]
    out.update({
        "writes": {
            "count": n,
            "partial": sums["partial"],
            "truncated": sums["truncated"],
            "duration": dist["dur_ns"].stats(total_raw),
            # the longest write too: how much of the mean one write makes
            # (analysis/selfcheck.py)
            "duration_adj": {**dist["dur_adj_ns"].stats(total_adj),
                             "max_ns": dist["dur_adj_ns"].max},
            "percentiles_exact": dist["dur_ns"].exact,
            # the probes' cost taken out of the mean row (duration less
            # duration_adj): the one figure the terminal, report and
            # dataset say as "probe overhead removed"
            "overhead_removed_ns": float((total_raw - total_adj) / n) if n else 0.0,
        },
        "components": adj,
        "components_raw": raw,
        "unreliable_components": unreliable,
        "queue_breakdown": queue,
        "wal": {
            # count/sum_ns: the write path's syncs (what rocksdb.wal.synced
            # counts); all_*: every WAL sync, e.g. at close, too
            "sync": {"count": io_out["wal_sync_in"]["count"],
                     "sum_ns": io_out["wal_sync_in"]["sum_ns"],
                     "all_count": io_out["wal_sync_all"]["count"],
                     "all_sum_ns": io_out["wal_sync_all"]["sum_ns"]},
            "write": io_out["wal_write"],
            "dir_sync": {"count": io_out["dir_sync"]["count"],
                         "sum_ns": io_out["dir_sync"]["sum_ns"]},
        },
        "groups": group_roles(n, leaders, unit, groups_unprobed),
        "lost_events": {k[len("lost_"):]: v for k, v in counters.items()
                        if k.startswith("lost_")},
        # transactions already open when the probes came (a window's open,
        # a -p attach): followed to their end and left out, their start unseen
        "rows_joined": counters.get("rows_joined", 0),
        # what the BPF side could not follow (its maps' limits, unmatched probes)
        "tracking_gaps": {k: counters.get(k, 0) for k in TRACKING_GAPS},
        "probe_hits": {
            "uprobe": counters.get("uprobe", 0),
            "uretprobe": counters.get("uretprobe", 0),
            "in_writes": sums["probe_hits"],
            "per_write": sums["probe_hits"] / n if n else 0.0,
        },
        "calibration": {**compensation.to_dict(cal),
                        "warm_gap_ns": layout.enum_values("ws_tuning")["WS_WARM_GAP_NS"]},
        "estimated_overhead_ns": int(
            counters.get("uprobe", 0) * cal.uprobe_ns
            + counters.get("uretprobe", 0) * cal.uretprobe_ns),
    })
    return out


def collector_counters(run_dir: Path) -> tuple[dict[str, int], dict[str, Any]]:
    """Counters by name (the folder's layout names them), and the
    collector's own report (empty if it died)."""
    folder = RunFolder(run_dir)
    rep = folder.collector_report()
    if not rep:
        return {}, {}
    names = R.Layout.of(folder).counter_names()
    return dict(zip(names, rep.get("counters", []))), rep
