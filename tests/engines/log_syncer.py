"""A program that syncs a SQLite-named WAL (a file whose name ends -wal)
N times from its main thread and another file M times from a second
thread, prints what it did, then stays alive a moment so a last wall
sweep finds both threads: tests/test_log_syncs_root.py.

    python3 log_syncer.py DIR N M"""
from __future__ import annotations

import os
import sys
import threading
import time


def sync_loop(path: str, n: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for _ in range(n):
            os.write(fd, b"x" * 4096)
            os.fdatasync(fd)
    finally:
        os.close(fd)


def main() -> int:
    d, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    other = threading.Thread(target=sync_loop, args=(os.path.join(d, "data.bin"), m))
    other.start()
    sync_loop(os.path.join(d, "t.db-wal"), n)
    other.join()
    print(f"log syncs {n} other syncs {m} tid {threading.get_native_id()}", flush=True)
    time.sleep(0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
