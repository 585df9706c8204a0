#!/usr/bin/env python3
"""What `walscope serve --all` costs a process it does not trace: a shell
loop's fork and exec time, with serve --all running and without.

    sudo bench/all_exec.py [--execs 3000] [--reps 5] [-o bench/results]

A SQLite "server" (WAL, synchronous=FULL) commits a transaction every
--pause-ms the whole time, in both arms: it is the process serve --all
finds and traces, so windows open and close as they would on a host with
a database.  Each rep times the loop (`bash`, --execs runs of /bin/true)
untraced, with serve --all running, and untraced again; A/A is the
second untraced time over the first, the cost is serve's over their
mean.  The loop's processes are checked to be untraced (serve names each
process it traces).  Reported (all-exec.json, .md): per rep the three
times per exec, and the medians.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WALSCOPE = str(ROOT / ".venv" / "bin" / "walscope")
SERVER = r'''
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT)")
print("ready", flush=True)
pause = float(sys.argv[2]) / 1000
while True:
    db.execute("INSERT INTO t(v) VALUES ('row')")
    time.sleep(pause)
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loop_us(execs: int) -> float:
    """The shell loop's time per fork and exec, in microseconds."""
    t0 = time.monotonic()
    subprocess.run(["bash", "-c", f"for ((i=0;i<{execs};i++)); do /bin/true; done"],
                   check=True)
    return (time.monotonic() - t0) / execs * 1e6


def served(execs: int, work: Path, server_pid: int) -> tuple[float, list[str]]:
    """The loop's time with serve --all running (once it traces the
    server), and what serve said it traced."""
    out = work / "o"
    serve = subprocess.Popen([WALSCOPE, "serve", "--all", "--listen",
                              f"127.0.0.1:{free_port()}", "-o", str(out)],
                             cwd=ROOT, stderr=subprocess.PIPE, text=True)
    said: list[str] = []
    try:
        while f"pid {server_pid} (" not in (said[-1] if said else ""):
            said.append(serve.stderr.readline())
            if not said[-1]:
                raise SystemExit("serve stopped: " + "".join(said))
        us = loop_us(execs)
        serve.send_signal(signal.SIGTERM)
        rest, _ = serve.communicate(timeout=120)
        said += rest.splitlines(keepends=True)
    finally:
        if serve.poll() is None:
            serve.kill()
        subprocess.run(["rm", "-rf", str(out)])
    return us, [line for line in said if ") traced" in line]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--execs", type=int, default=3000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pause-ms", type=float, default=2.0)
    ap.add_argument("-o", "--out", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("all_exec: needs root (serve traces)")
    reps = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        srv = subprocess.Popen([sys.executable, "-c", SERVER, str(work / "t.db"),
                                str(a.pause_ms)], stdout=subprocess.PIPE, text=True)
        try:
            assert srv.stdout.readline().strip() == "ready"
            loop_us(a.execs // 4)          # warm: bash, the page cache
            for r in range(a.reps):
                first = loop_us(a.execs)
                traced_us, traced = served(a.execs, work, srv.pid)
                second = loop_us(a.execs)
                rep = {"untraced_us": first, "served_us": traced_us,
                       "untraced_again_us": second, "aa": second / first,
                       "ratio": traced_us / ((first + second) / 2),
                       "traced": [line.strip() for line in traced]}
                reps.append(rep)
                print(f"rep {r + 1}: untraced {first:.0f} us, serve --all {traced_us:.0f} us, "
                      f"again {second:.0f} us: ratio {rep['ratio']:.3f} (A/A {rep['aa']:.3f}); "
                      f"traced {len(traced)} process(es)", flush=True)
        finally:
            srv.kill()
    result = {
        "command": " ".join(["bench/all_exec.py", f"--execs {a.execs}", f"--reps {a.reps}",
                             f"--pause-ms {a.pause_ms:g}"]),
        "date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(), "reps": reps,
        "ratio_median": statistics.median(r["ratio"] for r in reps),
        "aa_median": statistics.median(r["aa"] for r in reps),
        "untraced_us_median": statistics.median(r["untraced_us"] for r in reps),
        "served_us_median": statistics.median(r["served_us"] for r in reps),
        "only_the_server_traced": all(len(r["traced"]) == 1 for r in reps),
    }
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "all-exec.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [
        "# serve --all: what it costs a process it does not trace",
        "",
        f"`sudo {result['command']}` ({result['date']}, {result['cpus']} CPUs). A SQLite "
        f"server commits (synced) every {a.pause_ms:g} ms throughout; serve --all traces it. "
        f"The loop runs /bin/true {a.execs} times from bash; each rep times it untraced, "
        "with serve --all running, and untraced again.",
        "",
        "| rep | untraced (us/exec) | serve --all | untraced again | serve / untraced | A/A |",
        "|---|---|---|---|---|---|",
    ]
    for i, r in enumerate(reps, 1):
        lines.append(f"| {i} | {r['untraced_us']:.0f} | {r['served_us']:.0f} | "
                     f"{r['untraced_again_us']:.0f} | {r['ratio']:.3f} | {r['aa']:.3f} |")
    lines += ["", f"Median: serve / untraced **{result['ratio_median']:.3f}**, A/A "
              f"{result['aa_median']:.3f}. Only the server was traced in every rep: "
              f"{result['only_the_server_traced']}.", ""]
    (a.out / "all-exec.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
