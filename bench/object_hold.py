#!/usr/bin/env python3
"""What the object cache saves a Python program: its process held while
walscope reads objects it meets, and the whole traced run's wall time.

    sudo bench/object_hold.py [--runs 8]

Runs alternate between a cold cache (collectors/object_cache.py's file
for the default mode removed first) and a warm one (kept from the run
before), each tracing `python3 -c` that imports SQLite and six extension
modules, then commits 20 transactions.  Per run, from summary.json's
objects: the objects met while it ran (mmap, dlopen, exec) and the time
their process was held, summed over the stops; and the run's wall time,
the tracer's start and end included.  Results:
bench/results/object_hold.{json,md}.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402

in_venv(str(ROOT / "trace_wal.py"), __file__)   # sudo bench/x.py: .venv's Python
from probepoints import modes  # noqa: E402
from collectors.object_cache import ObjectCache  # noqa: E402

PROGRAM = ("import sys, sqlite3, json, decimal, bz2, lzma, csv, queue\n"
           "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
           "con.execute('create table t(a)')\n"
           "for i in range(20):\n"
           "    con.execute('insert into t values (?)', (json.dumps(i),))\n")
LATE = ("mmap", "dlopen", "exec")


def one(work: Path, i: int) -> dict:
    out = work / f"run{i}"
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, str(ROOT / "trace_wal.py"), "-q", "-o", str(out),
                        "--", "/usr/bin/python3", "-c", PROGRAM, str(work / f"db{i}")],
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit(f"object_hold: run {i} failed: {p.stderr.strip()[-500:]}")
    s = json.loads((out / "summary.json").read_text())
    late = [o for o in s["objects"] if o["how"] in LATE]
    stops = {o["seen_ns"]: o["held_ns"] or 0 for o in late}   # one stop, one hold
    return {"wall_s": wall, "late_objects": len(late),
            "cached": sum(1 for o in s["objects"] if o.get("cached")),
            "held_ms": sum(stops.values()) / 1e6, "writes": s["writes"]["count"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8, help="runs of each arm")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args(argv)
    cache = ObjectCache(modes.DEFAULT, False).path
    arms: dict[str, list[dict]] = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory(prefix="walscope-hold-") as t:
        for i in range(a.runs * 2):
            arm = "cold" if i % 2 == 0 else "warm"   # warm: the cold run's cache
            if arm == "cold":
                cache.unlink(missing_ok=True)
            arms[arm].append(one(Path(t), i))
            print(arm, arms[arm][-1], flush=True)
    med = {arm: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
           for arm, rs in arms.items()}
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / "object_hold.json").write_text(json.dumps(
        {"runs": arms, "medians": med}, indent=2) + "\n")
    md = ["# The object cache: a Python program held, cold cache and warm", "",
          f"`sudo bench/object_hold.py --runs {a.runs}`: medians of {a.runs} runs of each, "
          "alternating (bench/object_hold.py's docstring says what each is).", "",
          "| cache | objects met while it ran | of all, cached | held, summed over stops (ms) "
          "| traced run's wall time (s) | writes |",
          "|---|---|---|---|---|---|"]
    for arm, m in med.items():
        md.append(f"| {arm} | {m['late_objects']:.0f} | {m['cached']:.0f} | {m['held_ms']:.1f} "
                  f"| {m['wall_s']:.2f} | {m['writes']:.0f} |")
    (a.output / "object_hold.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
