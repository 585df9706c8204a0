"""How many acknowledged SQLite commits survive a crash (stdlib only).

    python3 runners/workloads/sqlite_acks.py write DB JOURNAL_MODE SYNCHRONOUS ACK_FILE
    python3 runners/workloads/sqlite_acks.py verify DB N

write: one INSERT per transaction (row i has id i+1); after each COMMIT
returns, the count of acknowledged commits goes into a shared mapping of
ACK_FILE, which survives the process being killed.  Runs until killed.
verify: reopen (hot-journal rollback or WAL recovery happen here) and print
    verify: present P of N, prefix Q, integrity ok|<message>
"""
import mmap
import os
import sqlite3
import struct
import sys


def write(db: str, mode: str, sync: str, ack_file: str) -> int:
    fd = os.open(ack_file, os.O_RDWR | os.O_CREAT, 0o644)
    os.ftruncate(fd, 4096)
    acked = mmap.mmap(fd, 4096)
    con = sqlite3.connect(db, isolation_level=None)
    con.execute(f"PRAGMA journal_mode={mode}")
    con.execute(f"PRAGMA synchronous={sync}")
    con.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)")
    print("ready", flush=True)
    i = 0
    while True:
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO t (id, v) VALUES (?, ?)", (i + 1, "v" * 100))
        con.execute("COMMIT")
        i += 1
        acked[:8] = struct.pack("<q", i)


def verify(db: str, n: int) -> int:
    con = sqlite3.connect(db, isolation_level=None)
    ids = {r[0] for r in con.execute("SELECT id FROM t WHERE id <= ?", (n,))}
    prefix = next((i for i in range(1, n + 1) if i not in ids), n + 1) - 1
    check = con.execute("PRAGMA integrity_check").fetchone()[0]
    print(f"verify: present {len(ids)} of {n}, prefix {prefix}, integrity {check}")
    return 0


def main() -> int:
    if len(sys.argv) == 7 - 1 and sys.argv[1] == "write":
        return write(*sys.argv[2:6])
    if len(sys.argv) == 4 and sys.argv[1] == "verify":
        return verify(sys.argv[2], int(sys.argv[3]))
    print(__doc__.strip().splitlines()[2], file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
