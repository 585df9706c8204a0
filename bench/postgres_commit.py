#!/usr/bin/env python3
"""PostgreSQL commit settings, measured: synchronous_commit on/off and commit_delay.

    sudo bench/postgres_commit.py [--reps 5] [--transactions 1000] [--seed 27] [-o bench/results]

Three cells, the same pgbench load in each (default TPC-B, scale 1,
-c 8 -j 2 -t N, on a fresh `cp -a` copy of a cluster prepared once,
untraced, by runners/workloads/postgres):

  a  synchronous_commit=on,  commit_delay=0
  b  synchronous_commit=on,  commit_delay=1000 (us), commit_siblings=1
  c  synchronous_commit=off

Each repetition runs, in a fresh random order (the seed is recorded):
every cell untraced (the runner alone), traced with the plain command
(trace_wal.py's default mode) and traced with --mode full (every
transaction a row: the components and `walscope diff` come from these),
plus a second untraced run of cell a: with cell a's untraced run it is
the A/A pair whose spread is the noise floor.  Each run holds an
exclusive flock on /tmp/walscope-heavy.lock (other heavy jobs on the
machine interleave between runs, not during them).

A --mode full run whose rows differ from pgbench's processed
transactions stops the benchmark (the run folder is kept and named); so
does a default-mode run that says it recorded every transaction and did
not.  Writes postgres_commit.json and postgres_commit.md to -o.
"""
from __future__ import annotations

import argparse
import fcntl
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from runfolder.files import RUNS_DIR  # noqa: E402
PY = sys.executable   # .venv's where setup.sh made one (trace_wal.py moves there)
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LOCK = "/tmp/walscope-heavy.lock"

CELLS = {   # name: (label, PGOPTIONS)
    "a": ("synchronous_commit=on, commit_delay=0",
          "-c synchronous_commit=on -c commit_delay=0"),
    "b": ("synchronous_commit=on, commit_delay=1000, commit_siblings=1",
          "-c synchronous_commit=on -c commit_delay=1000 -c commit_siblings=1"),
    "c": ("synchronous_commit=off",
          "-c synchronous_commit=off"),
}
ARMS = ("untraced", "default", "full")
AA = "untraced-again"          # the second untraced run of cell a
DIFFS = (("a", "c"), ("a", "b"))


# ---- pure parts (tests/test_postgres_commit.py) ------------------------------

def aa_band(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    """The A/A noise band of a ratio: each pair's ratio both ways (which
    run of an identical pair is "first" is an accident of the random
    order), the smallest and largest over the pairs."""
    rs = [r for x, y in pairs for r in (y / x, x / y)]
    return min(rs), max(rs)


def verdict(ratios: list[float], band: tuple[float, float]) -> str:
    """The rule: a ratio between two arms (one per repetition, both from
    the same repetition) counts as a difference only if every repetition's
    ratio lies outside the A/A band, on the same side."""
    if not ratios:
        return "-"
    if min(ratios) > band[1]:
        return "higher"
    if max(ratios) < band[0]:
        return "lower"
    return "within A/A"


def med_range(xs: list[float]) -> tuple[float, float, float]:
    return statistics.median(xs), min(xs), max(xs)


def fmt(xs: list[float], f: str = "{:.0f}") -> str:
    """'median [min, max]' of a repetition's values ('-' if none)."""
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    if not xs:
        return "-"
    m, lo, hi = med_range(xs)
    return f"{f.format(m)} [{f.format(lo)}, {f.format(hi)}]"


def num(x: float) -> str:
    """A table figure: whole from 100 up, else three significant digits."""
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def check_rows(arm: str, rows: int, processed: int, every_write: bool | None) -> str | None:
    """Why a traced run's rows are wrong, or None: --mode full must have
    one row per processed transaction; the default mode too when it says
    it recorded every transaction."""
    if arm == "full" or every_write:
        if rows != processed:
            return (f"{arm}: {rows} rows for {processed} transactions pgbench processed"
                    + ("" if arm == "full" else " (summary.json says every write was recorded)"))
    return None


def summarise_diffs(diffs: list[dict[str, Any]]) -> dict[str, Any]:
    """The component deltas of several `walscope diff --json` outputs
    (one per repetition): each component's median delta, range, and its
    median share of the repetition's delta of the mean."""
    comps: dict[str, list[float]] = {}
    shares: dict[str, list[float]] = {}
    for d in diffs:
        dm = d["mean"]["delta_ns"]
        for c in d["mean"]["components"]:
            comps.setdefault(c["component"], []).append(c["delta_ns"])
            shares.setdefault(c["component"], []).append(c["delta_ns"] / dm if dm else 0.0)
    out = {"delta_mean_ns": [d["mean"]["delta_ns"] for d in diffs],
           "residual_ns": [d["mean"]["residual_ns"] for d in diffs],
           "delta_p99_ns": [d["p99"]["delta_ns"] for d in diffs],
           "p99_residual_ns": [d["p99"]["residual_ns"] for d in diffs],
           "components": {}}
    for c, xs in comps.items():
        m, lo, hi = med_range(xs)
        out["components"][c] = {"median_ns": m, "lo_ns": lo, "hi_ns": hi,
                                "share_median": statistics.median(shares[c]),
                                "deltas_ns": xs}
    return out


# ---- running -----------------------------------------------------------------

@contextmanager
def heavy_lock() -> Iterator[None]:
    """An exclusive flock on LOCK for the duration of one run."""
    with open(LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def disk_counters() -> list[str]:
    with open("/proc/diskstats") as f:
        return [l for l in f if not l.split()[2].startswith(("loop", "ram"))]


def settle(quiet_s: float = 0.5, limit_s: float = 10.0) -> None:
    """Until the disks did nothing for quiet_s (at most limit_s), as
    bench/overhead.py does: the last run's removed copy is not written
    back during this one."""
    end = time.monotonic() + limit_s
    before = disk_counters()
    while time.monotonic() < end:
        time.sleep(quiet_s)
        now = disk_counters()
        if now == before:
            return
        before = now


def runner_cmd(data: Path, result: Path, cell: str, tx: int) -> list[str]:
    return ["python3", "-m", "runners.workloads.postgres", "run", str(data), "-o", str(result),
            "--pgoptions", CELLS[cell][1], "--", "-c", "8", "-j", "2", "-t", str(tx)]


def one_run(work: Path, template: Path, i: int, cell: str, arm: str, tx: int,
            keep_runs: Path) -> dict[str, Any]:
    """One run of cell in arm: copy the template, run, read RESULT.json (and
    summary.json if traced)."""
    d = work / f"{i}"       # the socket is in data/: the path stays short
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    d.chmod(0o755)
    data, result, rd = d / "data", d / "result.json", keep_runs / f"{i:03d}-{cell}-{arm}"
    with heavy_lock():
        shutil.rmtree(rd, ignore_errors=True)   # before the settle: bench/overhead.py
        subprocess.run(["cp", "-a", str(template), str(data)], check=True)
        os.sync()
        settle()
        t0 = time.monotonic()
        if arm in ("untraced", AA):
            cmd = runner_cmd(data, result, cell, tx)
            env = {k: v for k, v in os.environ.items() if k != "PGOPTIONS"}
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=900,
                               env={**env, "PATH": SAFE_PATH})
        else:
            mode = [] if arm == "default" else ["--mode", arm]
            p = subprocess.run([PY, str(ROOT / "trace_wal.py"), "-q", "--user", "root", *mode,
                                "-o", str(rd), "--", *runner_cmd(data, result, cell, tx)],
                               capture_output=True, text=True, cwd=ROOT, timeout=900)
        wall = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit(f"postgres_commit: run {i} ({cell}, {arm}) failed, exit "
                         f"{p.returncode}:\n{p.stderr[-2000:]}")
    r = json.loads(result.read_text())
    pg = r["pgbench"]
    out: dict[str, Any] = {
        "i": i, "cell": cell, "arm": arm, "wall_s": wall,
        "tps": pg["report"]["tps"], "latency_ms": pg["report"]["latency_average_ms"],
        "processed": pg["processed"], "expected": pg["expected"],
        "failed": pg["report"].get("failed"),
        "wal_sync": r["delta"]["wal"]["wal_sync"], "wal_write": r["delta"]["wal"]["wal_write"],
        "wal_bytes": r["delta"]["wal"]["wal_bytes"], "new_wal_segment": r["new_wal_segment"],
        "settled": r["settle"]["settled"],
        "settings": {k: r["settings"].get(k) for k in
                     ("synchronous_commit", "commit_delay", "commit_siblings")},
    }
    if pg["processed"] != pg["expected"]:
        raise SystemExit(f"postgres_commit: run {i} ({cell}, {arm}): pgbench processed "
                         f"{pg['processed']} of {pg['expected']}")
    shutil.rmtree(d, ignore_errors=True)
    if arm in ("untraced", AA):
        return out
    s = json.loads((rd / "summary.json").read_text())
    b = s.get("budget") or {}
    every = True if arm == "full" else bool(b.get("every_write"))
    g = s["groups"]
    out.update({
        "run": str(rd), "mode": s["mode"], "rows": s["writes"]["count"],
        "every_write": every, "recorded_share": b.get("share"),
        "estimated_total": b.get("estimated_total"),
        "mean_ns": s["writes"]["duration_adj"]["mean_ns"],
        "p99_ns": s["writes"]["duration_adj"]["p99_ns"],
        "leaders": g["leaders"], "followers": g["followers"],
        "walscope_syncs": s["wal"]["sync"]["count"],
        "components": {c: v["mean_ns"] for c, v in s["components"].items()},
    })
    why = check_rows(arm, out["rows"], out["processed"], every)
    if why:
        raise SystemExit(f"postgres_commit: run {i} ({cell}): {why}; run folder kept: {rd}")
    return out


def walscope_diff(a: str, b: str) -> tuple[dict[str, Any], str]:
    j = subprocess.run([PY, str(ROOT / "walscope"), "diff", a, b, "--json"],
                       capture_output=True, text=True, cwd=ROOT, check=True).stdout
    t = subprocess.run([PY, str(ROOT / "walscope"), "diff", a, b],
                       capture_output=True, text=True, cwd=ROOT, check=True).stdout
    return json.loads(j), t


# ---- the report ----------------------------------------------------------------

def arm_runs(runs: list[dict], cell: str, arm: str) -> list[dict]:
    return sorted((r for r in runs if r["cell"] == cell and r["arm"] == arm),
                  key=lambda r: r["rep"])


def paired(runs: list[dict], x: tuple[str, str], y: tuple[str, str], key: str) -> list[float]:
    """Per repetition: y's key / x's key."""
    xs = {r["rep"]: r[key] for r in arm_runs(runs, *x)}
    return [r[key] / xs[r["rep"]] for r in arm_runs(runs, *y) if r["rep"] in xs]


def render(res: dict[str, Any]) -> str:
    runs, reps = res["runs"], res["reps"]
    aa = {k: [(x[k], y[k]) for x, y in zip(arm_runs(runs, "a", "untraced"),
                                            arm_runs(runs, "a", AA))]
          for k in ("tps", "latency_ms")}
    band = {k: aa_band(v) for k, v in aa.items()}
    res["aa_band"] = band
    L = ["# PostgreSQL commit settings, measured", "",
         f"`{res['command']}` (commit {res['commit']}, {res['date']}, seed {res['seed']}, "
         f"{reps} repetitions, {res['elapsed_min']:.0f} min; {res['machine']}).", "",
         f"Load: pgbench default TPC-B, scale 1, `-c 8 -j 2 -t {res['transactions']}` "
         f"({8 * res['transactions']} transactions a run) on a fresh copy of a cluster "
         "prepared once by `runners.workloads.postgres prepare`; settings by `--pgoptions`. Each "
         "repetition runs every cell untraced, traced with the plain command (default "
         "mode) and traced with `--mode full`, plus a second untraced run of cell a, "
         "all in a fresh random order; each run holds `/tmp/walscope-heavy.lock`.", "",
         "Cells: " + "; ".join(f"**{c}** {l}" for c, (l, _) in CELLS.items()) + ".", "",
         "**The rule.** A/A: cell a's two untraced runs of each repetition; their ratio "
         "taken both ways, over all repetitions, gives the band "
         f"tps [{band['tps'][0]:.3f}, {band['tps'][1]:.3f}], latency "
         f"[{band['latency_ms'][0]:.3f}, {band['latency_ms'][1]:.3f}]. A ratio between "
         "two runs of one repetition (cell x / cell a untraced; traced / untraced in one "
         "cell) counts as a difference only if it lies outside that band in every "
         "repetition, on the same side (`higher`/`lower`); otherwise `within A/A`.", "",
         "## pgbench's own figures", "",
         "Median [range] over repetitions; ratios are per repetition, then median [range].",
         "", "| cell | untraced tps | untraced latency ms | tps / a | verdict | "
         "latency / a | verdict | syncs per commit (pg_stat_wal) |",
         "|---|---|---|---|---|---|---|---|"]
    for c in CELLS:
        u = arm_runs(runs, c, "untraced")
        rt = paired(runs, ("a", "untraced"), (c, "untraced"), "tps")
        rl = paired(runs, ("a", "untraced"), (c, "untraced"), "latency_ms")
        if c == "a":
            rt = [y / x for x, y in aa["tps"]]
            rl = [y / x for x, y in aa["latency_ms"]]
        L.append(f"| {c} | {fmt([r['tps'] for r in u])} | "
                 f"{fmt([r['latency_ms'] for r in u], '{:.2f}')} | {fmt(rt, '{:.3f}')} | "
                 + (f"(A/A) | {fmt(rl, '{:.3f}')} | (A/A) | " if c == "a" else
                    f"{verdict(rt, band['tps'])} | {fmt(rl, '{:.3f}')} | "
                    f"{verdict(rl, band['latency_ms'])} | ")
                 + f"{fmt([r['wal_sync'] / r['processed'] for r in u], '{:.3f}')} |")
    L += ["", "The tracer's cost: traced / untraced in the same repetition and cell "
          "(pgbench's tps; its latencies are in the json). `default` is the "
          "plain command; `recorded` is the share of the run's transactions its rows "
          "cover (1 = every transaction).", "",
          "| cell | default tps | default / untraced | verdict | recorded | full tps | "
          "full / untraced | verdict |", "|---|---|---|---|---|---|---|---|"]
    for c in CELLS:
        cells = [c]
        for arm in ("default", "full"):
            t = arm_runs(runs, c, arm)
            r = paired(runs, (c, "untraced"), (c, arm), "tps")
            cells += [fmt([x["tps"] for x in t]), fmt(r, "{:.3f}"), verdict(r, band["tps"])]
            if arm == "default":
                cells.append(fmt([x["rows"] / x["processed"] for x in t], "{:.3f}"))
        L.append("| " + " | ".join(cells) + " |")
    comps = [k for k in res["component_order"]]
    L += ["", "## walscope's figures (`--mode full`: every transaction a row)", "",
          "Median over repetitions. rows = pgbench's processed in every run (checked). "
          "Leaders: rows that synced the WAL themselves. Components: mean per "
          "transaction, µs, compensated.", "",
          "| | " + " | ".join(CELLS) + " |", "|---|" + "---|" * len(CELLS)]

    def row(name: str, f) -> None:
        vals = []
        for c in CELLS:
            xs = [f(r) for r in arm_runs(runs, c, "full")]
            vals.append(fmt(xs, "{:.1f}") if name.endswith("(range)") else
                        (num(statistics.median(xs)) if xs else "-"))
        L.append(f"| {name} | " + " | ".join(vals) + " |")
    row("rows (each run)", lambda r: r["rows"])
    row("pgbench processed", lambda r: r["processed"])
    row("tps (traced, full)", lambda r: r["tps"])
    row("txn mean µs (range)", lambda r: r["mean_ns"] / 1e3)
    row("txn p99 µs (range)", lambda r: r["p99_ns"] / 1e3)
    row("leaders share", lambda r: r["leaders"] / max(1, r["rows"]))
    row("WAL syncs per commit (walscope)", lambda r: r["walscope_syncs"] / r["processed"])
    row("WAL syncs per commit (pg_stat_wal)", lambda r: r["wal_sync"] / r["processed"])
    for k in comps:
        row(k, lambda r, k=k: r["components"].get(k, 0) / 1e3)
    for a, b in DIFFS:
        ds = res["diffs"][f"{a}-{b}"]
        s = ds["summary"]
        L += ["", f"## walscope diff {a} → {b} (`--mode full` runs, each repetition's pair)",
              "", f"Δ = {b} − {a}, µs. Each repetition's traced pair of cells {a} and {b} "
              "diffed (`walscope diff A B --json`); median [range] over repetitions; share: "
              "the component's median share of its repetition's Δmean.", "",
              "| component | Δmean µs | share of Δmean |", "|---|---|---|"]
        cs = sorted(s["components"].items(), key=lambda kv: -abs(kv[1]["median_ns"]))
        for name, v in cs:
            if not any(v["deltas_ns"]):
                continue
            L.append(f"| {name} | {fmt([x / 1e3 for x in v['deltas_ns']], '{:+.1f}')} | "
                     f"{v['share_median']:.1%} |")
        L.append(f"| residual (Δmean − Σ) | {fmt([x / 1e3 for x in s['residual_ns']], '{:+.4f}')} | |")
        L.append(f"| **Δmean** | {fmt([x / 1e3 for x in s['delta_mean_ns']], '{:+.1f}')} | |")
        L.append(f"| Δp99 | {fmt([x / 1e3 for x in s['delta_p99_ns']], '{:+.1f}')} | |")
        L.append(f"| p99 residual (Δp99 − band Σ) | "
                 f"{fmt([x / 1e3 for x in s['p99_residual_ns']], '{:+.1f}')} | |")
        top = [(n, v) for n, v in cs if abs(v["share_median"]) >= 0.05]
        L += ["", "What carries it: " + "; ".join(
            f"{n} {v['median_ns'] / 1e3:+.1f} µs ({v['share_median']:.0%})" for n, v in top)
            + f" of a median Δmean of {statistics.median(s['delta_mean_ns']) / 1e3:+.1f} µs."]
        L += ["", f"The repetition with the median Δmean (rep {ds['median_rep']}), as "
              "`walscope diff` prints it:", "", "```", ds["median_text"].rstrip(), "```"]
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="example: sudo bench/postgres_commit.py --reps 5")
    ap.add_argument("--reps", type=int, default=5, help="repetitions (default 5)")
    ap.add_argument("--transactions", type=int, default=1000,
                    help="pgbench -t: transactions per client (8 clients; default 1000)")
    ap.add_argument("--seed", type=int, default=27, help="the order's seed (default 27)")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--name", default="postgres_commit")
    ap.add_argument("--keep", type=Path,
                    help="keep the traced run folders in this folder (outside /tmp/pgc*)")
    ap.add_argument("--render-only", action="store_true",
                    help="write the .md again from the output folder's .json")
    a = ap.parse_args(argv)
    path = a.output / f"{a.name}.json"
    if a.render_only:
        res = json.loads(path.read_text())
        (a.output / f"{a.name}.md").write_text(render(res))
        return 0
    if a.reps < 2 or a.transactions < 1:
        ap.error("--reps must be at least 2 and --transactions at least 1")
    if os.geteuid() != 0:
        print("postgres_commit.py: run as root", file=sys.stderr)
        return 1
    started = time.monotonic()
    rng = random.Random(a.seed)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "?"
    work = Path(tempfile.mkdtemp(prefix="pgc", dir="/tmp"))   # short: sockets live here
    work.chmod(0o755)
    # the plain command's place (runs/ under the working directory, ROOT),
    # not beside the clusters: on this VM's journal-less ext4 a run folder
    # beside an fsync-bound database cost it 2-4% (NOTES, eleventh session)
    keep = a.keep or ROOT / RUNS_DIR / f"bench-pgc-{os.getpid()}"
    keep.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, Any]] = []
    diffs: dict[str, Any] = {f"{x}-{y}": {"json": [], "text": []} for x, y in DIFFS}
    try:
        template = work / "tpl"
        with heavy_lock():
            p = subprocess.run(["python3", "-m", "runners.workloads.postgres", "prepare",
                                str(template), "--scale", "1"], capture_output=True, text=True,
                               cwd=ROOT, env={**os.environ, "PATH": SAFE_PATH})
        if p.returncode:
            raise SystemExit(f"postgres_commit: prepare failed: {p.stderr[-1000:]}")
        version = p.stdout.strip()
        i = 0
        for rep in range(a.reps):
            order = [(c, arm) for c in CELLS for arm in ARMS] + [("a", AA)]
            rng.shuffle(order)
            for cell, arm in order:
                r = one_run(work, template, i, cell, arm, a.transactions, keep)
                r["rep"] = rep
                runs.append(r)
                i += 1
                print(f"rep {rep} {cell} {arm:14} {r['tps']:7.0f} tps {r['latency_ms']:6.2f} ms"
                      + (f"  rows {r['rows']}/{r['processed']}" if "rows" in r else "")
                      + f"  ({r['wall_s']:.1f} s)", file=sys.stderr, flush=True)
            full = {r["cell"]: r["run"] for r in runs if r["rep"] == rep and r["arm"] == "full"}
            for x, y in DIFFS:
                j, t = walscope_diff(full[x], full[y])
                diffs[f"{x}-{y}"]["json"].append(j)
                diffs[f"{x}-{y}"]["text"].append(t)
                resid = abs(j["mean"]["residual_ns"])
                if resid > 0.05 * abs(j["mean"]["delta_ns"]):
                    raise SystemExit(f"postgres_commit: diff {full[x]} {full[y]}: residual "
                                     f"{resid:.0f} ns of Δmean {j['mean']['delta_ns']:.0f} ns")
            if not a.keep:   # the traced run folders of a finished repetition
                for r in runs:
                    if r["rep"] == rep and "run" in r:
                        shutil.rmtree(r["run"], ignore_errors=True)
    except BaseException:
        for child in work.iterdir():   # the clusters; the run folders stay
            if child != keep:
                shutil.rmtree(child, ignore_errors=True)
        print(f"postgres_commit: stopped; traced run folders left in {keep}", file=sys.stderr)
        raise
    shutil.rmtree(work, ignore_errors=True)
    if not a.keep:
        shutil.rmtree(keep, ignore_errors=True)
    order = list(next(r for r in runs if r["arm"] == "full")["components"])
    out_diffs = {}
    for k, v in diffs.items():
        dm = [j["mean"]["delta_ns"] for j in v["json"]]
        med = sorted(range(len(dm)), key=lambda n: dm[n])[len(dm) // 2]
        out_diffs[k] = {"summary": summarise_diffs(v["json"]), "median_rep": med,
                        "median_text": v["text"][med], "per_rep": v["json"]}
    res = {"format": "walscope-bench-postgres-commit/1", "command": " ".join(
        ["sudo bench/postgres_commit.py", *(argv if argv is not None else sys.argv[1:])]),
        "commit": commit, "date": time.strftime("%Y-%m-%d"), "seed": a.seed, "reps": a.reps,
        "transactions": a.transactions, "postgres": version,
        "machine": f"{os.cpu_count()} CPUs, {os.uname().release}",
        "elapsed_min": (time.monotonic() - started) / 60, "cells": CELLS,
        "component_order": order, "runs": runs, "diffs": out_diffs}
    md = render(res)
    a.output.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=1) + "\n")
    (a.output / f"{a.name}.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
