#!/usr/bin/env python3
"""What one window of --mode window costs the workload, moment by moment.

A RocksDB writer that times itself (bench/timed_writer: Puts counted in
5 ms buckets of CLOCK_MONOTONIC, the clock of windows.tsv) runs traced in
window mode.  Around each window (from the attach to the end of the detach)
the Puts it did are compared with the run's rate away from every window:

  inside      throughput while the window is open, against that rate
  lost_ms     the work lost around one window (attach, window, detach and
              the 250 ms after), as ms of the workload at that rate
  placebo     the same sum around random moments away from every window of
              the same run: what the method reads when nothing happens

and, from lost_ms, the throughput the default schedule keeps:
1 - lost_ms x windows per second.  Windows are the independent unit: the
intervals are 95% bootstrap intervals across windows, as the run's own
estimates are (analysis.windows).

    sudo bench/window_cost.py [--seconds 30] [--duty 0.05] [-o bench/results]

The duty is higher than the default's so that a run holds ~30 windows; a
window's cost does not depend on the gap while the gaps are longer than
the span measured around it.  Writes window_cost.json and window_cost.md.
"""
from __future__ import annotations

import argparse
import json
import math
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
import numpy as np  # noqa: E402

from analysis.windows import interval_across_windows, read_windows  # noqa: E402
from runners.command import defaults  # noqa: E402

PY = sys.executable   # .venv's where setup.sh made one (trace_wal.py moves there)
WRITER = ROOT / ".output" / "timed_writer"
BEFORE_MS = 50     # the span summed starts this long before the attach
AFTER_MS = 250     # and ends this long after the detach
GUARD_MS = 300     # baseline buckets are this far from every window
PROFILE_MS = range(-50, 301, 10)   # the profile's points, from the attach

WORKLOADS = {  # name: timed_writer arguments (the goals' three workloads)
    "sync-off-1t": ["--sync=false", "--threads=1"],
    "sync-off-4t": ["--sync=false", "--threads=4"],
    "sync-on-1t": ["--sync=true", "--threads=1"],
    "sync-on-4t": ["--sync=true", "--threads=4"],
    # a lent many-core machine's (not in the default selection)
    "sync-on-16t": ["--sync=true", "--threads=16"],
}
DEFAULT_WORKLOADS = ["sync-off-1t", "sync-off-4t", "sync-on-1t", "sync-on-4t"]


def read_buckets(log: Path) -> tuple[int, int, np.ndarray]:
    """(t0_ns, bucket_ns, Puts per bucket) from timed_writer's output."""
    lines = log.read_text().splitlines()
    head = next(l for l in lines if l.startswith("# t0_ns")).split()
    counts = [int(l.split()[1]) for l in lines if l[:1].isdigit()]
    return int(head[2]), int(head[4]), np.array(counts, dtype=float)


def analyse(log: Path, run_dir: Path, window_ms: float, seed: int = 1) -> dict:
    t0, bucket_ns, counts = read_buckets(log)
    w = read_windows(run_dir)
    starts = w["open_ns"].to_numpy() - w["attach_us"].to_numpy() * 1000
    ends = w["detached_ns"].to_numpy() + w["detach_us"].to_numpy() * 1000
    edges = t0 + np.arange(len(counts)) * bucket_ns    # each bucket's start
    guard = GUARD_MS * 1_000_000
    far = np.ones(len(counts), dtype=bool)
    for s, e in zip(starts, ends):
        far &= (edges + bucket_ns <= s - guard) | (edges >= e + guard)
    far[:int(1e9 // bucket_ns)] = False     # the first second: a cold start
    if far.sum() < 20:
        raise SystemExit(f"{log}: too little time away from windows to set a rate")
    rate = counts[far].mean()               # Puts per bucket

    def lost(lo_ns: float, hi_ns: float) -> float | None:
        i, j = int((lo_ns - t0) // bucket_ns), int(math.ceil((hi_ns - t0) / bucket_ns))
        if i < int(1e9 // bucket_ns) or j > len(counts):
            return None
        return float((rate - counts[i:j]).sum() / rate * bucket_ns / 1e6)

    losses, inside, profile = [], [], {ms: [] for ms in PROFILE_MS}
    for k, (s, e) in enumerate(zip(starts, ends)):
        x = lost(s - BEFORE_MS * 1e6, e + AFTER_MS * 1e6)
        if x is None:
            continue
        losses.append(x)
        i = int(math.ceil((w["open_ns"].iloc[k] - t0) / bucket_ns))
        j = int((w["close_ns"].iloc[k] - t0) // bucket_ns)
        if j > i:
            inside.append(float(counts[i:j].mean() / rate))
        for ms in PROFILE_MS:
            b = int((s + ms * 1e6 - t0) // bucket_ns)
            if 0 <= b < len(counts):
                profile[ms].append(float(counts[b] / rate))
    # placebo windows: random moments whose whole span is far from windows
    rng = np.random.default_rng(seed)
    span = (BEFORE_MS + window_ms + AFTER_MS) * 1e6
    candidates = edges[far]
    placebo: list[float] = []
    for t in rng.permutation(candidates)[:20 * len(losses) + 1]:
        if len(placebo) == len(losses):
            break
        if all(t + span + guard <= s or t - guard >= e for s, e in zip(starts, ends)):
            x = lost(t, t + span)
            if x is not None:
                placebo.append(x)
    def ci(xs: list[float]) -> tuple[float, float]:
        return interval_across_windows(np.array(xs), np.ones(len(xs)), rng)
    return {"windows": len(losses), "rate_per_s": rate / bucket_ns * 1e9,
            "attach_ms": float(w["attach_us"].median() / 1e3),
            "detach_ms": float(w["detach_us"].median() / 1e3),
            "inside": statistics.fmean(inside) if inside else None,
            "lost_ms": statistics.fmean(losses) if losses else None,
            "lost_ms_ci": ci(losses),
            "placebo_ms": statistics.fmean(placebo) if placebo else None,
            "placebo_ms_ci": ci(placebo), "placebo_n": len(placebo),
            "profile": {ms: statistics.fmean(v) for ms, v in profile.items() if v}}


def kept(lost_ms: float, window_ms: float, duty: float) -> float:
    """Throughput kept under windows of window_ms at this duty."""
    return 1 - lost_ms / 1000 * duty / (window_ms / 1000)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--window-ms", type=int, default=defaults.WINDOW_MS)
    ap.add_argument("--duty", type=float, default=0.05,
                    help="the measuring runs' duty (the default schedule's "
                         "cost is computed from the cost of a window)")
    ap.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS))
    ap.add_argument("--trace-args", default="",
                    help="more trace_wal.py options for the measuring runs, e.g. "
                         "'--no-sched' (what one kind of probe costs)")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args(argv)
    if not WRITER.exists():
        raise SystemExit(f"window_cost.py: {WRITER} is missing: run make")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="walscope-wcost-") as t:
        tmp = Path(t)
        for name in a.workloads.split(","):
            db, rd = tmp / "db", tmp / f"run-{name}"
            shutil.rmtree(db, ignore_errors=True)
            cmd = [str(WRITER), f"--db={db}", f"--seconds={a.seconds}", *WORKLOADS[name]]
            p = subprocess.run([PY, str(ROOT / "trace_wal.py"), "-q", "--mode", "window",
                                "--window-ms", str(a.window_ms), "--window-duty",
                                str(a.duty), *a.trace_args.split(), "-o", str(rd),
                                "--", *cmd],
                               capture_output=True, text=True, cwd=ROOT)
            if p.returncode != 0:
                raise SystemExit(f"{name}: trace_wal.py exited {p.returncode}: "
                                 f"{p.stderr.strip()[-400:]}")
            r = analyse(rd / "command.log", rd, a.window_ms)
            r["kept_at_default"] = kept(r["lost_ms"], defaults.WINDOW_MS,
                                        defaults.WINDOW_DUTY)
            r.update(default_window_ms=defaults.WINDOW_MS, trace_args=a.trace_args,
                     default_duty=defaults.WINDOW_DUTY, seconds=a.seconds,
                     window_ms=a.window_ms, duty=a.duty, commit=commit)
            results[name] = r
            print(f"{name}: {r['windows']} windows, inside {r['inside']:.2f}, "
                  f"lost {r['lost_ms']:.1f} ms [{r['lost_ms_ci'][0]:.1f}, "
                  f"{r['lost_ms_ci'][1]:.1f}], placebo {r['placebo_ms']:.1f} ms, "
                  f"kept at default {r['kept_at_default']:.3f}", flush=True)
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / "window_cost.json").write_text(json.dumps(results, indent=1))
    (a.output / "window_cost.md").write_text(render(results))
    print(render(results))
    return 0


def render(results: dict) -> str:
    first = next(iter(results.values()))
    d_ms, d_duty = first["default_window_ms"], first["default_duty"]
    lines = [f"What one window costs (`bench/window_cost.py`), and the throughput "
             f"`--mode window`'s schedule ({d_ms} ms windows, duty {d_duty:g}: "
             f"{d_duty / (d_ms / 1000):.2f} windows/s) keeps.", "",
             "| workload | windows | attach ms | inside | lost ms a window [95%] "
             "| placebo ms [95%] | kept at window's default |",
             "|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        lo, hi = r["lost_ms_ci"]
        plo, phi = r["placebo_ms_ci"]
        lines.append(f"| {name} | {r['windows']} | {r['attach_ms']:.1f} | "
                     f"{r['inside']:.2f} | {r['lost_ms']:.1f} [{lo:.1f}, {hi:.1f}] | "
                     f"{r['placebo_ms']:.1f} [{plo:.1f}, {phi:.1f}] | "
                     f"{r['kept_at_default']:.3f} |")
    lines += ["", "Throughput against the rate away from windows, from the attach "
              "(ms: relative rate):", ""]
    for name, r in results.items():
        pts = " ".join(f"{ms}:{v:.2f}" for ms, v in r["profile"].items()
                       if int(ms) % 50 == 0 or int(ms) in (10, 20, 70))
        lines.append(f"- {name}: {pts}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
