"""A known SQLite workload for the tests: N single-row INSERT transactions.

    python3 tests/sqlite_workload.py DB JOURNAL_MODE SYNCHRONOUS N [--checkpoint]
                                     [--getppid K]

Set-up (schema, journal mode) runs first; with --checkpoint, a
``PRAGMA wal_checkpoint(TRUNCATE)`` follows the inserts.  With --getppid K,
each INSERT calls a SQL function that makes K getppid() syscalls, which
walscope does not trace: they must show up as untraced syscalls of sql_exec.
"""
import os
import sqlite3
import sys


def burn(k: int) -> str:
    for _ in range(k):
        os.getppid()
    return "v" * 200


def main() -> int:
    db, mode, sync, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    con = sqlite3.connect(db, isolation_level=None)
    con.execute(f"PRAGMA journal_mode={mode}")
    con.execute(f"PRAGMA synchronous={sync}")
    con.execute("PRAGMA wal_autocheckpoint=0")   # checkpoints only when asked
    con.execute("CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v TEXT)")
    k = int(sys.argv[sys.argv.index("--getppid") + 1]) if "--getppid" in sys.argv else 0
    con.create_function("burn", 1, burn)
    for i in range(n):
        con.execute("BEGIN IMMEDIATE")
        if k:
            con.execute("INSERT INTO t (v) VALUES (burn(?))", (k,))
        else:
            con.execute("INSERT INTO t (v) VALUES (?)", ("v" * 200,))
        con.execute("COMMIT")
    if "--checkpoint" in sys.argv:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
