#!/usr/bin/env python3
"""Peak memory of the Python side's analysis, flame graphs and report, per
phase, at two run lengths: does it grow with the number of writes?

    sudo bench/analysis_memory.py [--template RUN] [--factors 2,10]

Takes the raw records of a real run folder (made here with an 8 s traced
4-thread db_bench fillrandom unless --template is given), repeats them
FACTOR times into a new folder, and runs walscope's analysis, folding and
report on it in this process, sampling its resident memory every 20 ms.
The growth between the two factors, per added write, is the figure that
must stay near zero (bench/load.py measures a real 5-minute run).
Writes analysis_memory.json and analysis_memory.md to bench/results.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RAW_SKIP = {"stacks.bin", "offcpu.bin"}   # dumped once per run: not repeated


def rss_mb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return 0


class PeakByPhase:
    def __init__(self) -> None:
        self.phase = "start"
        self.peaks: dict[str, int] = {}
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            self.peaks[self.phase] = max(self.peaks.get(self.phase, 0), rss_mb())
            time.sleep(0.02)


def make_template(work: Path) -> Path:
    from bench.template import traced_db_bench
    return traced_db_bench(work, "--sync=false", "--threads=4", "--duration=8",
                           "--num=100000000", mode="writes")


def repeat(src: Path, dst: Path, factor: int) -> None:
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.suffix == ".bin" and f.name not in RAW_SKIP:
            with open(f, "rb") as i, open(dst / f.name, "wb") as o:
                for _ in range(factor):
                    i.seek(0)
                    shutil.copyfileobj(i, o, 1 << 24)
        elif f.is_file() and f.suffix not in (".parquet", ".svg", ".html", ".folded"):
            shutil.copy(f, dst / f.name)


def measure(run_dir: Path) -> dict:
    """In a child process, so each measurement starts from a fresh heap."""
    code = f"""
import json, sys, time
sys.path.insert(0, {str(ROOT)!r})
sys.argv = ["x"]
from bench.analysis_memory import PeakByPhase
from analysis.heap import keep_heap_small
from analysis import run as RUN
from viz import flamegraph, report
from pathlib import Path
keep_heap_small()
d = Path({str(run_dir)!r})
m = PeakByPhase()
t = time.monotonic()
m.phase = "analyse"
s = RUN.analyse(d)
m.phase = "flame graphs"
flamegraph.render_run(d)
m.phase = "report"
report.build(report.find_runs([d]), d / "report.html")
time.sleep(0.1)
print(json.dumps({{"writes": s["writes"]["count"], "peaks_mb": m.peaks,
                  "seconds": round(time.monotonic() - t, 1)}}))
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"analysis_memory: {p.stderr.strip()[-500:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--template", type=Path, help="a run folder (default: trace one)")
    ap.add_argument("--factors", default="2,10")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args(argv)
    factors = [int(x) for x in a.factors.split(",")]
    results = []
    with tempfile.TemporaryDirectory(prefix="walscope-mem-") as t:
        work = Path(t)
        src = a.template or make_template(work)
        for k in factors:
            d = work / f"x{k}"
            repeat(src, d, k)
            r = measure(d)
            r["factor"] = k
            results.append(r)
            print(json.dumps(r), flush=True)
            shutil.rmtree(d)
    lo, hi = results[0], results[-1]
    peak = {r["factor"]: max(r["peaks_mb"].values()) for r in results}
    per_write = (peak[hi["factor"]] - peak[lo["factor"]]) * 2**20 / \
        max(1, hi["writes"] - lo["writes"])
    lines = ["| writes | " + " | ".join(lo["peaks_mb"]) + " | peak | seconds |",
             "|---|" + "---|" * (len(lo["peaks_mb"]) + 2)]
    for r in results:
        lines.append(f"| {r['writes']:,} | " + " | ".join(
            f"{r['peaks_mb'].get(p, 0)} MB" for p in lo["peaks_mb"])
            + f" | {max(r['peaks_mb'].values())} MB | {r['seconds']} |")
    lines.append(f"\ngrowth: {per_write:.1f} bytes per added write")
    text = "\n".join(lines)
    print(text)
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / "analysis_memory.json").write_text(json.dumps(
        {"runs": results, "bytes_per_added_write": per_write}, indent=2) + "\n")
    (a.output / "analysis_memory.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
