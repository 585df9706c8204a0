"""One row per write (RocksDB) or transaction (SQLite, PostgreSQL):
writes.parquet.

Everything here is derived from the records and the calibration; the
component partition itself was made in the kernel (comp_ns sums to dur_ns
by construction) and is only checked here, never re-derived.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import engines
from analysis import chain, components
from analysis.compensation import HIT_COSTS, Calibration
from runfolder import records as R
from runfolder.files import RunFolder

QUEUE_PARTS = components.QUEUE_PARTS


def writes_frame(run_dir: Path, cal: Calibration, engine: str = engines.UNNAMED
                 ) -> pd.DataFrame:
    """One row per write (RocksDB) or transaction (SQLite, PostgreSQL) of
    that engine."""
    folder = RunFolder(run_dir)
    return writes_frame_from(R.read_records(folder, "ws_write_rec"), cal, engine,
                             layout=R.Layout.of(folder))


def writes_frame_from(w: np.ndarray, cal: Calibration, engine: str = engines.UNNAMED,
                      ncpu: int = 0, *, layout: R.Layout) -> pd.DataFrame:
    """writes_frame of some write records (a chunk of the file, read with
    layout); with ncpu (the machine's CPUs), the waits that others' probes
    lengthened are compensated too (analysis/chain.py)."""
    unit = engines.get(engine)
    w = w[w["engine"] == layout.enum_values("ws_engine")[unit.ws_engine]]
    comps = components.names(engine, layout)
    n = len(comps)
    df = pd.DataFrame({
        "start_ns": w["start_ns"].astype(np.int64),
        "pid": w["pid"].astype(np.int32),
        "tid": w["tid"].astype(np.int32),
        "dur_ns": w["dur_ns"].astype(np.int64),
        "leader": (w["flags"] & layout.write_flag("leader")).astype(bool),
        "truncated": (w["flags"] & layout.write_flag("trunc")).astype(bool),
        "partial": (w["flags"] & layout.write_flag("partial")).astype(bool),
    })
    # clamp (2^58 ns is 9 years): a corrupt record must not wrap negative
    comp = np.minimum(w["comp_ns"][:, :n], 2**58).astype(np.int64)
    for i, c in enumerate(comps):
        df[f"{c}_ns"] = comp[:, i]
    # the queue split: overlap with a leader's sync / WAL write, capped
    q = comp[:, comps.index(unit.queue)] if unit.queue else np.zeros(len(w), np.int64)
    behind_sync = np.minimum(w["q_behind_sync_ns"].astype(np.int64), q)
    behind_walw = np.minimum(w["q_behind_walw_ns"].astype(np.int64), q - behind_sync)
    df["queue_behind_sync_ns"] = behind_sync
    df["queue_behind_wal_write_ns"] = behind_walw
    df["queue_other_ns"] = q - behind_sync - behind_walw
    # scheduler effects by core type
    cpu_ns = w["cpu_ns"].astype(np.int64)
    df["on_p_ns"], df["on_e_ns"], df["on_uniform_ns"] = cpu_ns[:, 1], cpu_ns[:, 2], cpu_ns[:, 0]
    mig = w["mig"].astype(np.int64)
    df["mig_p_to_e"] = mig[:, 1, 2]
    df["mig_e_to_p"] = mig[:, 2, 1]
    df["mig_same_type"] = mig[:, 0, 0] + mig[:, 1, 1] + mig[:, 2, 2]
    df["migrations"] = mig.sum(axis=(1, 2))
    # probe hits inside the write, and the overhead they cost per component
    hin = w["hits_in"][:, :n].astype(np.int64)
    hpar = w["hits_par"][:, :n].astype(np.int64)
    hone = w["hits_one"][:, :n].astype(np.int64)
    sin = w["sys_in"][:, :n].astype(np.int64)
    spar = w["sys_par"][:, :n].astype(np.int64)
    sign = w["sys_ign"][:, :n].astype(np.int64)
    hits = 2 * hin.sum(axis=1) + hone.sum(axis=1)
    df["probe_hits"] = hits
    # each write's costs lie between warm and cold by its share of cold hits
    # (hits long after the thread's previous one); syscalls take the same
    cold = np.clip(w["cold_hits"].astype(np.float64) / np.maximum(hits, 1), 0, 1)
    cold[hits == 0] = 0.5
    df["cold_hit_share"] = cold
    col = {k: cal.cost(k, cold)[:, None] for k in HIT_COSTS}
    if unit.pair_cost != "pair":
        pair_in = col[f"{unit.pair_cost}_in_ns"]
        pair_out = col[f"{unit.pair_cost}_out_ns"]
    else:
        pair_in = np.where(np.array([c in cal.stepped_components and cal.stepped_pair_in_ns > 0
                                     for c in comps])[None, :],
                           col["stepped_pair_in_ns"], col["pair_in_ns"])
        pair_out = col["pair_out_ns"]
    over = hin * pair_in + hpar * pair_out + hone * col["one_ns"] + \
        sin * col["sys_in_ns"] + spar * (col["sys_out_ns"] + col["sys_ign_ns"]) + \
        sign * col["sys_ign_ns"]   # the slow path runs outside a syscall's window
    if ncpu and cal.source != "none":   # others' probes, along who waited for whom
        got = chain.charges(df, over.sum(axis=1), ncpu, engines.get(engine).leader_wait)
        for c, v in got.items():
            if c in comps:
                i = comps.index(c)
                over[:, i] = np.minimum(over[:, i] + v, np.maximum(comp[:, i], over[:, i]))
        df["chain_ns"] = sum(got.values()).astype(np.int64)
    else:
        df["chain_ns"] = np.zeros(len(df), np.int64)
    adj = np.clip(comp - over, 0, 2**58).astype(np.int64)
    for i, c in enumerate(comps):
        df[f"{c}_overhead_ns"] = over[:, i].astype(np.int64)
        df[f"{c}_adj_ns"] = adj[:, i]
    df["dur_adj_ns"] = adj.sum(axis=1)
    df["wal_bytes"] = w["wal_bytes"].astype(np.int64)
    df["syscalls"] = w["nr_syscalls"].astype(np.int32)
    df["untraced_syscalls"] = sign.sum(axis=1).astype(np.int32)
    df["cpu_start"] = w["cpu_start"].astype(np.int32)
    df["cpu_end"] = w["cpu_end"].astype(np.int32)
    df["engine"] = engine
    if unit.calls_column:
        df[unit.calls_column] = w["nr_calls"].astype(np.int32)
    for column, flag in unit.flag_columns:
        df[column] = (w["flags"] & layout.write_flag(flag)).astype(bool)
    return df.sort_values("start_ns", kind="stable").reset_index(drop=True)


def apply_split(w: pd.DataFrame, fractions: dict[str, dict[str, float]]) -> pd.DataFrame:
    """Move each sampled component's share out of its parent, per write.
    A share is of the parent's time as measured: the samples that fell in
    probe handling are in its denominator, so the time moved is the share
    of the raw parent, and the same time leaves the compensated parent (the
    parent's overhead stays with it).  Shares of one parent are shares of
    the same samples: all of them are taken from the parent as measured."""
    raw = {f["parent"]: w[f["parent"] + "_ns"].copy() for f in fractions.values()}
    for comp, f in fractions.items():
        if not f.get("applied"):
            continue
        parent = f["parent"]
        moved = np.round(raw[parent] * f["fraction"]).astype(np.int64)
        for suffix in ("_ns", "_adj_ns"):
            m = np.minimum(moved, w[parent + suffix])
            w[comp + suffix] = w[comp + suffix] + m
            w[parent + suffix] = w[parent + suffix] - m
    return w


def records_engines(run_dir: Path) -> dict[str, int]:
    """Write records per engine, most first."""
    folder = RunFolder(run_dir)
    names = R.Layout.of(folder).engine_names()
    counts: dict[str, int] = {}
    for chunk in R.iter_records(folder, "ws_write_rec"):
        vals, n = np.unique(chunk["engine"], return_counts=True)
        for v, c in zip(vals, n):
            name = names.get(int(v))
            if name:
                counts[name] = counts.get(name, 0) + int(c)
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def union_frame(parts: list[pd.DataFrame], empties: list[pd.DataFrame]) -> pd.DataFrame:
    """Rows of several engines in one table: every engine's columns, in the
    order of the first engine's then the others' new ones; a column another
    engine lacks is 0, False or "" in its rows (its component took no time)."""
    cols: dict[str, Any] = {}
    for e in empties:
        for c in e.columns:
            cols.setdefault(c, e[c].dtype)
    fill = {c: (False if pd.api.types.is_bool_dtype(t) else
                "" if not pd.api.types.is_numeric_dtype(t) else 0)
            for c, t in cols.items()}
    out = pd.concat([p.reindex(columns=list(cols)) for p in parts], ignore_index=True)
    for c, t in cols.items():
        if out[c].isna().any():
            out[c] = out[c].fillna(fill[c])
        out[c] = out[c].astype(t)
    return out.sort_values("start_ns", kind="stable").reset_index(drop=True)


TXLOG_COLUMNS = ("tid", "start_ns", "end_ns", "type")


def read_txlog(path: Path) -> pd.DataFrame:
    """A workload's own transaction log (txlog.csv); empty if unusable."""
    try:
        df = pd.read_csv(path)
    except (OSError, ValueError, pd.errors.ParserError):
        return pd.DataFrame(columns=list(TXLOG_COLUMNS))
    if not set(TXLOG_COLUMNS) <= set(df.columns):
        return pd.DataFrame(columns=list(TXLOG_COLUMNS))
    return df


def label_transactions(writes: pd.DataFrame, txlog: pd.DataFrame) -> pd.DataFrame:
    """Give each traced transaction the workload's type and own latency:
    the logged transaction of the same thread whose span holds its start."""
    writes = writes.copy()
    writes["txn_type"] = ""
    writes["app_latency_ns"] = np.int64(0)
    writes["app_ok"] = True
    if not len(writes) or not len(txlog):
        return writes
    cols = list(TXLOG_COLUMNS) + (["ok"] if "ok" in txlog else [])
    t = txlog[cols].dropna().copy()
    t = t.astype({"tid": np.int64, "start_ns": np.int64, "end_ns": np.int64})
    t = t.sort_values("start_ns").rename(columns={"start_ns": "tx_start"})
    w = writes.reset_index().sort_values("start_ns")
    m = pd.merge_asof(w[["index", "start_ns", "tid"]].astype({"tid": np.int64}), t,
                      left_on="start_ns", right_on="tx_start", by="tid",
                      direction="backward")
    ok = m["end_ns"].notna() & (m["start_ns"] <= m["end_ns"])
    m = m[ok]
    writes.loc[m["index"], "txn_type"] = m["type"].astype(str).to_numpy()
    writes.loc[m["index"], "app_latency_ns"] = \
        (m["end_ns"] - m["tx_start"]).astype(np.int64).to_numpy()
    if "ok" in m:   # the workload's own verdict: a transaction that failed
        writes.loc[m["index"], "app_ok"] = m["ok"].astype(bool).to_numpy()
    return writes


def by_type(writes: pd.DataFrame) -> dict[str, Any]:
    """Per transaction type: count, mean traced/compensated/app latency and
    mean components (compensated), in ns."""
    comps = [c[:-len("_adj_ns")] for c in writes.columns
             if c.endswith("_adj_ns") and c != "dur_adj_ns"]
    out: dict[str, Any] = {}
    labelled = writes[writes["txn_type"] != ""]
    # as the workload counts them: its failed transactions (a BEGIN that
    # found the database locked past the busy timeout) apart
    ok = labelled["app_ok"].astype(bool) if "app_ok" in labelled \
        else pd.Series(True, index=labelled.index)
    failed = labelled[~ok].groupby("txn_type").size()
    for typ, d in labelled[ok].groupby("txn_type"):
        out[str(typ)] = {
            "count": int(len(d)),
            "failed": int(failed.get(typ, 0)),
            "mean_ns": float(d["dur_ns"].mean()),
            "mean_adj_ns": float(d["dur_adj_ns"].mean()),
            "p50_adj_ns": float(np.percentile(d["dur_adj_ns"], 50)),
            "p99_adj_ns": float(np.percentile(d["dur_adj_ns"], 99)),
            "app_mean_ns": float(d["app_latency_ns"].mean()),
            "app_p50_ns": float(np.percentile(d["app_latency_ns"], 50)),
            "components": {c: float(d[f"{c}_adj_ns"].mean()) for c in comps},
        }
    return out
