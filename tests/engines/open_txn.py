"""A SQLite client that is inside a transaction when a tracer attaches:
it begins one and inserts a row, says so, waits for a go file, then makes
FOLLOW more statements and commits, then makes N transactions of its own
(BEGIN IMMEDIATE, an insert, COMMIT) and prints their count:
tests/test_sqlite_joined_root.py.

    python3 open_txn.py DB GO_FILE FOLLOW N"""
from __future__ import annotations

import os
import sqlite3
import sys
import time


def main() -> int:
    db, go, follow, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA journal_mode=wal")
    con.execute("PRAGMA synchronous=full")
    con.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    con.execute("BEGIN IMMEDIATE")
    con.execute("INSERT INTO t (v) VALUES ('before the tracer')")
    print("open", flush=True)
    while not os.path.exists(go):      # the test's go: the tracer is in
        time.sleep(0.01)
    for i in range(follow):
        con.execute("INSERT INTO t (v) VALUES (?)", (f"inside {i}",))
    con.execute("COMMIT")
    for i in range(n):
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO t (v) VALUES (?)", (f"own {i}",))
        con.execute("COMMIT")
    print(f"transactions {n}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
