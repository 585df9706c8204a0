#!/usr/bin/env python3
"""Traced latencies against the workload's own untraced timing.

    sudo bench/truth.py [--reps 5] [--workloads sync-off-1t,...] [--modes budget,full]

For each workload, untraced runs that time themselves (db_bench
--histogram: each Put; the SQLite TPC-C-like driver: each transaction, by
its own clock; pgbench: each transaction's -l log less its BEGIN's -r
latency, the span of a walscope row) are interleaved, in a shuffled order each round, with
traced runs in each mode.  Each traced run's compensated latencies (mean,
p50, p99 of summary.json writes.duration_adj) are set against the median
of the untraced runs; the untraced runs against their own median are the
noise (the A/A column).  The run's self-check (summary.json self_check) is
kept beside each traced run, to show whether it said when to distrust it.

Writes truth.json and truth.md to -o (bench/results); docs/attribution.md's
table is generated from truth.json (`make docs`).  --merge keeps the other
workloads of the results file; --render writes truth.md again from it.
"""
from __future__ import annotations

import argparse
import atexit
import csv
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.cells import MANY_CORE  # noqa: E402
from runfolder.files import RUNS_DIR  # noqa: E402
PY = sys.executable   # .venv's where setup.sh made one (trace_wal.py moves there)
VENV_PY = ROOT / ".venv" / "bin" / "python"
# traced runs' folders: the plain command's place (runs/ under the working
# directory, ROOT), not beside the database: on this VM's journal-less
# ext4 a folder beside an fsync-bound database cost it 2-4%
# (bench/results/NOTES.md, eleventh session)
RUNS = ROOT / RUNS_DIR
RUN_PREFIX = f"bench-truth-{os.getpid()}-"
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

WORKLOADS = {   # db_bench fillrandom, ~1-2 s untraced; the SQLite driver 4 s
    "sync-off-1t": ["--sync=false", "--threads=1", "--num=200000"],
    "sync-off-4t": ["--sync=false", "--threads=4", "--num=50000"],
    "sync-on-1t": ["--sync=true", "--threads=1", "--num=6000"],
    "sync-on-4t": ["--sync=true", "--threads=4", "--num=3000"],
    "sqlite-wal-2c": ["--journal-mode=wal", "--clients=2", "--duration=4"],
    # two writers that take turns at the database lock (study 004's cell
    # read 51x in the default mode)
    "sqlite-delete-2c": ["--journal-mode=delete", "--clients=2", "--duration=4"],
    # pgbench's TPC-B on a throwaway cluster (the README's PostgreSQL line);
    # -r: each statement's latency, -l: each transaction's
    "pgbench-c4": ["-c", "4", "-t", "500", "-r", "-l"],
}
TWO_CORE = list(WORKLOADS)
WORKLOADS.update(MANY_CORE)
# the SQLite cells five times longer (not run by default): whether a
# sample of windows settles where 4 s of a 2% budget gives 1-3 windows
WORKLOADS.update({f"{wl}-20s": [*WORKLOADS[wl][:-1], "--duration=20"]
                  for wl in ("sqlite-wal-2c", "sqlite-delete-2c")})
STATS = ("mean", "p50", "p99")
# the SQLite driver's transactions that write, as walscope labels them
SQLITE_TYPE = "new_order"


def command(wl: str, db: Path, own: bool = False) -> list[str]:
    """The workload; own: the SQLite driver's results file beside the
    database (traced, it goes to the run folder, where walscope reads it)."""
    args = WORKLOADS[wl]
    if wl.startswith("pgbench"):
        return ["python3", "-m", "runners.workloads.postgres", "bench",
                *(["-o", f"{db}/pgbench-result.json"] if own else []), "--", *args]
    if wl.startswith("sqlite"):
        return ["python3", "-m", "runners.workloads.sqlite_tpcc", f"--db={db}/tpcc.db",
                f"--template-dir={db}-template", "--synchronous=full", "--warehouses=1",
                "--scale=0.02", *([f"--results={db}/own.csv"] if own else []), *args]
    return ["db_bench", "--benchmarks=fillrandom", f"--db={db}", "--histogram", *args]


def db_bench_histogram(text: str) -> dict[str, float]:
    """The Put latency histogram db_bench printed (us -> ns)."""
    avg = re.search(r"Count: \d+ Average: ([\d.]+)", text)
    pct = re.search(r"Percentiles: P50: ([\d.]+) P75: [\d.]+ P99: ([\d.]+)", text)
    if not avg or not pct:
        raise SystemExit("truth: db_bench printed no histogram")
    return {"mean": float(avg.group(1)) * 1e3, "p50": float(pct.group(1)) * 1e3,
            "p99": float(pct.group(2)) * 1e3}


def driver_latencies(path: Path) -> dict[str, float]:
    """The SQLite driver's own clock of each new-order transaction that
    committed (its results file), and the mean of every transaction it
    began, a failed one too (mean_all: what the untouched lens, a
    client's time over its transactions, is held to: a BEGIN that waited
    out the 10 s busy timeout and failed is one of them, its wait
    included: one such of ~6,900 was a quarter of one DELETE run's mean)."""
    with open(path, newline="") as f:
        every = list(csv.DictReader(f))
    rows = [r for r in every if r["ok"] in ("True", "1")]
    lat = sorted(int(r["latency_ns"]) for r in rows if r["type"] == SQLITE_TYPE)
    if not lat:
        raise SystemExit(f"truth: {path} has no {SQLITE_TYPE} latencies")
    return {"mean": statistics.fmean(lat), "p50": lat[len(lat) // 2],
            "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))],
            "mean_all": statistics.fmean(int(r["latency_ns"]) for r in every),
            "transactions": len(every), "failed": len(every) - len(rows)}


def pgbench_latencies(result: Path) -> dict[str, float]:
    """pgbench's own clock of each transaction (-l), less its BEGIN's
    latency (-r): the span a walscope row has.  pgbench times a
    transaction from sending BEGIN to END's reply; the server's
    transaction starts when BEGIN arrives and its row ends at the
    commit, so BEGIN's round trip (its mean, from -r) is taken off
    every transaction, and END's reply (one way) is left in: the truth
    is within one one-way trip above the row's span (~25 us here)."""
    r = json.loads(result.read_text())
    out = r["pgbench"]["stdout"]
    begin = re.search(r"^\s*([\d.]+)\s+\d+\s+BEGIN;", out, re.M)
    if not begin:
        raise SystemExit(f"truth: {result} has no BEGIN latency (pgbench -r)")
    begin_ns = float(begin.group(1)) * 1e6
    lat: list[float] = []
    logs = [Path(p) for p in r.get("pgbench_logs") or []]
    for log in logs:   # one a thread with -j
        for line in log.read_text().splitlines():
            f = line.split()
            if len(f) >= 3 and f[2].isdigit():   # skipped/failed: not digits
                lat.append(int(f[2]) * 1e3 - begin_ns)
    for d in {log.parent for log in logs}:
        shutil.rmtree(d, ignore_errors=True)
    if not lat:
        raise SystemExit(f"truth: {result} lists no per-transaction log (pgbench -l)")
    lat.sort()
    mean = statistics.fmean(lat)
    return {"mean": mean, "p50": lat[len(lat) // 2],
            "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))], "mean_all": mean,
            "begin_ns": begin_ns, "t0_ns": r["pgbench"]["t0_ns"],
            "t1_ns": r["pgbench"]["t1_ns"]}


def untraced(wl: str, tmp: Path) -> dict[str, float]:
    db = fresh(tmp / "db")
    p = subprocess.run(command(wl, db, own=True), capture_output=True, text=True,
                       env={**os.environ, "PATH": SAFE_PATH}, cwd=ROOT, timeout=900)
    if p.returncode:
        raise SystemExit(f"truth: {wl} failed: {p.stderr[-500:]}")
    if wl.startswith("sqlite"):
        return driver_latencies(db / "own.csv")
    if wl.startswith("pgbench"):
        return pgbench_latencies(db / "pgbench-result.json")
    h = db_bench_histogram(p.stdout)
    return {**h, "mean_all": h["mean"]}


def traced(wl: str, mode: str, tmp: Path) -> dict[str, Any]:
    rd = RUNS / f"{RUN_PREFIX}{mode}"
    db = fresh(tmp / "db")
    flags = ["--mode", mode]
    p = subprocess.run([PY, str(ROOT / "trace_wal.py"), "-q", *flags, "-o", str(rd), "--",
                        *command(wl, db)], capture_output=True, text=True, cwd=ROOT,
                       timeout=1800)
    if p.returncode:
        raise SystemExit(f"truth: traced {wl} ({mode}) failed: {p.stderr[-800:]}")
    s = json.loads((rd / "summary.json").read_text())
    if wl.startswith("sqlite"):   # the driver's transactions of one type
        t = (s.get("by_type") or {}).get(SQLITE_TYPE)
        # the default's windows may hold none of that type: no figure
        out: dict[str, Any] = {"mean": t["mean_adj_ns"], "p50": t["p50_adj_ns"],
                               "p99": t["p99_adj_ns"], "raw_mean": t["mean_ns"]} if t \
            else {k: None for k in (*STATS, "raw_mean")}
        # span-matched in the same run: the rows against the driver's own
        # clock of the same transactions, and the driver's clock of every
        # transaction of the type in the traced run (its txlog.csv)
        out["same_rows"] = t["mean_adj_ns"] / t["app_mean_ns"] \
            if t and t.get("app_mean_ns") else None
        own = rd / "txlog.csv"
        mine = driver_latencies(own) if own.exists() else {}
        out["traced_own_mean"] = mine.get("mean")
        # the untouched lens span-matched: the driver's clock of every
        # transaction of the traced run, and its count of them against
        # the writes the lens counted in the traced interval
        out["traced_own_all"] = mine.get("mean_all")
        u = s.get("untouched") or {}
        out["count_ratio"] = u["writes_total"] / mine["transactions"] \
            if u.get("available") and mine.get("transactions") else None
    else:
        adj, raw = s["writes"]["duration_adj"], s["writes"]["duration"]
        out = {k: adj[f"{k}_ns"] for k in STATS}
        out.update({f"raw_{k}": raw[f"{k}_ns"] for k in STATS})
    out["writes"] = s["writes"]["count"]
    out["self_check"] = s.get("self_check")
    out["every_write"] = (s.get("budget") or {}).get("every_write")
    # the untouched lens (held to every transaction's mean: it cannot tell
    # types apart) and the headline, whichever lens it took
    u = s.get("untouched") or {}
    out["untouched"] = {"mean_all": u["mean_ns"], "in_write_all": u.get("in_write_mean_ns"),
                        "lo": u.get("lo_ns"), "hi": u.get("hi_ns"),
                        "trusted": u.get("trusted"), "share": u.get("untouched_share"),
                        "unit": u.get("unit")} \
        if u.get("available") else {"mean_all": None, "why": u.get("why")}
    h = s.get("headline") or {}
    lens = h.get("lens")
    out["headline"] = {"lens": lens, "trusted": h.get("trusted"),
                       # the rows' figure of the measured type, else the lens's mean
                       "mean": out["mean"] if lens == "rows" else None,
                       "mean_all": h.get("mean_ns") if lens == "untouched" else None,
                       "p99": out["p99"] if lens == "rows" else None}
    if not wl.startswith("sqlite"):   # its own mean: the rows' may be one phase's
        out["headline"]["mean"] = h.get("mean_ns")
    if wl.startswith("pgbench"):
        out.update(pgbench_phase(rd))
        out["mean_all"] = out["mean"]
    elif not wl.startswith("sqlite"):   # the traced db_bench's own histogram
        own = (rd / "command.log").read_text(errors="replace")
        out["traced_own_mean"] = db_bench_histogram(own)["mean"] \
            if "Average:" in own else None
    return out


def pgbench_phase(rd: Path) -> dict[str, Any]:
    """What of a traced pgbench run is pgbench's own: its clock of the
    same run (span-matched, traced_own_mean) and the rows that began
    while pgbench ran (phase_mean: the set-up's transactions, pgbench
    -i's and the runner's, are rows too and the headline holds them)."""
    own = pgbench_latencies(rd / "pgbench-result.json")
    # the rows, read by the venv's Python (sudo's python3 may have no pandas)
    code = ("import json, sys; import pandas as pd; "
            "w = pd.read_parquet(sys.argv[1], columns=['start_ns', 'dur_adj_ns']); "
            "i = w[(w.start_ns >= int(sys.argv[2])) & (w.start_ns <= int(sys.argv[3]))]; "
            "print(json.dumps([len(w), len(i), float(i.dur_adj_ns.mean()) if len(i) "
            "else None]))")
    n, k, mean = json.loads(subprocess.run(
        [str(VENV_PY) if VENV_PY.exists() else PY, "-c", code, str(rd / "writes.parquet"), str(int(own["t0_ns"])),
         str(int(own["t1_ns"]))], capture_output=True, text=True, check=True).stdout)
    return {"traced_own_mean": own["mean"], "phase_rows": k, "phase_mean": mean,
            "rows_outside": n - k}


def fresh(path: Path) -> Path:
    """An empty database directory, the last traced run's folder gone
    before the sync, whichever arm runs next (bench/overhead.py)."""
    for old in RUNS.glob(f"{RUN_PREFIX}*"):
        shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(f"{path}-template", ignore_errors=True)
    path.mkdir(parents=True)
    os.sync()
    return path


LENSES = ("untouched", "headline")


def ratios(rs: list[dict[str, Any]], ref: dict[str, float]) -> dict[str, Any]:
    """Each statistic of the runs over the reference: median and range."""
    out = {}
    for k in (*STATS, "mean_all", "in_write_all", "phase_mean", "traced_own_mean"):
        # the in-write mean is held to the untraced mean of every transaction;
        # pgbench's phase rows and a traced run's own clock to the mean
        base = ref.get("mean_all") if k == "in_write_all" else \
            ref.get("mean") if k in ("phase_mean", "traced_own_mean") else ref.get(k)
        v = [r[k] / base for r in rs if base and r.get(k) is not None]
        if v:
            out[k] = {"median": statistics.median(v), "lo": min(v), "hi": max(v)}
    return out


def summarize(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    keys = [k for k in (*STATS, "mean_all") if all(k in r for r in runs["untraced"])]
    ref = {k: statistics.median(r[k] for r in runs["untraced"]) for k in keys}
    out: dict[str, Any] = {"reference": ref}
    for arm, rs in runs.items():
        out[arm] = ratios(rs, ref)
        if arm == "untraced":
            continue
        for lens in LENSES:   # the lenses of each traced run, as arms of their own
            got = [r[lens] for r in rs if r.get(lens)]
            if got:
                out[f"{arm}:{lens}"] = ratios(got, ref)
                if lens == "headline":
                    out[f"{arm}:{lens}"]["lenses"] = {
                        x: sum(g["lens"] == x for g in got) for x in ("rows", "untouched")}
                    out[f"{arm}:{lens}"]["trusted"] = sum(bool(g["trusted"]) for g in got)
        # span-matched in the same run: the headline over the traced
        # workload's own clock (pgbench, the SQLite driver, db_bench's
        # histogram), and SQLite's rows over the driver's clock of the
        # same transactions
        for key, v in (("own_run", [r["headline"]["mean"] / r["traced_own_mean"] for r in rs
                                    if (r.get("headline") or {}).get("mean")
                                    and r.get("traced_own_mean")]),
                       ("same_rows", [r["same_rows"] for r in rs if r.get("same_rows")]),
                       # the untouched lens over the driver's clock of every
                       # transaction of the same run, and its count over the
                       # driver's count
                       ("untouched_own", [r["untouched"]["mean_all"] / r["traced_own_all"]
                                          for r in rs if r.get("traced_own_all")
                                          and (r.get("untouched") or {}).get("mean_all")]),
                       ("count", [r["count_ratio"] for r in rs if r.get("count_ratio")])):
            if v:
                out[f"{arm}:{key}"] = {"median": statistics.median(v), "lo": min(v),
                                       "hi": max(v)}
    return out


def table(results: dict[str, Any], modes: list[str], reps: int) -> str:
    lines = [f"Traced latency / the workload's own untraced timing (medians of {reps} "
             "interleaved rounds, [range]); A/A: the untraced runs against their median.",
             "", "| workload | untraced mean / p99 | A/A mean | "
             + " | ".join(f"{m} mean | {m} p99" for m in modes) + " |",
             "|---|---|---|" + "---|---|" * len(modes)]
    for wl, r in results.items():
        s = r["summary"]
        u = s["reference"]

        def c(arm: str, k: str) -> str:
            v = s[arm].get(k)
            return f"{v['median']:.2f} [{v['lo']:.2f}, {v['hi']:.2f}]" if v else "-"
        lines.append(f"| {wl} | {u['mean'] / 1e3:.1f} / {u['p99'] / 1e3:.1f} us | "
                     f"{c('untraced', 'mean')} | "
                     + " | ".join(f"{c(m, 'mean')} | {c(m, 'p99')}" for m in modes) + " |")
    return "\n".join(lines) + "\n\n" + lens_table(results, modes)


def lens_table(results: dict[str, Any], modes: list[str]) -> str:
    """The lenses' table (docs/attribution.md generates it from truth.json);
    the untouched lens's own-run and count columns where a run has them
    (SQLite's, since 2026-11-29)."""
    counted = any(f"{m}:{k}" in r["summary"] for r in results.values() for m in modes
                  for k in ("untouched_own", "count"))
    lines = ["The lenses (analysis/answer.py): the untouched lens's mean (a writer's time "
             "per write) and its in-write mean (that less the writer's own work between "
             "writes, by the windows' rows) over the untraced mean of every transaction "
             "(db_bench: of every write, op to op); the headline's mean over the untraced "
             "mean of its span, with the lens it took in each run; span-matched in the same run: the "
             "headline over the traced workload's own clock (own run) and SQLite's rows over "
             "the driver's clock of the same transactions (same txns)"
             + ("; SQLite's untouched lens over the driver's clock of every transaction of "
                "the same run (untouched / own run) and the writes it counted in the traced "
                "interval over the driver's count of transactions (counted / driver's)"
                if counted else "") + ".", "",
             "| workload | untraced mean (all) | A/A | "
             + " | ".join(f"{m} untouched | {m} in-write | {m} headline | {m} lens | "
                          f"{m} headline / own run | {m} rows / same txns"
                          + (f" | {m} untouched / own run | {m} counted / driver's"
                             if counted else "")
                          for m in modes) + " |",
             "|---|---|---|" + ("---|" * (8 if counted else 6)) * len(modes)]
    shown = 0
    for wl, r in results.items():
        s = r["summary"]
        if "mean_all" not in s["reference"]:
            continue
        shown += 1

        def d(arm: str, k: str) -> str:
            v = (s.get(arm) or {}).get(k)
            return f"{v['median']:.2f} [{v['lo']:.2f}, {v['hi']:.2f}]" if v else "-"

        def head(m: str) -> str:
            """The headline's mean, of the runs whose lens measured the
            type (rows), else of every transaction (untouched); a cell
            whose runs took both says which."""
            h = s.get(f"{m}:headline") or {}
            return "; ".join(d(f"{m}:headline", k) + (" (all)" if k == "mean_all" else "")
                             for k in ("mean", "mean_all") if k in h) or "-"

        def own(m: str, k: str) -> str:
            v = s.get(f"{m}:{k}")
            return f"{v['median']:.2f} [{v['lo']:.2f}, {v['hi']:.2f}]" if v else "-"

        def lens(m: str) -> str:
            h = s.get(f"{m}:headline") or {}
            n = h.get("lenses") or {}
            return f"rows {n.get('rows', 0)}, untouched {n.get('untouched', 0)}; " \
                   f"{h.get('trusted', 0)} trusted" if n else "-"
        lines.append(f"| {wl} | {s['reference']['mean_all'] / 1e3:.1f} us | "
                     f"{d('untraced', 'mean_all')} | "
                     + " | ".join(f"{d(f'{m}:untouched', 'mean_all')} | "
                                  f"{d(f'{m}:untouched', 'in_write_all')} | {head(m)} | "
                                  f"{lens(m)} | {own(m, 'own_run')} | {own(m, 'same_rows')}"
                                  + (f" | {own(m, 'untouched_own')} | {own(m, 'count')}"
                                     if counted else "")
                                  for m in modes) + " |")
    if not shown:
        return "(the lenses not measured yet: `sudo bench/truth.py --reps 5`)\n"
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--workloads", default=",".join(TWO_CORE))
    ap.add_argument("--modes", default="budget,full")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--name", default="truth")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other workloads of an existing results file")
    ap.add_argument("--render", action="store_true",
                    help="only write the markdown again from the results file")
    a = ap.parse_args(argv)
    if a.render:
        results = json.loads((a.output / f"{a.name}.json").read_text())
        reps = max(r["reps"] for r in results.values())
        md = table(results, a.modes.split(","), reps)
        (a.output / f"{a.name}.md").write_text("# Truth under contention\n\n" + md)
        print(md)
        return 0
    modes = a.modes.split(",")
    wls = a.workloads.split(",")
    unknown = [w for w in wls if w not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload {unknown[0]!r} (choose from {', '.join(WORKLOADS)})")
    path = a.output / f"{a.name}.json"
    results: dict[str, Any] = json.loads(path.read_text()) if a.merge and path.exists() else {}
    rng = random.Random(1)
    atexit.register(lambda: [shutil.rmtree(d, ignore_errors=True)
                             for d in RUNS.glob(f"{RUN_PREFIX}*")])
    with tempfile.TemporaryDirectory(prefix="walscope-truth-") as d:
        tmp = Path(d)
        for wl in wls:
            runs: dict[str, list[dict[str, Any]]] = {"untraced": [], **{m: [] for m in modes}}
            for rep in range(a.reps):
                arms = ["untraced", *modes]
                rng.shuffle(arms)
                for arm in arms:
                    got = untraced(wl, tmp) if arm == "untraced" else traced(wl, arm, tmp)
                    runs[arm].append(got)
                    print(f"truth: {wl} round {rep + 1} {arm}: " + (
                        f"mean {got['mean'] / 1e3:.1f} p99 {got['p99'] / 1e3:.1f} us"
                        if got["mean"] is not None else "no rows of that type"),
                        file=sys.stderr)
            results[wl] = {"runs": runs, "summary": summarize(runs),
                           "args": WORKLOADS[wl], "reps": a.reps, "run_folder": "runs"}
    a.output.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1) + "\n")
    md = table(results, modes, a.reps)
    (a.output / f"{a.name}.md").write_text("# Truth under contention\n\n" + md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
