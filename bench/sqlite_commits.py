#!/usr/bin/env python3
"""One SQLite client committing single-row inserts for a fixed time: the
fsync-bound load of bench/rotation.py's sqlite-delete-1c cell.

Two clients of the TPC-C-like driver (bench/overhead.py's DELETE cell)
take turns at SQLite's lock, and one can starve the other for a whole
run: its pairs spread ±7%.  One client has no one to wait for: untraced
runs of 4 s spread ~2% here.  Its own clock (time.perf_counter) times
the commits; the rate is printed and, with --result, written as JSON
with every commit's end (seconds from the first BEGIN).

    python3 bench/sqlite_commits.py DB [--seconds 4] [--journal-mode delete] [--result F]
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db", help="database file (replaced)")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--journal-mode", default="delete", choices=("delete", "wal", "truncate"))
    ap.add_argument("--result", help="write {commits_per_s, ends_s} here")
    a = ap.parse_args()
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.unlink(a.db + suffix)
        except FileNotFoundError:
            pass
    db = sqlite3.connect(a.db, isolation_level=None)
    db.execute(f"PRAGMA journal_mode={a.journal_mode}")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)")
    payload = os.urandom(200)
    ends: list[float] = []
    t0 = time.perf_counter()
    deadline = t0 + a.seconds
    while True:
        db.execute("BEGIN")
        db.execute("INSERT INTO t(v) VALUES (?)", (payload,))
        db.execute("COMMIT")
        ends.append(time.perf_counter() - t0)
        if len(ends) % 16 == 0 and t0 + ends[-1] >= deadline:
            break
    rate = len(ends) / ends[-1]
    print(f"commits/s {rate:.1f}")
    if a.result:
        with open(a.result, "w") as f:
            json.dump({"commits_per_s": rate, "ends_s": ends}, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
