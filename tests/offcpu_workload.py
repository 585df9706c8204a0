"""A known off-CPU workload for the tests, measuring itself.

    python3 tests/offcpu_workload.py OUT.json CPU SLEEPS SLEEP_S SPIN_S

Pinned to CPU, it sleeps SLEEPS times SLEEP_S (blocked time the kernel
must show under nanosleep), then spins SPIN_S while the test runs an
untraced spinner on the same CPU (runnable time: the spin's wall time less
its own CPU time).  It imports sqlite3 so walscope finds an engine.
"""
import json
import os
import sqlite3
import sys
import time


def main() -> int:
    out, cpu = sys.argv[1], int(sys.argv[2])
    sleeps, sleep_s, spin_s = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    os.sched_setaffinity(0, {cpu})
    sqlite3.connect(":memory:").execute("SELECT 1")
    t0 = time.monotonic()
    for _ in range(sleeps):
        time.sleep(sleep_s)
    slept = time.monotonic() - t0
    w0, c0 = time.monotonic(), time.thread_time()
    while time.monotonic() - w0 < spin_s:
        pass
    wall, cpu_s = time.monotonic() - w0, time.thread_time() - c0
    with open(out, "w") as f:
        json.dump({"sleep_wall_s": slept, "spin_wall_s": wall, "spin_cpu_s": cpu_s}, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
