#!/usr/bin/env python3
"""walscope_writes_estimated against the writes a server made, where no
probe counts them: how good is serve's estimate between windows?

    sudo bench/writes_estimated.py [--commits 200000] [--reps 3] [-o bench/results]

A SQLite "server" (one process, WAL mode, synchronous=OFF: commits of a
few microseconds, so the budget windows them) waits under `walscope serve
-p`, then commits --commits transactions and says so; serve is read until
its metrics settle.  The truth is the server's own count.  Reported
(writes-estimated.json, .md): per rep the estimate, the rows recorded,
their share, and estimate / truth.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WALSCOPE = str(ROOT / ".venv" / "bin" / "walscope")
SERVER = r'''
import signal, sqlite3, sys, threading
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA synchronous=OFF")
db.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT)")
go = threading.Event()
signal.signal(signal.SIGUSR1, lambda *a: go.set())
print("ready", flush=True)
go.wait()
for i in range(int(sys.argv[2])):
    db.execute("INSERT INTO t(v) VALUES (?)", (f"row {i}",))
print("committed", flush=True)
signal.pause()
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gauges(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    out: dict[str, float] = {}
    for name in ("walscope_writes_estimated", "walscope_writes_recorded_total"):
        vals = re.findall(rf"^{name}{{[^}}]*}} (\S+)$", text, re.M)
        out[name] = sum(float(v) for v in vals)
    return out


def one(commits: int, work: Path) -> dict:
    srv = subprocess.Popen([sys.executable, "-c", SERVER, str(work / "t.db"), str(commits)],
                           stdout=subprocess.PIPE, text=True)
    port = free_port()
    serve = None
    try:
        assert srv.stdout.readline().strip() == "ready"
        serve = subprocess.Popen([WALSCOPE, "serve", "-p", str(srv.pid), "--listen",
                                  f"127.0.0.1:{port}", "-o", str(work / "o")],
                                 cwd=ROOT, stderr=subprocess.PIPE, text=True)
        while "traced: metrics at" not in (line := serve.stderr.readline()):
            if not line:
                raise SystemExit("serve stopped")
        t0 = time.monotonic()
        os.kill(srv.pid, signal.SIGUSR1)
        assert srv.stdout.readline().strip() == "committed"
        elapsed = time.monotonic() - t0
        # settled: two reads 3 s apart agree (the windows' lines come at
        # each window's edges; the last gap is counted at the next open)
        last = None
        while (now := gauges(port)) != last:
            last = now
            time.sleep(3)
        return {"commits": commits, "seconds": elapsed,
                "estimated": now["walscope_writes_estimated"],
                "recorded": now["walscope_writes_recorded_total"],
                "ratio": now["walscope_writes_estimated"] / commits}
    finally:
        if serve is not None:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=300)
        srv.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=int, default=200_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args()
    reps = []
    for _ in range(a.reps):
        with tempfile.TemporaryDirectory(prefix="walscope-estimate-") as d:
            reps.append(one(a.commits, Path(d)))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    r = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit,
         "reps": reps}
    lines = ["# walscope_writes_estimated against the server's own count", "",
             f"SQLite, WAL mode, synchronous=OFF, one writer, {a.commits} commits under "
             f"`walscope serve -p` ({r['date']}, commit {commit}).", "",
             "| rep | commits/s | recorded (share) | estimated | estimated / commits |",
             "|---|---|---|---|---|"]
    for i, x in enumerate(reps, 1):
        lines.append(f"| {i} | {x['commits'] / x['seconds']:,.0f} | {x['recorded']:,.0f} "
                     f"({x['recorded'] / x['commits']:.1%}) | {x['estimated']:,.0f} | "
                     f"{x['ratio']:.3f} |")
    lines += ["", f"median estimated / commits: "
              f"{statistics.median(x['ratio'] for x in reps):.3f}"]
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / "writes-estimated.json").write_text(json.dumps(r, indent=1) + "\n")
    (a.output / "writes-estimated.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
