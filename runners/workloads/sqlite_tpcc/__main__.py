"""python3 -m runners.workloads.sqlite_tpcc [options]: load once, run the mix, report."""
from __future__ import annotations

import argparse
import os
import sqlite3
import stat
import sys
import tempfile
import time
from pathlib import Path

from runners.workloads.sqlite_tpcc import driver


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
    ap = argparse.ArgumentParser(prog="python3 -m runners.workloads.sqlite_tpcc",
                                 description="A TPC-C-like SQLite workload "
                                 "(stdlib only; fixed seed; explicit BEGIN "
                                 "IMMEDIATE ... COMMIT).")
    ap.add_argument("--db", help="database file (default: tpcc.db in a new "
                    "temporary folder, removed at the end)")
    ap.add_argument("--template-dir", help="where the loaded template database is "
                    "kept (default: beside --db; without --db, a per-user folder "
                    "in the temporary directory)")
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
                    "under trace_wal.py, else DB-results.csv beside the database, "
                    "which without --db is a temporary folder that is kept)")
    return ap


def template_cache() -> str | None:
    """This user's folder of loaded templates in the temporary directory,
    kept between runs; None when the name is taken by something else."""
    d = Path(tempfile.gettempdir()) / f"walscope-tpcc-{os.getuid()}"
    try:
        d.mkdir(mode=0o700, exist_ok=True)
        st = d.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return None
    return str(d)


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    run_dir = os.environ.get("WALSCOPE_RUN_DIR")
    scratch = None
    if a.db is None:     # never in the current folder: a temporary one
        scratch = Path(tempfile.mkdtemp(prefix="walscope-tpcc-"))
        a.db = str(scratch / "tpcc.db")
        a.template_dir = a.template_dir or template_cache() or str(scratch)
    results = a.results or (Path(run_dir) / "txlog.csv" if run_dir
                            else Path(f"{a.db}-results.csv"))
    try:
        return run(a, results)
    finally:
        if scratch is not None:
            for suffix in ("", "-journal", "-wal", "-shm"):
                Path(a.db + suffix).unlink(missing_ok=True)
            if not any(scratch.iterdir()):
                scratch.rmdir()


def run(a: argparse.Namespace, results: Path) -> int:
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
