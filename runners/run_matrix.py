#!/usr/bin/env python3
"""Run a scenario matrix: untraced baselines and a traced run per cell.

    sudo ./runners/run_matrix.py runners/scenarios/smoke.toml [-o DIR] [--cpu-types P:0,E:1]

Each cell gets `repeats` untraced runs and one traced run (trace_wal.py's
machinery, same run-folder format, in DIR/<cell>/traced).  db_bench's own
report is parsed into DIR/matrix.parquet (one row per run), with tracing
overhead per cell; DIR/report.html compares all cells at the end.  A
finished cell leaves DIR/<cell>/cell.json: rerunning resumes, and an
interrupt keeps what finished.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from runners.entry import in_venv  # noqa: E402
in_venv(str(ROOT / "trace_wal.py"), __file__)   # the project's .venv, whoever starts it

import pandas as pd  # noqa: E402
from tqdm import tqdm  # noqa: E402

from collectors import topology  # noqa: E402
from runners.plan import TraceError, TraceOptions  # noqa: E402
from runners.record import cpu_model  # noqa: E402
from runners.trace import trace  # noqa: E402
from collectors.run_folder import REPORT_HTML, RunFolder  # noqa: E402
from collectors.session import RunAs, chown_tree  # noqa: E402
from analysis import workload_output  # noqa: E402
from runners.scenario import Cell, Scenario, ScenarioError, load  # noqa: E402


class MatrixError(RuntimeError):
    pass


def pin_prefix(cell: Cell, topo: topology.Topology) -> list[str]:
    pin = cell.values.get("pin", "none")
    if pin == "none":
        return []
    cpus = topo.cpus(pin)
    if not topo.hybrid or not cpus:
        raise MatrixError(
            f"cell {cell.name}: pin={pin} needs P and E cores, but this machine's "
            f"CPUs are {topo.source} ({topo.letters()}); declare them with "
            "--cpu-types P:0,E:1")
    return ["taskset", "-c", ",".join(map(str, cpus))]


def environment(db_dir: Path, topo: topology.Topology) -> dict[str, Any]:
    df = subprocess.run(["df", "-T", str(db_dir)], capture_output=True, text=True).stdout
    fs = df.splitlines()[-1].split() if df else []
    return {"kernel": os.uname().release, "cpu_model": cpu_model(),
            "cpu_types": topo.letters(), "cpu_types_source": topo.source,
            "db_device": fs[0] if fs else None, "db_fs": fs[1] if len(fs) > 1 else None,
            "rocksdb": subprocess.run(["db_bench", "--version"], capture_output=True,
                                      text=True).stdout.strip() or None,
            "sqlite": sqlite3.sqlite_version}


def run_untraced(argv: list[str], run_as: RunAs, log: Path, timeout: int,
                 run_dir: Path) -> str:
    """One baseline run; like a traced one, it may log into run_dir
    (WALSCOPE_RUN_DIR), e.g. sqlite_tpcc's txlog.csv."""
    kw: dict[str, Any] = {}
    if os.getuid() == 0 and run_as.uid != 0:
        kw = dict(user=run_as.uid, group=run_as.gid, extra_groups=list(run_as.groups))
    env = {**run_as.env(), "WALSCOPE_RUN_DIR": str(run_dir.resolve())}
    p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT,
                       timeout=timeout, **kw)
    log.write_text(p.stdout + p.stderr)
    if p.returncode != 0:
        raise MatrixError(f"{' '.join(argv[:3])}... exited {p.returncode} (see {log})")
    return p.stdout


def axis_cols(cell: Cell) -> dict[str, str]:
    return {f"axis_{k}": (str(v).lower() if isinstance(v, bool) else str(v))
            for k, v in cell.values.items()}


def tpcc_rows(cell: Cell, kind: str, rep: int, run_dir: Path,
              extra: dict[str, Any], by_type: dict[str, Any] | None = None) -> list[dict]:
    """sqlite_tpcc's own results: one row per transaction type."""
    try:
        meta = json.loads(RunFolder(run_dir).txlog_json.read_text())["summary"]
    except (OSError, ValueError, KeyError):
        raise MatrixError(f"{run_dir}: sqlite_tpcc wrote no results (txlog.json)") from None
    rows = []
    tps = meta["transactions"] / meta["elapsed_s"] if meta["elapsed_s"] else 0.0
    for typ, v in meta["types"].items():
        row = {"cell": cell.name, **axis_cols(cell), "kind": kind, "rep": rep,
               "benchmark": typ, "ops_sec": tps, "tpmC": meta["tpmC"],
               "count": v["count"], "mean_us": v["mean_ms"] * 1e3,
               "p50_us": v["p50_ms"] * 1e3, "p99_us": v["p99_ms"] * 1e3, **extra}
        if by_type and typ in by_type:
            t = by_type[typ]
            row.update(traced_mean_us=t["mean_ns"] / 1e3,
                       traced_adj_mean_us=t["mean_adj_ns"] / 1e3,
                       traced_adj_p50_us=t["p50_adj_ns"] / 1e3,
                       **{f"mean_{c}_us": x / 1e3 for c, x in t["components"].items()})
        rows.append(row)
    return rows


def rows_for(cell: Cell, kind: str, rep: int, out: str, extra: dict[str, Any]) -> list[dict]:
    parsed = workload_output.parse(out)
    d = workload_output.derived(parsed)
    rows = []
    for b in parsed["benchmarks"] or [{"benchmark": None}]:
        rows.append({"cell": cell.name, **axis_cols(cell),
                     "kind": kind, "rep": rep, **b, **d,
                     "wal_sync_micros_sum": parsed["histograms"].get(
                         "rocksdb.wal.file.sync.micros", {}).get("sum"),
                     "db_write_micros_p99": parsed["histograms"].get(
                         "rocksdb.db.write.micros", {}).get("p99"),
                     **extra})
    return rows


def run_cell(sc: Scenario, cell: Cell, out: Path, topo: topology.Topology,
             run_as: RunAs) -> list[dict]:
    cdir = out / cell.name
    shutil.rmtree(cdir, ignore_errors=True)
    cdir.mkdir(parents=True)
    prefix = pin_prefix(cell, topo)
    tpcc = "runners.sqlite_tpcc" in sc.command
    cache = out / "cache"
    rows: list[dict] = []

    def baseline(rep: int) -> None:
        db = cdir / f"db-base{rep}"
        logs = cdir / f"baseline{rep}"
        for d in (db, logs):
            d.mkdir()
            chown_tree(d, run_as)
        text = run_untraced(prefix + sc.argv(cell, str(db), str(cache)), run_as,
                            cdir / f"baseline{rep}.log", sc.timeout_s, logs)
        rows.extend(tpcc_rows(cell, "baseline", rep, logs, {}) if tpcc else
                    rows_for(cell, "baseline", rep, text, {}))
        shutil.rmtree(db, ignore_errors=True)

    # the baselines sandwich the traced run (half before, half after), so a
    # machine that drifts over minutes moves both sides of the ratio alike
    before = (sc.repeats + 1) // 2
    for rep in range(before):
        baseline(rep)
    db = cdir / "db-traced"
    db.mkdir()
    chown_tree(db, run_as)
    res = trace(TraceOptions(command=prefix + sc.argv(cell, str(db), str(cache)),
                             output=cdir / "traced", cwd=str(ROOT),
                             mode=sc.mode, cpu_types=None if topo.source != "declared"
                             else ",".join(f"{t}:{i}" for i, t in enumerate(topo.types)
                                           if t in "PE"),
                             user=run_as.name, echo=False, print_table=False,
                             allow_empty=True))   # a cell may only read
    shutil.rmtree(db, ignore_errors=True)
    for rep in range(before, sc.repeats):
        baseline(rep)
    if res.exit_code != 0:
        raise MatrixError(f"cell {cell.name}: traced run exited {res.exit_code}")
    s = res.summary
    extra = {"run_dir": str(res.run_dir.relative_to(out)),
             "traced_writes": s["writes"]["count"],
             **{f"mean_{c}_ns": v["mean_ns"] for c, v in s["components"].items()},
             "lost_events": sum(s["lost_events"].values())}
    if tpcc:
        rows += tpcc_rows(cell, "traced", 0, res.run_dir, extra, s.get("by_type"))
        # compensated traced latency against the untraced runs' own (medians
        # of the repeats, the mean of the middle two when even): mean, and
        # p50, which lock-wait outliers spare
        for stat, traced_col in (("mean_us", "traced_adj_mean_us"),
                                 ("p50_us", "traced_adj_p50_us")):
            base: dict[str, list[float]] = {}
            for r in rows:
                if r["kind"] == "baseline":
                    base.setdefault(r["benchmark"], []).append(r[stat])
            for r in rows:
                b = base.get(r["benchmark"], [])
                if r["kind"] == "traced" and r.get(traced_col) and b:
                    r[f"adj_vs_baseline_{stat[:-3]}"] = r[traced_col] / statistics.median(b)
    else:
        rows += rows_for(cell, "traced", 0, RunFolder(res.run_dir).command_log.read_text(),
                         extra)
    base = [r["ops_sec"] for r in rows if r["kind"] == "baseline" and r.get("ops_sec")]
    traced_ops = [r["ops_sec"] for r in rows if r["kind"] == "traced" and r.get("ops_sec")]
    if base and traced_ops:
        ratio = traced_ops[0] / statistics.median(base)
        for r in rows:
            r["overhead_ratio"] = ratio
    (cdir / "cell.json").write_text(json.dumps({"values": cell.values, "rows": rows},
                                               default=str, indent=1))
    return rows


def run(sc: Scenario, out: Path, cpu_types: str | None = None, user: str | None = None,
        report: bool = True, quiet: bool = False) -> pd.DataFrame:
    """Every cell of sc into the matrix folder out (resuming finished cells);
    returns matrix.parquet's frame.  Raises MatrixError, ScenarioError,
    TraceError or TopologyError with a one-line message."""
    topo = topology.resolve(cpu_types)
    run_as = RunAs.lookup(user)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cache").mkdir(exist_ok=True)
    chown_tree(out / "cache", run_as)
    cells = sc.cells()
    for c in cells:  # refuse impossible pinning before running anything
        pin_prefix(c, topo)
    (out / "environment.json").write_text(json.dumps(
        {**environment(out, topo), "scenario": str(sc.path), "command": sc.command,
         "mode": sc.mode, "repeats": sc.repeats, "fixed": sc.fixed, "axes": sc.axes},
        indent=1, default=str))
    rows: list[dict] = []
    done = [c for c in cells if (out / c.name / "cell.json").exists()]
    for c in done:   # finished by an earlier, interrupted run: resumed
        rows += json.loads((out / c.name / "cell.json").read_text())["rows"]
        print(f"run_matrix: {c.name}: done earlier", file=sys.stderr)
    todo = [c for c in cells if c not in done]
    with tqdm(todo, desc=sc.name, unit="cell", file=sys.stderr, dynamic_ncols=True,
              disable=quiet) as bar:
        for cell in bar:
            bar.set_postfix_str(cell.name)
            rows += run_cell(sc, cell, out, topo, run_as)
    df = pd.DataFrame(rows)
    df.to_parquet(out / "matrix.parquet", index=False)
    if report:
        from viz import report as html_report
        html_report.build(html_report.find_runs([out]), out / REPORT_HTML, [out])
    chown_tree(out, run_as)
    return df


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", type=Path)
    ap.add_argument("-o", "--output", type=Path, help="matrix folder (default runs/matrix-<name>)")
    ap.add_argument("--cpu-types", help="declare core types, e.g. P:0,E:1")
    ap.add_argument("--user", help="run workloads as this user (default SUDO_USER)")
    ap.add_argument("--no-report", action="store_true")
    a = ap.parse_args(argv)
    from analysis.heap import keep_heap_small
    keep_heap_small()
    try:
        sc = load(a.scenario)
        out = a.output or ROOT / "runs" / f"matrix-{sc.name}"
        df = run(sc, out, a.cpu_types, a.user, report=not a.no_report)
        cols = [c for c in ("cell", "kind", "benchmark", "ops_sec", "mean_us", "p99_us",
                            "overhead_ratio", "adj_vs_baseline_mean",
                            "adj_vs_baseline_p50") if c in df]
        print(df[cols].to_string(index=False))
        print(f"matrix: {out}", file=sys.stderr)
    except (ScenarioError, MatrixError, TraceError, topology.TopologyError) as e:
        print(f"run_matrix: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("run_matrix: interrupted; finished cells are kept, rerun to resume",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
