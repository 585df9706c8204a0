#!/usr/bin/env python3
"""Compensated components against RocksDB's own PerfContext (untraced).

    sudo bench/perfcontext.py [--num 30000] [--reps 3] [-o bench/results]

db_bench fillrandom sync=false, 1 thread, pipelined writes off,
--perf_level=3: untraced, PerfContext's write_wal_time and
write_memtable_time per write are the reference; traced in full and writes
mode, walscope's compensated means of the same spans (wal = crc +
wal_append + wal_write_io + wal_sync_io; memtable) are set against them.
Medians over --reps runs.  Goals: within 25% (issue 3); window within 10% of
full and of PerfContext, or within its interval (issue 16).
"""
from __future__ import annotations

import argparse
import json
import math
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


SPANS = ("wal", "memtable", "queue")


def perf_context(text: str, num: int) -> dict[str, float]:
    got = {k: int(v) for k, v in re.findall(r"(write_\w+) = (\d+)", text)}
    if "write_wal_time" not in got:
        raise SystemExit("perfcontext: db_bench printed no PERF_CONTEXT")
    return {"wal": got["write_wal_time"] / num, "memtable": got["write_memtable_time"] / num,
            "queue": got.get("write_thread_wait_nanos", 0) / num}


def traced(mode: str, tmp: Path, num: int, rep: int) -> dict[str, float]:
    out = tmp / f"{mode}{rep}"
    p = subprocess.run(TRACE + ["-q", "--mode", mode, "-o", str(out), "--",
                                *args(tmp / f"db-{mode}{rep}", num)],
                       capture_output=True, text=True, timeout=1200)
    if p.returncode != 0:
        raise SystemExit(f"perfcontext: trace failed: {p.stderr[-500:]}")
    s = json.loads((out / "summary.json").read_text())
    c = s["components"]
    got = {"wal": sum(c[k]["mean_ns"] for k in WAL_PARTS), "memtable": c["memtable"]["mean_ns"],
           "queue": c["queue"]["mean_ns"]}
    est = (s.get("windows") or {}).get("estimates")
    if est:   # window mode: the 95% interval across windows
        for span, parts in (("wal", WAL_PARTS), ("memtable", ("memtable",)),
                            ("queue", ("queue",))):
            got[f"{span}_lo"] = sum(est[k]["lo_ns"] for k in parts if k in est)
            got[f"{span}_hi"] = sum(est[k]["hi_ns"] for k in parts if k in est)
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num", type=int, default=30000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="full,writes,window")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--name", default="perfcontext",
                    help="the results' file names, NAME.md and NAME.json "
                         "(perfcontext-window: --num 1000000 --modes full,window)")
    a = ap.parse_args()
    modes = a.modes.split(",")
    runs: dict[str, list[dict[str, float]]] = {"untraced": [], **{m: [] for m in modes}}
    with tempfile.TemporaryDirectory(prefix="walscope-pc-") as d:
        tmp = Path(d)
        for rep in range(a.reps):
            p = subprocess.run(args(tmp / f"db-u{rep}", a.num), capture_output=True,
                               text=True, timeout=600)
            runs["untraced"].append(perf_context(p.stdout + p.stderr, a.num))
            for mode in modes:
                runs[mode].append(traced(mode, tmp, a.num, rep))
    med = {k: {s: statistics.median(r[s] for r in v) for s in v[0]}
           for k, v in runs.items()}
    ref = med["untraced"]

    def cell(m: str, span: str) -> str:
        v = med[m][span]
        out = f"{v / 1e3:.2f} us"
        if f"{span}_lo" in med[m]:   # none where the runs had too few windows (NaN)
            lo, hi = med[m][span + "_lo"], med[m][span + "_hi"]
            out += " [no interval]" if math.isnan(lo) or math.isnan(hi) else \
                f" [{lo / 1e3:.2f}, {hi / 1e3:.2f}]"
        return out + (f" ({v / ref[span]:.2f}x)" if ref[span] else "")
    lines = ["| span | PerfContext (untraced) | " + " | ".join(modes) + " |",
             "|---|---|" + "---|" * len(modes)]
    for span in SPANS:
        lines.append(f"| {span} | {ref[span] / 1e3:.2f} us | "
                     + " | ".join(cell(m, span) for m in modes) + " |")
    md = (f"# Compensated components vs PerfContext\n\ndb_bench fillrandom sync=false, "
          f"1 thread, {a.num} writes, pipelined writes off, perf_level=3; medians of "
          f"{a.reps} runs each; window: [medians of the runs' 95% intervals across windows]; "
          "queue is PerfContext's write_thread_wait_nanos.\n\n" + "\n".join(lines) + "\n")
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / f"{a.name}.md").write_text(md)
    (a.output / f"{a.name}.json").write_text(json.dumps({"runs": runs, "median": med},
                                                          indent=1) + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
