"""Run the mix: client processes, per-transaction latency, the results file."""
from __future__ import annotations

import csv
import json
import multiprocessing
import os
import random
import shutil
import sqlite3
import statistics
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from runners.workloads.sqlite_tpcc import schema, txns

JOURNAL_MODES = ("delete", "truncate", "persist", "memory", "wal", "off")
SYNCHRONOUS = ("off", "normal", "full", "extra")
RESULT_FIELDS = ("client", "pid", "tid", "type", "start_ns", "end_ns", "latency_ns",
                 "ok", "rolled_back", "error")


@dataclass(frozen=True)
class Config:
    db: str
    journal_mode: str = "delete"
    synchronous: str = "full"
    warehouses: int = 1
    scale: float = 0.01
    duration: float | None = None
    transactions: int | None = 200
    clients: int = 1
    seed: int = 1
    busy_timeout_ms: int = 10_000
    wal_autocheckpoint: int = 1000
    template_dir: str | None = None


def template_for(cfg: Config) -> Path:
    """A loaded, pristine database for these cardinalities, built once
    (beside the database, or in template_dir)."""
    db = Path(cfg.db)
    name = f"tpcc.w{cfg.warehouses}-s{cfg.scale:g}-seed{cfg.seed}.template"
    tpl = (Path(cfg.template_dir) if cfg.template_dir else db.parent) / name
    if not tpl.exists():
        tpl.parent.mkdir(parents=True, exist_ok=True)
        tmp = tpl.with_suffix(".loading")
        tmp.unlink(missing_ok=True)
        con = sqlite3.connect(tmp, isolation_level=None)
        con.execute("PRAGMA journal_mode=off")
        con.execute("PRAGMA synchronous=off")
        schema.load(con, schema.Scale(cfg.warehouses, cfg.scale), cfg.seed)
        con.close()
        tmp.replace(tpl)
    return tpl


def prepare(cfg: Config) -> None:
    """A fresh copy of the template in the journal mode asked for."""
    tpl = template_for(cfg)
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(cfg.db + suffix).unlink(missing_ok=True)
    shutil.copyfile(tpl, cfg.db)
    con = sqlite3.connect(cfg.db, isolation_level=None)
    con.execute(f"PRAGMA journal_mode={cfg.journal_mode}")
    con.close()


def connect(cfg: Config) -> sqlite3.Connection:
    con = sqlite3.connect(cfg.db, isolation_level=None, check_same_thread=False,
                          timeout=cfg.busy_timeout_ms / 1000)
    con.execute(f"PRAGMA journal_mode={cfg.journal_mode}")
    con.execute(f"PRAGMA synchronous={cfg.synchronous}")
    con.execute(f"PRAGMA wal_autocheckpoint={cfg.wal_autocheckpoint}")
    return con


def client(args: tuple[Config, int]) -> list[dict]:
    cfg, idx = args
    sc = schema.Scale(cfg.warehouses, cfg.scale)
    rng = random.Random(cfg.seed * 1000 + idx)
    keys = txns.Keys.new(random.Random(cfg.seed), sc)  # C constants: run-wide
    keys.rng = rng
    con = connect(cfg)
    cur = con.cursor()
    rows: list[dict] = []
    pid, tid = os.getpid(), threading.get_native_id()
    share = None
    if cfg.transactions is not None:
        share = cfg.transactions // cfg.clients + (idx < cfg.transactions % cfg.clients)
    deadline = time.monotonic() + cfg.duration if cfg.duration else None
    while (share is None or len(rows) < share) and \
            (deadline is None or time.monotonic() < deadline):
        typ = keys.pick_type()
        w = rng.randint(1, cfg.warehouses)
        ok, rolled, err = 1, 0, ""
        t0 = time.monotonic_ns()
        try:
            cur.execute("BEGIN IMMEDIATE")
            try:
                txns.RUN[typ](cur, keys, w)
                cur.execute("COMMIT")
            except txns.Rollback:
                cur.execute("ROLLBACK")
                rolled = 1
        except sqlite3.Error as e:
            ok, err = 0, str(e).split("\n")[0]
            if con.in_transaction:
                cur.execute("ROLLBACK")
        t1 = time.monotonic_ns()
        rows.append(dict(client=idx, pid=pid, tid=tid, type=typ, start_ns=t0,
                         end_ns=t1, latency_ns=t1 - t0, ok=ok, rolled_back=rolled,
                         error=err))
    con.close()
    return rows


def run(cfg: Config) -> list[dict]:
    prepare(cfg)
    if cfg.clients == 1:
        return client((cfg, 0))
    with multiprocessing.get_context("fork").Pool(cfg.clients) as pool:
        parts = pool.map(client, [(cfg, i) for i in range(cfg.clients)])
    return [r for p in parts for r in p]


def summarize(rows: list[dict], elapsed_s: float) -> dict:
    out: dict = {"elapsed_s": elapsed_s, "transactions": len(rows), "types": {}}
    for typ, _ in txns.MIX:
        lat = sorted(r["latency_ns"] for r in rows if r["type"] == typ and r["ok"])
        if not lat:
            continue
        out["types"][typ] = {
            "count": len(lat),
            "mean_ms": statistics.fmean(lat) / 1e6,
            "p50_ms": lat[len(lat) // 2] / 1e6,
            "p99_ms": lat[min(len(lat) - 1, int(len(lat) * 0.99))] / 1e6,
            "per_minute": len(lat) / elapsed_s * 60 if elapsed_s else 0.0,
        }
    committed_no = sum(1 for r in rows if r["type"] == "new_order" and r["ok"]
                       and not r["rolled_back"])
    out["tpmC"] = committed_no / elapsed_s * 60 if elapsed_s else 0.0
    out["errors"] = sum(1 for r in rows if not r["ok"])
    out["rolled_back"] = sum(r["rolled_back"] for r in rows)
    return out


def write_results(path: Path, rows: list[dict], summary: dict, cfg: Config) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=RESULT_FIELDS)
        wr.writeheader()
        wr.writerows(sorted(rows, key=lambda r: r["start_ns"]))
    tmp.replace(path)
    meta = {"workload": "sqlite_tpcc", "config": asdict(cfg), "summary": summary,
            "sqlite_version": sqlite3.sqlite_version}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")


def format_summary(s: dict) -> str:
    lines = [f"{'type':<14}{'count':>7}{'mean ms':>9}{'p50 ms':>9}{'p99 ms':>9}"
             f"{'per min':>9}"]
    for typ, v in s["types"].items():
        lines.append(f"{typ:<14}{v['count']:>7}{v['mean_ms']:>9.3f}{v['p50_ms']:>9.3f}"
                     f"{v['p99_ms']:>9.3f}{v['per_minute']:>9.0f}")
    lines.append(f"tpmC {s['tpmC']:.0f} (new orders committed per minute); "
                 f"{s['rolled_back']} rolled back, {s['errors']} errors, "
                 f"{s['elapsed_s']:.1f} s")
    return "\n".join(lines)
