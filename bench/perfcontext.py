#!/usr/bin/env python3
"""Compensated components against RocksDB's own PerfContext (untraced).

    sudo bench/perfcontext.py [--num 30000] [--reps 3] [-o bench/results]

db_bench fillrandom sync=false, 1 thread, pipelined writes off,
--perf_level=3: untraced, PerfContext's write_wal_time and
write_memtable_time per write are the reference; traced in full and writes
mode, walscope's compensated means of the same spans (wal = crc +
wal_append + wal_write_io + wal_sync_io; memtable) are set against them.
Medians over --reps runs.  Goal (issue 3): within 25%.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACE = [str(ROOT / ".venv" / "bin" / "python"), str(ROOT / "trace_wal.py")]
WAL_PARTS = ("crc", "wal_append", "wal_write_io", "wal_sync_io")


def args(db: Path, num: int) -> list[str]:
    return ["db_bench", f"--db={db}", "--benchmarks=fillrandom", f"--num={num}",
            "--threads=1", "--sync=false", "--enable_pipelined_write=false",
            "--perf_level=3"]


def perf_context(text: str, num: int) -> dict[str, float]:
    got = {k: int(v) for k, v in re.findall(r"(write_\w+) = (\d+)", text)}
    if "write_wal_time" not in got:
        raise SystemExit("perfcontext: db_bench printed no PERF_CONTEXT")
    return {"wal": got["write_wal_time"] / num, "memtable": got["write_memtable_time"] / num}


def traced(mode: str, tmp: Path, num: int, rep: int) -> dict[str, float]:
    out = tmp / f"{mode}{rep}"
    p = subprocess.run(TRACE + ["-q", "--mode", mode, "-o", str(out), "--",
                                *args(tmp / f"db-{mode}{rep}", num)],
                       capture_output=True, text=True, timeout=1200)
    if p.returncode != 0:
        raise SystemExit(f"perfcontext: trace failed: {p.stderr[-500:]}")
    c = json.loads((out / "summary.json").read_text())["components"]
    return {"wal": sum(c[k]["mean_ns"] for k in WAL_PARTS), "memtable": c["memtable"]["mean_ns"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num", type=int, default=30000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"untraced": [], "full": [], "writes": []}
    with tempfile.TemporaryDirectory(prefix="walscope-pc-") as d:
        tmp = Path(d)
        for rep in range(a.reps):
            p = subprocess.run(args(tmp / f"db-u{rep}", a.num), capture_output=True,
                               text=True, timeout=600)
            runs["untraced"].append(perf_context(p.stdout + p.stderr, a.num))
            for mode in ("full", "writes"):
                runs[mode].append(traced(mode, tmp, a.num, rep))
    med = {k: {s: statistics.median(r[s] for r in v) for s in ("wal", "memtable")}
           for k, v in runs.items()}
    ref = med["untraced"]
    lines = ["| span | PerfContext (untraced) | full | writes |", "|---|---|---|---|"]
    for s in ("wal", "memtable"):
        lines.append(f"| {s} | {ref[s] / 1e3:.2f} us | "
                     + " | ".join(f"{med[m][s] / 1e3:.2f} us ({med[m][s] / ref[s]:.2f}x)"
                                  for m in ("full", "writes")) + " |")
    md = (f"# Compensated components vs PerfContext\n\ndb_bench fillrandom sync=false, "
          f"1 thread, {a.num} writes, pipelined writes off, perf_level=3; medians of "
          f"{a.reps} runs each.\n\n" + "\n".join(lines) + "\n")
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / "perfcontext.md").write_text(md)
    (a.output / "perfcontext.json").write_text(json.dumps({"runs": runs, "median": med},
                                                          indent=1) + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
