"""python3 -m runners.sqlite_tpcc [options]: load once, run the mix, report."""
from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time
from pathlib import Path

from runners.sqlite_tpcc import driver


def positive_int(s: str) -> int:
    v = int(s)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {s}")
    return v


def scale_value(s: str) -> float:
    v = float(s)
    if not 0 < v <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {s}")
    return v


def positive_float(s: str) -> float:
    v = float(s)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {s}")
    return v


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python3 -m runners.sqlite_tpcc",
                                 description="A TPC-C-like SQLite workload "
                                 "(stdlib only; fixed seed; explicit BEGIN "
                                 "IMMEDIATE ... COMMIT).")
    ap.add_argument("--db", default="tpcc.db",
                    help="database file; a loaded template is kept beside it")
    ap.add_argument("--template-dir", help="where the loaded template database is "
                    "kept (default: beside --db)")
    ap.add_argument("--journal-mode", choices=driver.JOURNAL_MODES, default="delete")
    ap.add_argument("--synchronous", choices=driver.SYNCHRONOUS, default="full")
    ap.add_argument("--warehouses", type=positive_int, default=1)
    ap.add_argument("--scale", type=scale_value, default=0.01,
                    help="fraction of the standard per-warehouse cardinalities")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--duration", type=positive_float, help="seconds to run")
    g.add_argument("--transactions", type=positive_int,
                   help="transactions in all (default 200)")
    ap.add_argument("--clients", type=positive_int, default=1, help="processes")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--wal-autocheckpoint", type=int, default=1000,
                    help="pages (PRAGMA wal_autocheckpoint)")
    ap.add_argument("--results", type=Path,
                    help="per-transaction CSV (default: $WALSCOPE_RUN_DIR/txlog.csv "
                    "under trace_wal.py, else DB-results.csv beside the database)")
    return ap


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    run_dir = os.environ.get("WALSCOPE_RUN_DIR")
    results = a.results or (Path(run_dir) / "txlog.csv" if run_dir
                            else Path(f"{a.db}-results.csv"))
    cfg = driver.Config(db=a.db, journal_mode=a.journal_mode,
                        synchronous=a.synchronous, warehouses=a.warehouses,
                        scale=a.scale, duration=a.duration,
                        transactions=None if a.duration else (a.transactions or 200),
                        clients=a.clients, seed=a.seed,
                        wal_autocheckpoint=a.wal_autocheckpoint,
                        template_dir=a.template_dir)
    try:
        t0 = time.monotonic()
        rows = driver.run(cfg)
        elapsed = time.monotonic() - t0
    except (sqlite3.Error, OSError) as e:
        print(f"sqlite_tpcc: {a.db}: {e}", file=sys.stderr)
        return 1
    summary = driver.summarize(rows, elapsed)
    driver.write_results(results, rows, summary, cfg)
    print(driver.format_summary(summary))
    print(f"results: {results}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
