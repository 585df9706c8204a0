#!/usr/bin/env python3
"""Where the default mode's cost goes on the SQLite TPC-C-like driver, by
the driver's own clock.

The pairs of bench/overhead.py say how much throughput a traced run lost;
this says where.  The driver writes every transaction's start and end
(CLOCK_MONOTONIC, windows.tsv's clock), so a default-mode run is read
against itself and against untraced runs interleaved with it:

  untraced    committed transactions a second over the untraced runs' spans
  traced      the same over a traced run's span (its ratio to untraced is
              what the pairs measure)
  away        the traced run's rate farther than GUARD_MS from every window
  inside      its rate while probes were attached (a window's open to the
              end of its detach, drains included), the every-write start
              apart from later windows
  estimate    what the budget priced tracing every write at (windows.tsv's
              last cost line) against what the inside rate says (away /
              inside - 1)

    sudo bench/sqlite_pace.py [--pairs 6] [--journal-mode delete] [-o bench/results]

Writes sqlite_pace-<journal mode>.json and .md.
"""
from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402

in_venv(str(ROOT / "trace_wal.py"), __file__)   # sudo bench/x.py: .venv's Python
from analysis.windows import read_costs, read_windows  # noqa: E402

GUARD_NS = 300_000_000   # "away": this far from every window
STEP_NS = 1_000_000      # the grid the away time is summed on


def workload(db: Path, tpl: Path, journal: str, seconds: float, results: Path) -> list[str]:
    return ["python3", "-m", "runners.workloads.sqlite_tpcc", f"--db={db}/tpcc.db",
            f"--template-dir={tpl}", "--synchronous=full", "--warehouses=1", "--scale=0.02",
            f"--journal-mode={journal}", "--clients=2", f"--duration={seconds}",
            f"--results={results}"]


def committed(results: Path) -> list[tuple[int, int]]:
    """(start, end) of each transaction that committed."""
    with open(results) as f:
        return [(int(r["start_ns"]), int(r["end_ns"])) for r in csv.DictReader(f)
                if r["ok"] == "1" and r["rolled_back"] == "0"]


def rate(ends: list[int], spans: list[tuple[int, int]]) -> float | None:
    """Transactions ending inside the spans, a second of their length."""
    length = sum(b - a for a, b in spans)
    if length <= 0:
        return None
    n = sum(1 for e in ends if any(a <= e <= b for a, b in spans))
    return n / (length / 1e9)


def away_spans(t0: int, t1: int, attached: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of [t0, t1] farther than GUARD_NS from every window, on a
    1 ms grid."""
    out: list[tuple[int, int]] = []
    t = t0
    while t < t1:
        if all(t < a - GUARD_NS or t > b + GUARD_NS for a, b in attached):
            if out and out[-1][1] == t:
                out[-1] = (out[-1][0], t + STEP_NS)
            else:
                out.append((t, t + STEP_NS))
        t += STEP_NS
    return out


def read_traced(run: Path, tx: list[tuple[int, int]]) -> dict:
    """One traced run read against itself."""
    w = read_windows(run)
    t0, t1 = min(s for s, _ in tx), max(e for _, e in tx)
    ends = [e for _, e in tx]
    attached = [(int(r.open_ns), int(r.detached_ns)) for r in w.itertuples()]
    clip = [(max(a, t0), min(b, t1)) for a, b in attached if min(b, t1) > max(a, t0)]
    start, later = clip[:1] if attached and attached[0][0] <= t0 else [], \
        clip[1:] if attached and attached[0][0] <= t0 else clip
    costs = list(read_costs(run)[0]["cost"])
    return {
        "traced": len(tx) / ((t1 - t0) / 1e9),
        "away": rate(ends, away_spans(t0, t1, attached)),
        "inside_start": rate(ends, start),
        "inside_later": rate(ends, later),
        "start_into_txns_s": sum(b - a for a, b in start) / 1e9,
        "later_windows": len(later),
        "attached_share": sum(b - a for a, b in clip) / (t1 - t0),
        "estimate": costs[-1] if costs else None,
    }


def median(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x: float | None, spec: str = ".0f") -> str:
    return "-" if x is None else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--journal-mode", default="delete", choices=["delete", "wal"])
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="walscope-pace-"))
    untraced: list[float] = []
    traced: list[dict] = []
    try:
        for i in range(a.pairs):
            for arm in ("untraced", "traced") if i % 2 == 0 else ("traced", "untraced"):
                d = tmp / f"{i}-{arm}"
                (d / "db").mkdir(parents=True)
                res = d / "txlog.csv"
                cmd = workload(d / "db", tmp / "template", a.journal_mode, a.seconds, res)
                if arm == "traced":
                    cmd = [str(ROOT / "trace_wal.py"), "-q", "-o", str(d / "out"), "--"] + cmd
                p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
                if p.returncode != 0:
                    print(p.stderr[-2000:], file=sys.stderr)
                    return 1
                tx = committed(res)
                if arm == "untraced":
                    untraced.append(len(tx) / ((max(e for _, e in tx) - min(s for s, _ in tx)) / 1e9))
                    print(f"{i} untraced {untraced[-1]:.0f}/s", flush=True)
                else:
                    traced.append(read_traced(d / "out", tx))
                    print(f"{i} traced   " + ", ".join(f"{k} {fmt(v, '.3g')}"
                                                     for k, v in traced[-1].items()), flush=True)
                shutil.rmtree(d / "db", ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    u = median(untraced)
    m = {k: median([t[k] for t in traced]) for k in traced[0]}
    out = {"journal_mode": a.journal_mode, "seconds": a.seconds, "pairs": a.pairs,
           "untraced": untraced, "traced": traced, "untraced_median": u, "traced_median": m}
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / f"sqlite_pace-{a.journal_mode}.json").write_text(json.dumps(out, indent=2) + "\n")
    inside = m["inside_later"]
    implied = m["away"] / inside - 1 if inside and m["away"] else None
    md = [f"# The default's cost on the SQLite driver ({a.journal_mode}), by its own clock",
          "", f"Medians of {a.pairs} interleaved pairs, {a.seconds:g} s each "
          "(committed transactions a second):", "",
          "| untraced | traced | away from windows | inside the start | inside later windows "
          "| start into the transactions | attached | cost: estimated / implied |",
          "|---|---|---|---|---|---|---|---|",
          f"| {fmt(u)} | {fmt(m['traced'])} ({fmt(m['traced'] / u, '.2f')}) "
          f"| {fmt(m['away'])} ({fmt(m['away'] / u if m['away'] else None, '.2f')}) "
          f"| {fmt(m['inside_start'])} | {fmt(inside)} "
          f"| {fmt(m['start_into_txns_s'], '.2f')} s | {fmt(m['attached_share'] * 100, '.0f')}% "
          f"| {fmt(m['estimate'], '.2f')} / {fmt(implied, '.2f')} |", ""]
    (a.output / f"sqlite_pace-{a.journal_mode}.md").write_text("\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
