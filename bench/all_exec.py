#!/usr/bin/env python3
"""What `walscope serve --all` costs a process it does not trace: a shell
loop's fork and exec time, with serve --all running and without.

    sudo bench/all_exec.py [--execs 3000] [--reps 5] [-o bench/results]

A SQLite "server" (WAL, synchronous=FULL) commits a transaction every
--pause-ms the whole time, in both arms: it is the process serve --all
finds and traces, so windows open and close as they would on a host with
a database.  Each rep times the loop (`bash`, --execs runs of /bin/true)
untraced, with `serve -p SERVER` and with `serve --all` running (in
turns), and untraced again; A/A is the second untraced time over the
first, each cost is serve's over their mean, and --all over -p is what
finding processes adds to what tracing one costs the host.  The loop's
processes are checked to be untraced (serve names each process it
traces).  Reported (all-exec.json, .md): per rep the times per exec, and
the medians.
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


def served(execs: int, work: Path, server_pid: int, who: list[str]
           ) -> tuple[float, list[str]]:
    """The loop's time with serve running (who: --all, or -p the server),
    once it traces the server, and the processes serve said it traced."""
    out = work / "o"
    serve = subprocess.Popen([WALSCOPE, "serve", *who, "--listen",
                              f"127.0.0.1:{free_port()}", "-o", str(out)],
                             cwd=ROOT, stderr=subprocess.PIPE, text=True)
    said: list[str] = []
    try:
        while f"pid {server_pid} " not in (said[-1] if said else ""):
            said.append(serve.stderr.readline())
            if not said[-1]:
                raise SystemExit("serve stopped: " + "".join(said))
        us = loop_us(execs)
        serve.send_signal(signal.SIGTERM)
        _, rest = serve.communicate(timeout=120)
        said += rest.splitlines(keepends=True)
    finally:
        if serve.poll() is None:
            serve.kill()
        subprocess.run(["rm", "-rf", str(out)])
    return us, [line for line in said if line.startswith("walscope serve: pid ")]


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
                # -p and --all in turns, first one then the other
                arms = [["-p", str(srv.pid)], ["--all"]][::1 if r % 2 else -1]
                got = {arm[0]: served(a.execs, work, srv.pid, arm) for arm in arms}
                second = loop_us(a.execs)
                base = (first + second) / 2
                (p_us, _), (all_us, traced) = got["-p"], got["--all"]
                rep = {"untraced_us": first, "p_us": p_us, "served_us": all_us,
                       "untraced_again_us": second, "aa": second / first,
                       "p_ratio": p_us / base, "ratio": all_us / base,
                       "all_over_p": all_us / p_us,
                       "traced": [line.strip() for line in traced]}
                reps.append(rep)
                print(f"rep {r + 1}: untraced {first:.0f} us, serve -p {p_us:.0f} us, "
                      f"serve --all {all_us:.0f} us, again {second:.0f} us: -p "
                      f"{rep['p_ratio']:.3f}, --all {rep['ratio']:.3f} (A/A {rep['aa']:.3f}); "
                      f"--all traced {len(traced)} process(es)", flush=True)
        finally:
            srv.kill()
    result = {
        "command": " ".join(["bench/all_exec.py", f"--execs {a.execs}", f"--reps {a.reps}",
                             f"--pause-ms {a.pause_ms:g}"]),
        "date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(), "reps": reps,
        "ratio_median": statistics.median(r["ratio"] for r in reps),
        "p_ratio_median": statistics.median(r["p_ratio"] for r in reps),
        "all_over_p_median": statistics.median(r["all_over_p"] for r in reps),
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
        "with `serve -p SERVER` and with `serve --all` running (in turns), and untraced "
        "again. `-p` pays the host-wide tracepoints too: --all / -p is what finding "
        "processes adds.",
        "",
        "| rep | untraced (us/exec) | serve -p | serve --all | untraced again "
        "| -p / untraced | --all / untraced | --all / -p | A/A |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for i, r in enumerate(reps, 1):
        lines.append(f"| {i} | {r['untraced_us']:.0f} | {r['p_us']:.0f} | "
                     f"{r['served_us']:.0f} | {r['untraced_again_us']:.0f} | "
                     f"{r['p_ratio']:.3f} | {r['ratio']:.3f} | {r['all_over_p']:.3f} | "
                     f"{r['aa']:.3f} |")
    lines += ["", f"Median: --all / untraced **{result['ratio_median']:.3f}**, -p / untraced "
              f"{result['p_ratio_median']:.3f}, --all / -p **{result['all_over_p_median']:.3f}**"
              f"; A/A {result['aa_median']:.3f}. Only the server was traced by --all in "
              f"every rep: {result['only_the_server_traced']}.", ""]
    (a.out / "all-exec.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
