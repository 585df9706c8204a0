#!/usr/bin/env python3
"""How far apart this machine's probe-cost calibrations land.

Runs collectors.calibration.measure() ROUNDS times in a row (as a run's
first calibration does, 5,000 iterations, 3 rounds each) and writes each
figure's values, median and max/min ratio to
bench/results/calibration_spread.{json,md}.  The spread is the honest
width of the compensation's probe cost on this machine; the test suite
holds only what must hold whatever the spread.

    sudo bench/calibration_spread.py [--rounds 8]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402

in_venv(str(ROOT / "trace_wal.py"), __file__)   # sudo bench/x.py: .venv's Python
from collectors import calibration  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
KEYS = ("uprobe_ns", "one_ns", "pair_ns", "pair_in_ns", "pair_out_ns", "tracepoint_ns")


def spread(values: list[float]) -> dict[str, float]:
    lo, hi = min(values), max(values)
    return {"median": statistics.median(values), "min": lo, "max": hi,
            "max_over_min": hi / lo if lo > 0 else float("inf")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--out", type=Path, default=RESULTS / "calibration_spread")
    a = ap.parse_args()
    runs = [calibration.measure() for _ in range(a.rounds)]
    table = {k: {"values": [r[k] for r in runs], **spread([r[k] for r in runs])} for k in KEYS}
    a.out.with_suffix(".json").write_text(json.dumps({"rounds": a.rounds, "figures": table}, indent=2) + "\n")
    lines = ["| figure | median ns | min | max | max/min |", "|---|---|---|---|---|"]
    lines += [f"| {k} | {v['median']:.0f} | {v['min']:.0f} | {v['max']:.0f} | {v['max_over_min']:.2f} |"
              for k, v in table.items()]
    a.out.with_suffix(".md").write_text(
        f"# Calibration spread ({a.rounds} calibrations in a row)\n\n"
        "`sudo bench/calibration_spread.py`\n\n" + "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
