"""Turn a run folder's binary records into tables: writes, io, sched.

Everything here is derived from the records and the calibration; the
component partition itself was made in the kernel (comp_ns sums to dur_ns
by construction) and is only checked here, never re-derived.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from collectors import aggregate as G
from collectors import records as R
from collectors import threadtime

# x86_64 numbers of the syscalls probes/walscope.bpf.c traces
SYSCALLS = {1: "write", 3: "close", 18: "pwrite64", 20: "writev", 35: "nanosleep",
            72: "fcntl", 73: "flock", 74: "fsync", 75: "fdatasync", 77: "ftruncate",
            87: "unlink", 230: "clock_nanosleep", 257: "openat", 263: "unlinkat",
            277: "sync_file_range", 285: "fallocate", 296: "pwritev",
            328: "pwritev2"}
_HEADER = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
_ALL_SYSCALLS: dict[int, str] = {}


def syscall_name(nr: int) -> str:
    """Any x86_64 syscall's name (samples and off-CPU periods read every
    syscall from saved registers in --mode sample)."""
    if nr in SYSCALLS:
        return SYSCALLS[nr]
    if not _ALL_SYSCALLS and _HEADER.exists():
        for m in re.finditer(r"#define __NR_(\w+) (\d+)", _HEADER.read_text()):
            _ALL_SYSCALLS[int(m.group(2))] = m.group(1)
    return _ALL_SYSCALLS.get(nr, f"syscall_{nr}")


WRITE_SYSCALLS = {"write", "pwrite64", "writev", "pwritev", "pwritev2"}
SYNC_SYSCALLS = {"fsync", "fdatasync", "sync_file_range"}
CPU_TYPES = {0: "U", 1: "P", 2: "E", 3: "?"}
SCHED_EVENTS = {1: "runq", 2: "migrate", 3: "offcpu"}
QUEUE_PARTS = ("queue_behind_sync", "queue_behind_wal_write", "queue_other")
UNRELIABLE_FRACTION = 0.5   # compensation above this share of a component
# what summarize() reads of io.parquet
IO_SUMMARY_COLUMNS = ("kind", "syscall", "in_write", "lat_ns", "bytes")


@dataclass(frozen=True)
class Calibration:
    """Probe cost per hit, split by where it lands (see walscope_calibrate.c)."""
    pair_in_ns: float = 0.0    # entry+return pair: cost inside the window
    pair_out_ns: float = 0.0   # entry+return pair: cost outside the window
    one_ns: float = 0.0        # entry-only probe
    uprobe_ns: float = 0.0
    uretprobe_ns: float = 0.0
    stepped_pair_in_ns: float = 0.0  # inside cost at a single-stepped site
    stepped_components: tuple[str, ...] = ()  # their pairs cost stepped_pair_in_ns
    sql_pair_in_ns: float = 0.0   # sqlite3_step pair (reads the SQL text too)
    sql_pair_out_ns: float = 0.0
    sys_in_ns: float = 0.0     # a traced syscall: cost inside its window
    sys_out_ns: float = 0.0    # ... and in the component it interrupted
    sys_ign_ns: float = 0.0    # any syscall: the kernel's tracepoint slow path
    band: float = 0.0          # +- fraction: warm vs cold probe costs
    source: str = "none"
    # the same costs measured warm (a tight loop) and cold (after evicting
    # the caches); the fields above are their midpoints.  When both are
    # known, each write is charged between them by its share of cold hits
    warm: tuple[tuple[str, float], ...] = ()
    cold: tuple[tuple[str, float], ...] = ()

    def cost(self, key: str, cold_share: np.ndarray) -> np.ndarray:
        """A per-hit cost for each write: warm + cold_share * (cold - warm),
        or the midpoint where warm and cold were not measured."""
        w, c = dict(self.warm).get(key), dict(self.cold).get(key)
        if w is None or c is None:
            return np.full(len(cold_share), float(getattr(self, key)))
        return w + cold_share * (c - w)

    @staticmethod
    def from_dict(d: dict[str, Any] | None) -> "Calibration":
        if not d:
            return Calibration()
        keys = Calibration.__dataclass_fields__.keys()
        out = {k: d[k] for k in keys if k in d and k not in ("warm", "cold")}
        for end in ("warm", "cold"):
            if isinstance(d.get(end), dict):
                out[end] = tuple(sorted(derived_costs(d[end]).items()))
        return Calibration(**out)


# per-hit cost fields that have warm and cold measurements
HIT_COSTS = ("pair_in_ns", "pair_out_ns", "one_ns", "stepped_pair_in_ns",
             "sql_pair_in_ns", "sql_pair_out_ns", "sys_in_ns", "sys_out_ns",
             "sys_ign_ns")


def derived_costs(m: dict[str, Any]) -> dict[str, float]:
    """walscope-calibrate's figures as Calibration's per-hit costs.  A
    traced syscall's window shows none of its cost (it is all in the
    tracepoint programs around it): noise around 0 becomes 0."""
    out = {k: float(m[k]) for k in HIT_COSTS if k in m}
    if "sys_ns" in m:
        out["sys_in_ns"] = max(0.0, float(m.get("sys_in_ns", 0)))
        out["sys_out_ns"] = max(0.0, float(m["sys_ns"]) - out["sys_in_ns"])
    if "sql_pair_ns" in m and "sql_pair_in_ns" in m:
        out["sql_pair_out_ns"] = max(0.0, float(m["sql_pair_ns"]) - float(m["sql_pair_in_ns"]))
    out["sys_ign_ns"] = max(0.0, out.get("sys_ign_ns", 0.0))
    return out


def writes_frame(run_dir: Path, cal: Calibration, engine: str = "rocksdb"
                 ) -> pd.DataFrame:
    """One row per write (RocksDB) or transaction (SQLite) of that engine."""
    return writes_frame_from(R.read_records(run_dir, "ws_write_rec"), cal, engine)


def writes_frame_from(w: np.ndarray, cal: Calibration, engine: str = "rocksdb"
                      ) -> pd.DataFrame:
    """writes_frame of some write records (a chunk of the file)."""
    w = w[w["engine"] == R.enum_values("ws_engine")["WS_ENGINE_" + engine.upper()]]
    comps = R.components(engine)
    n = len(comps)
    df = pd.DataFrame({
        "start_ns": w["start_ns"].astype(np.int64),
        "pid": w["pid"].astype(np.int32),
        "tid": w["tid"].astype(np.int32),
        "dur_ns": w["dur_ns"].astype(np.int64),
        "leader": (w["flags"] & 1).astype(bool),
        "truncated": (w["flags"] & 2).astype(bool),
        "partial": (w["flags"] & 4).astype(bool),
    })
    # clamp (2^58 ns is 9 years): a corrupt record must not wrap negative
    comp = np.minimum(w["comp_ns"][:, :n], 2**58).astype(np.int64)
    for i, c in enumerate(comps):
        df[f"{c}_ns"] = comp[:, i]
    # the queue split: overlap with a leader's sync / WAL write, capped
    q = comp[:, comps.index("queue")] if "queue" in comps else np.zeros(len(w), np.int64)
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
    if engine == "sqlite":
        pair_in = col["sql_pair_in_ns"]
        pair_out = col["sql_pair_out_ns"]
    else:
        pair_in = np.where(np.array([c in cal.stepped_components and cal.stepped_pair_in_ns > 0
                                     for c in comps])[None, :],
                           col["stepped_pair_in_ns"], col["pair_in_ns"])
        pair_out = col["pair_out_ns"]
    over = hin * pair_in + hpar * pair_out + hone * col["one_ns"] + \
        sin * col["sys_in_ns"] + spar * (col["sys_out_ns"] + col["sys_ign_ns"]) + \
        sign * col["sys_ign_ns"]   # the slow path runs outside a syscall's window
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
    if engine == "sqlite":
        df["statements"] = w["nr_calls"].astype(np.int32)
        df["explicit"] = (w["flags"] & 0x10).astype(bool)
        df["rollback"] = (w["flags"] & 0x8).astype(bool)
    return df.sort_values("start_ns", kind="stable").reset_index(drop=True)


def group_roles(n: int, leaders: int, engine: str, groups_unprobed: bool
                ) -> dict[str, Any]:
    """summary.json's groups: leaders, followers and where the roles came
    from (None when no write called the WAL and nothing else tells)."""
    g: dict[str, Any] = {"leaders": leaders, "followers": n - leaders}
    if engine != "rocksdb":
        return g
    g["source"] = "wal_calls" if groups_unprobed else "EnterAsBatchGroupLeader"
    if groups_unprobed and n and not leaders:   # disableWAL: nobody calls it
        g["leaders"] = g["followers"] = None
    return g


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


def records_engine(run_dir: Path) -> str:
    """The engine most write records name ("rocksdb" when there are none)."""
    w = R.read_records(run_dir, "ws_write_rec")
    names = {v: k[len("WS_ENGINE_"):].lower()
             for k, v in R.enum_values("ws_engine").items()}
    if not len(w):
        return "rocksdb"
    vals, counts = np.unique(w["engine"], return_counts=True)
    return names.get(int(vals[np.argmax(counts)]), "rocksdb")


TXLOG_COLUMNS = ("tid", "start_ns", "end_ns", "type")


def read_txlog(path: Path) -> pd.DataFrame:
    """A workload's own transaction log (see run.TXLOG); empty if unusable."""
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
    if not len(writes) or not len(txlog):
        return writes
    t = txlog[list(TXLOG_COLUMNS)].dropna().copy()
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
    return writes


def by_type(writes: pd.DataFrame) -> dict[str, Any]:
    """Per transaction type: count, mean traced/compensated/app latency and
    mean components (compensated), in ns."""
    comps = [c[:-len("_adj_ns")] for c in writes.columns
             if c.endswith("_adj_ns") and c != "dur_adj_ns"]
    out: dict[str, Any] = {}
    for typ, d in writes[writes["txn_type"] != ""].groupby("txn_type"):
        out[str(typ)] = {
            "count": int(len(d)),
            "mean_ns": float(d["dur_ns"].mean()),
            "mean_adj_ns": float(d["dur_adj_ns"].mean()),
            "p50_adj_ns": float(np.percentile(d["dur_adj_ns"], 50)),
            "p99_adj_ns": float(np.percentile(d["dur_adj_ns"], 99)),
            "app_mean_ns": float(d["app_latency_ns"].mean()),
            "app_p50_ns": float(np.percentile(d["app_latency_ns"], 50)),
            "components": {c: float(d[f"{c}_adj_ns"].mean()) for c in comps},
        }
    return out


def opens_frame(run_dir: Path, seeded: dict[tuple[int, int], str]) -> pd.DataFrame:
    o = R.read_records(run_dir, "ws_open_rec")
    opens = o[(o["nr"] == 257) & (o["ret"] >= 0)]
    df = pd.DataFrame({
        "ts_ns": opens["ts_ns"].astype(np.int64),
        "pid": opens["pid"].astype(np.int64),
        "fd": opens["ret"].astype(np.int64),
        "path": [p.decode(errors="replace") for p in opens["path"]],
    })
    if seeded:
        pre = pd.DataFrame([(0, pid, fd, path) for (pid, fd), path in seeded.items()],
                           columns=["ts_ns", "pid", "fd", "path"])
        df = pd.concat([pre, df], ignore_index=True)
    return df.sort_values("ts_ns", kind="stable")


def io_frame(run_dir: Path, seeded: dict[tuple[int, int], str] | None = None
             ) -> pd.DataFrame:
    opens = opens_frame(run_dir, seeded or {})
    return io_frame_from(R.read_records(run_dir, "ws_io_rec"), opens,
                         named_frame(run_dir))


def named_frame(run_dir: Path) -> pd.DataFrame:
    """(tid, ts_ns) -> path of every openat/unlink record."""
    o = R.read_records(run_dir, "ws_open_rec")
    return pd.DataFrame({"tid": o["tid"].astype(np.int64),
                         "ts_ns": o["ts_ns"].astype(np.int64),
                         "own_path": [p.decode(errors="replace") for p in o["path"]]}
                        ).drop_duplicates(["tid", "ts_ns"])


def io_frame_from(io: np.ndarray, opens: pd.DataFrame, named: pd.DataFrame
                  ) -> pd.DataFrame:
    """io_frame of some io records; opens and named from the whole run."""
    kinds = R.file_kinds()
    df = pd.DataFrame({
        "ts_ns": io["ts_ns"].astype(np.int64),
        "pid": io["pid"].astype(np.int64),
        "tid": io["tid"].astype(np.int64),
        "syscall": pd.Categorical([SYSCALLS.get(int(x), str(x)) for x in io["nr"]]),
        "lat_ns": io["lat_ns"].astype(np.int64),
        "ret": io["ret"].astype(np.int64),
        "fd": io["fd"].astype(np.int64),
        "ino": io["ino"].astype(np.int64),
        "kind": pd.Categorical([kinds.get(int(k), "other") for k in io["kind"]]),
        "in_write": io["in_write"].astype(bool),
        "cpu": io["cpu"].astype(np.int32),
        "cpu_type": [CPU_TYPES.get(int(c), "?") for c in io["cpu_type"]],
        "thread": [c.decode(errors="replace") for c in io["comm"]],
    })
    df["bytes"] = np.where(df["syscall"].isin(WRITE_SYSCALLS) & (df["ret"] > 0),
                           df["ret"], 0)
    df = df.sort_values("ts_ns", kind="stable").reset_index(drop=True)
    if len(df) and len(opens):
        df = pd.merge_asof(df, opens, on="ts_ns", by=["pid", "fd"],
                           direction="backward")
        df["path"] = df["path"].fillna("")
    else:
        df["path"] = ""
    # openat/unlink rows: the path their own record carries
    if len(df) and len(named):
        own = df[["tid", "ts_ns"]].merge(named, how="left", on=["tid", "ts_ns"])["own_path"]
        own.index = df.index
        df["path"] = own.where(own.notna() & (own != ""), df["path"])
    return df


def _cpu_type_names(codes: np.ndarray) -> pd.Categorical:
    names = [CPU_TYPES[i] for i in range(4)]
    return pd.Categorical.from_codes(np.minimum(codes.astype(np.int64), 3), names)


def sched_frame(run_dir: Path, thread_names: dict[int, str]) -> pd.DataFrame:
    return sched_frame_from(R.read_records(run_dir, "ws_sched_rec"), thread_names)


def sched_frame_from(s: np.ndarray, thread_names: dict[int, str]) -> pd.DataFrame:
    """sched_frame of some sched records (a chunk of the file)."""
    df = pd.DataFrame({
        "ts_ns": s["ts_ns"].astype(np.int64),
        "pid": s["pid"].astype(np.int64),
        "tid": s["tid"].astype(np.int64),
        "event": pd.Categorical([SCHED_EVENTS.get(int(e), "?") for e in s["ev"]]),
        "dur_ns": s["dur_ns"].astype(np.int64),
        "from_cpu": s["from_cpu"].astype(np.int32),
        "to_cpu": s["to_cpu"].astype(np.int32),
        "from_type": _cpu_type_names(s["from_type"]),
        "to_type": _cpu_type_names(s["to_type"]),
        "in_write": s["in_write"].astype(bool),
        "preempted": s["preempted"].astype(bool),
    })
    df["thread"] = pd.Categorical(df["tid"].map(thread_names).fillna(""))
    return df.sort_values("ts_ns", kind="stable").reset_index(drop=True)


def stats(values: np.ndarray, total: float) -> dict[str, float]:
    d = G.Dist()
    d.add(values)
    return d.stats(total)


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


LOG_KINDS = {"journal", "wal"}
SQLITE_IO = {
    "journal_write": (WRITE_SYSCALLS, LOG_KINDS, True),
    "journal_sync": (SYNC_SYSCALLS, LOG_KINDS, True),
    "db_write": (WRITE_SYSCALLS, {"db", "other"}, True),
    "db_sync": (SYNC_SYSCALLS, {"db", "other"}, True),
    "dir_sync": (SYNC_SYSCALLS, {"dir"}, True),
    "journal_unlink": ({"unlink", "unlinkat"}, {"journal"}, True),
    "journal_truncate": ({"ftruncate"}, LOG_KINDS, True),
    "journal_open": ({"openat"}, {"journal"}, True),
}
ROCKSDB_IO = {
    "wal_sync_in": (SYNC_SYSCALLS, {"wal"}, True),
    "wal_sync_all": (SYNC_SYSCALLS, {"wal"}, False),
    "wal_write": (WRITE_SYSCALLS, {"wal"}, False),
    "dir_sync": (SYNC_SYSCALLS, {"dir"}, False),
}


def summarize(writes: Any, io: Any, counters: dict[str, int],
              cal: Calibration, engine: str = "rocksdb",
              groups_unprobed: bool = False) -> dict[str, Any]:
    """summary.json's numbers.  writes and io: DataFrames, or ParquetColumns
    of a long run (read a batch at a time: memory stays bounded).
    groups_unprobed: a leader is a write that called the WAL (--mode
    writes); with no such write (disableWAL) the roles are not known."""
    comps = R.components(engine)
    names = (["dur_ns", "dur_adj_ns", "leader", "partial", "truncated", "probe_hits"]
             + [f"{c}_{x}" for c in comps for x in ("ns", "adj_ns", "overhead_ns")]
             + [f"{p}_ns" for p in QUEUE_PARTS]
             + (["checkpoint_ns", "explicit", "rollback", "statements"]
                if engine == "sqlite" else []))
    dist = {k: G.Dist() for k in ["dur_ns", "dur_adj_ns"]
            + [f"{c}_ns" for c in comps] + [f"{c}_adj_ns" for c in comps]
            + [f"{p}_ns" for p in QUEUE_PARTS]}
    sums = {k: 0 for k in ["leader", "partial", "truncated", "probe_hits", "checkpoints",
                           "explicit", "rollback", "statements"]
            + [f"{c}_overhead_ns" for c in comps]}
    n = 0
    for b in _batches(writes, names):
        n += len(b)
        for k, d in dist.items():
            d.add(b[k].to_numpy())
        for k in ("leader", "partial", "truncated", "probe_hits"):
            sums[k] += int(b[k].sum())
        for c in comps:
            sums[f"{c}_overhead_ns"] += float(b[f"{c}_overhead_ns"].sum())
        if engine == "sqlite":
            sums["checkpoints"] += int((b["checkpoint_ns"] > 0).sum())
            for k in ("explicit", "rollback", "statements"):
                sums[k] += int(b[k].sum())
    iosums = _IoSums(SQLITE_IO if engine == "sqlite" else ROCKSDB_IO)
    for b in _batches(io, list(IO_SUMMARY_COLUMNS)):
        iosums.add(b)
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
    out: dict[str, Any] = {"engine": engine}
    io_out = iosums.out
    if engine == "sqlite":
        out["sqlite"] = {**io_out, "checkpoints": sums["checkpoints"],
                         "explicit": sums["explicit"], "autocommit": n - sums["explicit"],
                         "rollbacks": sums["rollback"], "statements": sums["statements"]}
        io_out = {k: {"count": 0, "sum_ns": 0, "bytes": 0} for k in ROCKSDB_IO}
    leaders = sums["leader"]
    out.update({
        "writes": {
            "count": n,
            "partial": sums["partial"],
            "truncated": sums["truncated"],
            "duration": dist["dur_ns"].stats(total_raw),
            "duration_adj": dist["dur_adj_ns"].stats(total_adj),
            "percentiles_exact": dist["dur_ns"].exact,
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
        "groups": group_roles(n, leaders, engine, groups_unprobed),
        "lost_events": {k[len("lost_"):]: v for k, v in counters.items()
                        if k.startswith("lost_")},
        # what the BPF side could not follow (its maps' limits, unmatched probes)
        "tracking_gaps": {k: counters.get(k, 0) for k in TRACKING_GAPS},
        "probe_hits": {
            "uprobe": counters.get("uprobe", 0),
            "uretprobe": counters.get("uretprobe", 0),
            "in_writes": sums["probe_hits"],
            "per_write": sums["probe_hits"] / n if n else 0.0,
        },
        "calibration": {**cal.__dict__,
                        "stepped_components": list(cal.stepped_components),
                        "warm": dict(cal.warm), "cold": dict(cal.cold),
                        "warm_gap_ns": R.enum_values("ws_tuning")["WS_WARM_GAP_NS"]},
        "estimated_overhead_ns": int(
            counters.get("uprobe", 0) * cal.uprobe_ns
            + counters.get("uretprobe", 0) * cal.uretprobe_ns),
    })
    return out


def collector_counters(run_dir: Path) -> tuple[dict[str, int], dict[str, Any]]:
    """Counters by name, and the collector's own report (empty if it died)."""
    p = run_dir / "collector.json"
    try:
        rep = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError):
        return {}, {}
    names = R.counter_names()
    return dict(zip(names, rep.get("counters", []))), rep


def fmt_ns(ns: float) -> str:
    if ns >= 1e9:
        return f"{ns / 1e9:.2f}s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f}ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f}us"
    return f"{ns:.0f}ns"


OFFCPU_ROWS = 6


def format_sample_table(summary: dict[str, Any]) -> str:
    """--mode sample: on-CPU shares from samples; off-CPU time (blocked until
    the wakeup, then runnable) of the same threads by syscall in progress."""
    b = summary.get("sample_breakdown", {})
    lines = [f"{'on-CPU (sampled)':<20}{'samples':>9}{'share':>8}{'est. time':>12}"]
    for c, v in sorted(b.items(), key=lambda kv: -kv[1]["samples"]):
        lines.append(f"{c:<20}{v['samples']:>9}{v['share'] * 100:>7.1f}%"
                     f"{fmt_ns(v['est_cpu_ns']):>12}")
    info = summary.get("offcpu_stacks", {})
    off = info.get("by_syscall", [])
    if off:
        lines.append(f"{'off-CPU (switches)':<20}{'periods':>9}{'blocked':>12}{'runnable':>12}")
        for r in off[:OFFCPU_ROWS]:
            lines.append(f"{r['syscall']:<20}{r['periods']:>9}"
                         f"{fmt_ns(r['blocked_us'] * 1e3):>12}{fmt_ns(r['runnable_us'] * 1e3):>12}")
        if len(off) > OFFCPU_ROWS:
            rest = off[OFFCPU_ROWS:]
            lines.append(f"{f'({len(rest)} more)':<20}{sum(r['periods'] for r in rest):>9}"
                         f"{fmt_ns(sum(r['blocked_us'] for r in rest) * 1e3):>12}"
                         f"{fmt_ns(sum(r['runnable_us'] for r in rest) * 1e3):>12}")
    lines += threadtime.table_lines(summary.get("thread_time", {}), fmt_ns)
    if not summary.get("sched", True):
        lines.append("off-CPU time by syscall: add --sched (hooks every context switch)")
    lines.append(losses_line(summary))
    return "\n".join(lines)


TRACKING_GAPS = ("threads_full", "fds_full", "depth_overflow", "phase_mismatch")


def losses_line(summary: dict[str, Any]) -> str:
    """Every loss, by source, in one line ("lost: none" when there is none)."""
    lost = {k: v for k, v in summary.get("lost_events", {}).items() if v}
    gaps = {k: v for k, v in summary.get("tracking_gaps", {}).items() if v}
    if not lost and not gaps:
        return "lost: none (ring buffer, stack and offcpu maps, thread/fd tracking)"
    parts = [f"{k} {v}" for k, v in lost.items()] + [f"{k} {v}" for k, v in gaps.items()]
    return "lost: " + ", ".join(parts) + " (summary.json lost_events, tracking_gaps)"


def format_table(summary: dict[str, Any]) -> str:
    """The breakdown table, 80 columns."""
    if not summary["writes"]["count"] and summary.get("sample_breakdown"):
        return format_sample_table(summary)
    comps = summary["components"]
    raw = summary["components_raw"]
    lines = [f"{'component':<16}{'count':>8}{'mean':>9}{'p50':>9}{'p99':>9}"
             f"{'p99.9':>9}{'share':>7}{'raw mean':>10}"]
    order = sorted(comps, key=lambda c: -comps[c]["sum_ns"])
    for c in order:
        s = comps[c]
        flag = "!" if s.get("unreliable") else " "
        lines.append(f"{c:<15}{flag}{s['count']:>8}{fmt_ns(s['mean_ns']):>9}"
                     f"{fmt_ns(s['p50_ns']):>9}{fmt_ns(s['p99_ns']):>9}"
                     f"{fmt_ns(s['p999_ns']):>9}{s['share'] * 100:>6.1f}%"
                     f"{fmt_ns(raw[c]['mean_ns']):>10}")
    d = summary["writes"]["duration_adj"]
    sq = summary.get("sqlite")
    total = "txn (total)" if sq else "write (total)"
    lines.append(f"{total:<16}{summary['writes']['count']:>8}"
                 f"{fmt_ns(d['mean_ns']):>9}{fmt_ns(d['p50_ns']):>9}"
                 f"{fmt_ns(d['p99_ns']):>9}{fmt_ns(d['p999_ns']):>9}{'100.0%':>7}"
                 f"{fmt_ns(summary['writes']['duration']['mean_ns']):>10}")
    q = summary["queue_breakdown"]
    qs = sum(q[p]["sum_ns"] for p in QUEUE_PARTS)
    if qs:
        lines.append("queue behind: " + ", ".join(
            f"{p.replace('queue_behind_', '').replace('queue_', '')} "
            f"{q[p]['sum_ns'] / qs * 100:.0f}%" for p in QUEUE_PARTS))
    g = summary["groups"]
    w = summary["wal"]
    if sq:
        lines.append(
            f"transactions: {sq['explicit']} BEGIN..COMMIT, {sq['autocommit']} "
            f"autocommit, {sq['rollbacks']} rolled back; journal: "
            f"{sq['journal_sync']['count']} syncs, {sq['journal_write']['count']} writes, "
            f"{sq['journal_unlink']['count']} unlinks; db: {sq['db_sync']['count']} "
            f"syncs; dir: {sq['dir_sync']['count']} syncs; "
            f"{sq['checkpoints']} with a checkpoint")
        for typ, v in summary.get("by_type", {}).items():
            lines.append(f"  {typ:<14}{v['count']:>7} txns, mean {fmt_ns(v['mean_adj_ns'])}"
                         f" (workload's own: {fmt_ns(v['app_mean_ns'])})")
    else:
        roles = (f"{g['leaders']} leaders, {g['followers']} followers"
                 if g["leaders"] is not None else
                 "roles not known (no write called the WAL; --mode full counts them)")
        lines.append(f"groups: {roles}; WAL: {w['sync']['count']} syncs, "
                     f"{w['write']['count']} writes, {w['write']['bytes']} B")
    for comp, f in summary.get("sampled_split", {}).items():
        if f.get("applied"):
            lines.append(f"{comp}: {f['fraction'] * 100:.1f}% (+-{f['stderr'] * 100:.1f}) of "
                         f"{f['parent']}, from {f['samples']} samples (no probes)")
        else:
            lines.append(f"{comp}: inside {f['parent']} (too few samples to split: "
                         f"{f['samples']})")
    over = sum(c.get("overhead_ns", 0) for c in comps.values())
    band = summary.get("calibration", {}).get("band", 0.0)
    n = summary["writes"]["count"]
    if over and n:
        lines.append(f"probe overhead removed: {fmt_ns(over / n)} per "
                     f"{'transaction' if sq else 'write'} (+-{band * 100:.0f}%: "
                     "warm vs cold caches)")
    if summary["unreliable_components"]:
        lines.append("! probe overhead is over half of these components: "
                     + ", ".join(summary["unreliable_components"])
                     + (" (try --mode sample)" if summary.get("mode") == "writes"
                        else " (try --mode writes or sample)"))
    lines.append(losses_line(summary))
    return "\n".join(lines)
