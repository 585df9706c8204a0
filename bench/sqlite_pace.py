#!/usr/bin/env python3
"""Where the default mode's cost goes on the SQLite TPC-C-like driver, by
the driver's own clock.

The pairs of bench/overhead.py say how much throughput a traced run lost
(tpmC over the driver's elapsed time); this says where.  The driver writes
every transaction's start and end (CLOCK_MONOTONIC, windows.tsv's clock),
so a default-mode run is read against itself and against the untraced run
of its pair (bench/overhead.py's workload, disks settled before each run):

  traced      committed transactions a second over a traced run's span,
              over its pair's untraced rate
  away        the traced run's rate farther than GUARD_NS from every window,
              over the untraced run's rate at the same offsets from its
              first transaction
  inside      the traced run's rate while probes were attached (a window's
              open to the end of its detach, drains included), its
              every-write start apart from its later windows
  cost        what the budget priced tracing every write at (windows.tsv's
              last cost line) against what the run's own pace implies
              (away / inside later windows - 1)

Each figure is the median over the pairs of the per-pair value.

    sudo bench/sqlite_pace.py [--pairs 6] [--journal-mode delete] [-o bench/results]

Writes sqlite_pace-<journal mode>.json and .md.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
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
from bench.overhead import RUNS, WORKLOADS, settle, workload  # noqa: E402
from collectors.session import SAFE_PATH  # noqa: E402

GUARD_NS = 300_000_000   # "away": this far from every window
STEP_NS = 1_000_000      # the grid the away time is summed on

Span = tuple[int, int]


def command(db: Path, journal: str, results: Path) -> list[str]:
    """bench/overhead.py's SQLite cell, its transactions logged to results."""
    return workload(str(db), WORKLOADS[f"sqlite-{journal}-2c"]) + [f"--results={results}"]


def committed(results: Path) -> list[Span]:
    """(start, end) of each transaction that committed."""
    with open(results) as f:
        return [(int(r["start_ns"]), int(r["end_ns"])) for r in csv.DictReader(f)
                if r["ok"] == "1" and r["rolled_back"] == "0"]


def rate(ends: list[int], spans: list[Span]) -> float | None:
    """Transactions ending inside the spans, a second of their length."""
    length = sum(b - a for a, b in spans)
    if length <= 0:
        return None
    n = sum(1 for e in ends if any(a <= e <= b for a, b in spans))
    return n / (length / 1e9)


def away_spans(t0: int, t1: int, attached: list[Span]) -> list[Span]:
    """The parts of [t0, t1] farther than GUARD_NS from every window, on a
    1 ms grid."""
    out: list[Span] = []
    t = t0
    while t < t1:
        if all(t < a - GUARD_NS or t > b + GUARD_NS for a, b in attached):
            if out and out[-1][1] == t:
                out[-1] = (out[-1][0], t + STEP_NS)
            else:
                out.append((t, t + STEP_NS))
        t += STEP_NS
    return out


def clipped(spans: list[Span], t0: int, t1: int) -> list[Span]:
    """The spans' parts inside [t0, t1] (those with none left out)."""
    return [(max(a, t0), min(b, t1)) for a, b in spans if min(b, t1) > max(a, t0)]


def read_pair(run: Path, tx: list[Span], untraced: list[Span]) -> dict[str, float | None]:
    """One traced run read against itself and its pair's untraced run."""
    t0, t1 = min(s for s, _ in tx), max(e for _, e in tx)
    ends = [e for _, e in tx]
    u0, u1 = min(s for s, _ in untraced), max(e for _, e in untraced)
    u_rate = len(untraced) / ((u1 - u0) / 1e9)
    attached = [(int(r.open_ns), int(r.detached_ns)) for r in read_windows(run).itertuples()]
    # the default opens its every-write start first, before the workload runs
    first_is_start = bool(attached) and attached[0][0] <= t0
    start = clipped(attached[:1], t0, t1) if first_is_start else []
    later = clipped(attached[1:] if first_is_start else attached, t0, t1)
    away = away_spans(t0, t1, attached)
    away_rate = rate(ends, away)
    # the untraced run at the same offsets from its first transaction
    u_same = rate([e for _, e in untraced], [(a - t0 + u0, b - t0 + u0) for a, b in away])
    inside = rate(ends, later)
    costs = list(read_costs(run)[0]["cost"])
    return {
        "untraced": u_rate,
        "traced": len(tx) / ((t1 - t0) / 1e9) / u_rate,
        "away": away_rate / u_same if away_rate and u_same else None,
        "inside_start": (rate(ends, start) or 0) / away_rate if start and away_rate else None,
        "inside_later": inside / away_rate if inside and away_rate else None,
        "start_into_txns_s": sum(b - a for a, b in start) / 1e9,
        "later_windows": len(later),
        "attached_share": sum(b - a for a, b in start + later) / (t1 - t0),
        "estimate": costs[-1] if costs else None,
        "implied": away_rate / inside - 1 if inside and away_rate else None,
    }


def median(xs: list[float | None]) -> float | None:
    got = [x for x in xs if x is not None]
    return statistics.median(got) if got else None


def fmt(x: float | None, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def run_arm(cmd: list[str], results: Path) -> list[Span]:
    """One run; both arms find "python3" on the PATH trace_wal.py gives its
    workload (root's own PATH can name another interpreter, with another
    SQLite: a pyenv shim here)."""
    settle()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PATH": SAFE_PATH})
    if p.returncode != 0:
        raise SystemExit(f"sqlite_pace: {' '.join(cmd[:3])}...: {p.stderr[-2000:]}")
    tx = committed(results)
    if len(tx) < 2:
        raise SystemExit(f"sqlite_pace: {results}: fewer than two committed transactions")
    return tx


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=6, choices=range(1, 101), metavar="1-100")
    ap.add_argument("--journal-mode", default="delete", choices=["delete", "wal"])
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--trace-args", default="", metavar="ARGS",
                    help="trace_wal.py flags for the traced arm, e.g. '--sample-hz 0' "
                         "(default: none, the plain command)")
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="walscope-pace-"))
    run_dir = RUNS / f"bench-pace-{os.getpid()}"
    pairs: list[dict[str, float | None]] = []
    try:
        for i in range(a.pairs):
            got: dict[str, list[Span]] = {}
            for arm in ("untraced", "traced") if i % 2 == 0 else ("traced", "untraced"):
                d = tmp / f"{i}-{arm}"
                (d / "db").mkdir(parents=True)
                cmd = command(d / "db", a.journal_mode, d / "txlog.csv")
                if arm == "traced":   # where the plain command puts it, as overhead.py
                    cmd = [str(ROOT / "trace_wal.py"), "-q", "-o", str(run_dir),
                           *a.trace_args.split(), "--"] + cmd
                got[arm] = run_arm(cmd, d / "txlog.csv")
            pairs.append(read_pair(run_dir, got["traced"], got["untraced"]))
            shutil.rmtree(run_dir, ignore_errors=True)
            print(f"{i}: " + ", ".join(f"{k} {fmt(v, '.3g')}" for k, v in pairs[-1].items()),
                  flush=True)
            shutil.rmtree(tmp / f"{i}-traced", ignore_errors=True)
            shutil.rmtree(tmp / f"{i}-untraced", ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(run_dir, ignore_errors=True)
    m = {k: median([p[k] for p in pairs]) for k in pairs[0]}
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / f"sqlite_pace-{a.journal_mode}.json").write_text(json.dumps(
        {"journal_mode": a.journal_mode, "args": WORKLOADS[f"sqlite-{a.journal_mode}-2c"],
         "trace_args": a.trace_args, "run_folder": "runs",
         "pairs": pairs, "medians": m}, indent=2) + "\n")
    md = [f"# The default's cost on the SQLite driver ({a.journal_mode}), by its own clock",
          "", f"Medians over {a.pairs} interleaved pairs of the per-pair values "
          "(bench/sqlite_pace.py's docstring says what each is); the traced runs' "
          "folders where the plain command puts them (`runs/`), not beside the database:", "",
          "| untraced tx/s | traced / untraced | away / untraced there | inside the start / away "
          "| inside later windows / away | start into the transactions | attached "
          "| cost: estimated / implied |",
          "|---|---|---|---|---|---|---|---|",
          f"| {fmt(m['untraced'], '.0f')} | {fmt(m['traced'])} | {fmt(m['away'])} "
          f"| {fmt(m['inside_start'])} | {fmt(m['inside_later'])} "
          f"| {fmt(m['start_into_txns_s'])} s | {fmt((m['attached_share'] or 0) * 100, '.0f')}% "
          f"| {fmt(m['estimate'])} / {fmt(m['implied'])} |", ""]
    (a.output / f"sqlite_pace-{a.journal_mode}.md").write_text("\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
