#!/usr/bin/env python3
"""The verdict rule's false-positive rate, on cells that cannot differ.

Runs one db_bench command as CELLS identical "cells" per family (a synced
and an unsynced one), every cell once a round for ROUNDS rounds in a
shuffled order, as a study's matrix does. Then, in each family, cells 0-1,
2-3, ... are compared by the rule (runners/experiments/studies/judge.py
compare): the per-round ratios' median interval against the A/A band of
two other pairs of the same family (the rule's band: docs/matrices.md),
and, for comparison, of one pair (the rule before families). Every
comparison whose interval lies outside the band is a false positive: the
cells are the same command.

    sudo bench/verdict_false_positives.py [--cells 24] [--rounds 5]

Writes bench/results/verdict_false_positives.{json,md}.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402

in_venv(str(ROOT / "trace_wal.py"), __file__)   # sudo bench/x.py: .venv's Python
from engines.rocksdb.report import parse  # noqa: E402
from runners.experiments.studies.judge import compare  # noqa: E402
from runners.experiments.studies.results import Stat, judge_ratio  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
FAMILIES = {
    "synced": "db_bench --benchmarks=fillrandom --num=1500 --threads=1 --sync=true "
              "--histogram",
    "unsynced": "db_bench --benchmarks=fillrandom --num=50000 --threads=2 --sync=false "
                "--histogram",
}
METRICS = ("ops_sec", "micros_op", "p99_us")


def run_once(command: str, db: Path) -> dict[str, float]:
    shutil.rmtree(db, ignore_errors=True)
    out = subprocess.run(command.split() + [f"--db={db}"], capture_output=True, text=True,
                         timeout=300, check=True).stdout
    b = parse(out)["benchmarks"][0]
    return {m: float(b[m]) for m in METRICS}


def stat(rounds: list[float], aa: list[float]) -> Stat:
    return Stat(statistics.median(rounds), min(rounds), max(rounds), len(rounds),
                rounds, aa)


def band_of(pairs: list[tuple[list[float], list[float]]]) -> list[float]:
    """[min, max] of the per-round ratios of these A/A pairs."""
    q = [judge_ratio(x, y) for a, b in pairs for x, y in zip(a, b)]
    return [min(q), max(q)]


def judge(values: dict[int, dict[str, list[float]]], metric: str, pairs_in_band: int
          ) -> list[dict]:
    """Cells 2k and 2k+1 compared, against the band of the next
    pairs_in_band pairs (cyclically)."""
    n = len(values) // 2
    out = []
    for k in range(n):
        a, b = values[2 * k][metric], values[2 * k + 1][metric]
        others = [(values[2 * j][metric], values[2 * j + 1][metric])
                  for j in ((k + i) % n for i in range(1, pairs_in_band + 1))]
        band = band_of(others)
        c = compare(stat(a, band), stat(b, band))
        out.append({"pair": k, "ratio": c.ratio, "lo": c.lo, "hi": c.hi,
                    "band": list(c.band) if c.band else None, "call": c.sign})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=24, help="identical cells per family (even)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=45)
    ap.add_argument("--out", type=Path, default=RESULTS / "verdict_false_positives")
    a = ap.parse_args()
    if a.cells < 6 or a.cells % 2:
        ap.error("--cells: an even number, at least 6")
    work = ROOT / "runs" / "verdict-fp"
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(a.seed)
    # values[family][cell][metric] = per-round list
    values = {f: {c: {m: [] for m in METRICS} for c in range(a.cells)} for f in FAMILIES}
    t0 = time.monotonic()
    run_once(FAMILIES["unsynced"], work / "db")   # a warm-up no figure uses
    for r in range(a.rounds):
        order = [(f, c) for f in FAMILIES for c in range(a.cells)]
        rng.shuffle(order)
        for f, c in order:
            got = run_once(FAMILIES[f], work / "db")
            for m in METRICS:
                values[f][c][m].append(got[m])
        print(f"round {r + 1}/{a.rounds} done, {time.monotonic() - t0:.0f} s", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    result: dict = {"cells": a.cells, "rounds": a.rounds, "families": FAMILIES,
                    "seconds": time.monotonic() - t0, "comparisons": {}}
    lines = [f"# The verdict rule's false positives ({a.cells} identical cells a family, "
             f"{a.rounds} rounds)", "",
             "`sudo bench/verdict_false_positives.py` "
             f"(--cells {a.cells} --rounds {a.rounds}); each family's cells are one "
             "command, so every difference the rule calls is false. Cells 0-1, 2-3, ... "
             "are compared (each comparison its own runs), against the band of two other "
             "pairs of the family (the rule) or of one (the rule before families).", "",
             "| family | metric | band from | comparisons | called | rate | median band | "
             "widest band |",
             "|---|---|---|---|---|---|---|---|"]
    total = {1: [0, 0], 2: [0, 0]}
    for f in FAMILIES:
        for m in METRICS:
            for pairs in (2, 1):
                rows = judge(values[f], m, pairs)
                called = sum(x["call"] in "<>" for x in rows)
                total[pairs][0] += called
                total[pairs][1] += len(rows)
                result["comparisons"][f"{f}/{m}/{pairs}"] = rows
                tops = [x["band"][1] for x in rows if x["band"]]
                widest, typical = max(tops), statistics.median(tops)
                lines.append(f"| {f} | {m} | {pairs} pair{'s' if pairs > 1 else ''} | "
                             f"{len(rows)} | {called} | {called / len(rows):.0%} | "
                             f"1/{typical:.2f}-{typical:.2f} | 1/{widest:.2f}-{widest:.2f} |")
    result["values"] = values
    result["total"] = {str(k): {"called": v[0], "comparisons": v[1]} for k, v in total.items()}
    lines += ["", f"In all: {total[2][0]} of {total[2][1]} comparisons called with the band "
              f"of two pairs, {total[1][0]} of {total[1][1]} with one (each family's metrics "
              f"share runs, so a family's three metrics are not independent: "
              f"{a.cells // 2} independent comparisons a family). The price of a rule "
              "that calls nothing here is its reach: a real difference inside the median "
              "band is not called either. It took "
              f"{result['seconds'] / 60:.0f} minutes."]
    a.out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    a.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
