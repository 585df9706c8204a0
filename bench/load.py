#!/usr/bin/env python3
"""Load: trace 4-thread db_bench fillrandom sync=false for minutes, and
show that memory stays bounded and nothing is dropped unreported.

    sudo bench/load.py [--seconds 300] [--mode writes] [-o bench/results]

Polls the resident memory of trace_wal.py (the Python side, analysis
included) and reads the collector's own peak from collector.json; prints and
saves bench/results/load.md and load.json.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACE = [str(ROOT / ".venv" / "bin" / "python"), str(ROOT / "trace_wal.py")]


def rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(seconds: int, mode: str, work: Path) -> dict:
    out = work / "run"
    cmd = TRACE + ["-q", "--mode", mode, "-o", str(out), "--", "db_bench",
                   f"--db={work}/db", "--benchmarks=fillrandom", "--sync=false",
                   "--threads=4", f"--duration={seconds}", "--num=100000000",
                   "--statistics"]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0
    while p.poll() is None:
        peak = max(peak, rss_kb(p.pid))
        time.sleep(0.2)
    err = p.stderr.read() if p.stderr else ""
    if p.returncode != 0:
        raise SystemExit(f"load: trace_wal.py failed: {err.strip()[-500:]}")
    s = json.loads((out / "summary.json").read_text())
    rep = json.loads((out / "collector.json").read_text())
    sizes = {f.name: f.stat().st_size for f in out.iterdir() if f.suffix in (".bin", ".parquet")}
    return {"seconds": seconds, "mode": mode, "wall_s": round(time.monotonic() - t0, 1),
            "writes": s["writes"]["count"], "records": rep.get("records"),
            "lost_events": s["lost_events"], "python_peak_rss_mb": round(peak / 1024, 1),
            "collector_max_rss_mb": round(rep.get("max_rss_kb", 0) / 1024, 1),
            "collector_cpu_s": round(rep.get("cpu_user_s", 0) + rep.get("cpu_sys_s", 0), 1),
            "files_mb": {k: round(v / 2**20, 1) for k, v in sorted(sizes.items())}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=300)
    ap.add_argument("--mode", default="writes", choices=("full", "writes", "sample"))
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("load: needs root (sudo)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="walscope-load-") as d:
        r = run(a.seconds, a.mode, Path(d))
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / "load.json").write_text(json.dumps(r, indent=1) + "\n")
    md = (f"# Load: db_bench fillrandom sync=false, 4 threads, {r['seconds']} s, "
          f"--mode {r['mode']}\n\n"
          f"| writes traced | records | lost events | trace_wal.py peak RSS | "
          f"collector peak RSS | collector CPU | wall |\n|---|---|---|---|---|---|---|\n"
          f"| {r['writes']} | {r['records']} | {sum(r['lost_events'].values())} | "
          f"{r['python_peak_rss_mb']} MB | {r['collector_max_rss_mb']} MB | "
          f"{r['collector_cpu_s']} s | {r['wall_s']} s |\n\n"
          f"Files (MB): {r['files_mb']}\n")
    (a.output / "load.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
