#!/usr/bin/env python3
"""Run a scenario matrix: untraced baselines and a traced run per cell.

    sudo ./runners/experiments/run_matrix.py runners/experiments/scenarios/smoke.toml \
        [-o DIR] [--cpu-types P:0,E:1]

Each cell gets `repeats` untraced runs and one traced run (trace_wal.py's
machinery, same run-folder format, in DIR/<cell>/traced), run in rounds:
every cell once per round, in a shuffled order, plus a second untraced run
of the first cell (the A/A pair: the matrix's own noise floor); the traced
runs join the middle round.  The workload's own report is parsed into
DIR/matrix.parquet (one row per run), with tracing overhead per cell;
DIR/report.html compares all cells at the end.  Each finished run leaves
DIR/<cell>/<kind><round>.json: rerunning resumes, and an interrupt keeps
what finished.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import random
import re
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402
in_venv(str(ROOT / "trace_wal.py"), __file__)   # the project's .venv, whoever starts it

import pandas as pd  # noqa: E402
from tqdm import tqdm  # noqa: E402

from collectors import topology  # noqa: E402
from runners.command.plan import TraceError, TraceOptions  # noqa: E402
from runners.command.record import cpu_model  # noqa: E402
from runners.command.trace import trace  # noqa: E402
from runfolder.files import REPORT_HTML, RunFolder  # noqa: E402
from collectors.session import RunAs, chown_tree  # noqa: E402
from engines.rocksdb import report as db_bench_report  # noqa: E402
from runners.experiments.scenario import Cell, Scenario, ScenarioError, load  # noqa: E402


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


# interrupt lines of block devices in /proc/interrupts (virtio-blk,
# NVMe, AHCI/SATA, SCSI)
BLOCK_IRQ = re.compile(r"virtio\d+-req|nvme|ahci|ata_piix|scsi|mmc|xhci_hcd")


def block_irq_cpus(text: str) -> dict[str, list[int]]:
    """Per block-device interrupt line of /proc/interrupts, its count on
    each CPU so far: where a synced write's completion wakes its waiter."""
    lines = text.splitlines()
    if not lines:
        return {}
    ncpu = len(lines[0].split())
    out = {}
    for line in lines[1:]:
        f = line.split()
        if len(f) > ncpu + 1 and BLOCK_IRQ.search(line):
            try:
                out[f[-1]] = [int(x) for x in f[1:ncpu + 1]]
            except ValueError:
                continue
    return out


def environment(db_dir: Path, topo: topology.Topology) -> dict[str, Any]:
    df = subprocess.run(["df", "-T", str(db_dir)], capture_output=True, text=True).stdout
    fs = df.splitlines()[-1].split() if df else []
    return {"kernel": os.uname().release, "cpu_model": cpu_model(),
            "cpu_types": topo.letters(), "cpu_types_source": topo.source,
            "db_device": fs[0] if fs else None, "db_fs": fs[1] if len(fs) > 1 else None,
            "rocksdb": subprocess.run(["db_bench", "--version"], capture_output=True,
                                      text=True).stdout.strip() or None,
            "sqlite": sqlite3.sqlite_version,
            "block_irqs": block_irq_cpus(Path("/proc/interrupts").read_text())}


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
    parsed = db_bench_report.parse(out)
    d = db_bench_report.derived(parsed)
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


def db_sizes(db: Path) -> dict[str, int]:
    """What the workload left on disk when it exited (the files' sizes, not
    their blocks): in all, in SST files and in WAL files (RocksDB's *.log):
    space amplification's numerator."""
    files = [f for f in db.rglob("*") if f.is_file()]
    size = {f: f.stat().st_size for f in files}
    return {"db_bytes": sum(size.values()),
            "db_sst_bytes": sum(v for f, v in size.items() if f.suffix == ".sst"),
            "db_wal_bytes": sum(v for f, v in size.items() if f.suffix == ".log")}


@dataclass(frozen=True)
class Unit:
    """One run of the schedule: a cell's untraced baseline of a round, the
    A/A cell's second untraced run of a round, or a cell's traced run."""
    cell: Cell
    kind: str       # BASELINE, AA, TRACED or WARMUP
    rep: int        # the round (0 for the traced run)

    @property
    def key(self) -> str:
        return f"{self.kind}{self.rep}"


BASELINE, AA, TRACED, WARMUP = "baseline", "aa", "traced", "warmup"


def traced_in(repeats: int, traced_rounds: int) -> list[int]:
    """The rounds with a traced run of every cell: the middle one, then
    outwards (traced_rounds of them)."""
    n = max(repeats, 1)
    mid = repeats // 2
    order = sorted(range(n), key=lambda r: (abs(r - mid), r))
    return sorted(order[:max(1, min(traced_rounds, n))])


def traced_rep(r: int, repeats: int) -> int:
    """The rep of round r's traced run: the middle round's is 0 (its folder
    is "traced", as a matrix of one traced round has it), the others' their
    round + 1 before the middle and their round after it."""
    mid = repeats // 2
    return 0 if r == mid else r + 1 if r < mid else r


def traced_round(rep: int, repeats: int) -> int:
    """The round a traced run of this rep ran in (traced_rep's inverse)."""
    mid = repeats // 2
    return mid if rep == 0 else rep - 1 if rep <= mid else rep


def schedule(cells: list[Cell], repeats: int, seed: int,
             aa: list[Cell] | None = None, traced_rounds: int = 1) -> list[Unit]:
    """Every run of the matrix, in the order they run: `repeats` rounds, each
    running every cell's baseline once plus the A/A cells' second runs
    (aa: by default cells[0]), shuffled within the round; the traced runs
    join the middle round (traced_rounds > 1: that many rounds from the
    middle out), so the baselines of every cell sandwich them. Machine
    drift over minutes then lands on every cell alike instead of on
    whichever ran last, and the A/A pairs measure it."""
    aa = aa if aa is not None else cells[:1]
    traced = traced_in(repeats, traced_rounds)
    rng = random.Random(seed)
    # one untraced run first, kept out of every figure: a matrix's very
    # first run meets cold caches (study 001's read 0.77 of the next)
    units: list[Unit] = [Unit(cells[0], WARMUP, 0)] if repeats else []
    for r in range(max(repeats, 1)):
        rep = traced_rep(r, repeats)
        rnd = [Unit(c, TRACED, rep) for c in cells] if r in traced else []
        if repeats:
            rnd += [Unit(c, BASELINE, r) for c in cells] + [Unit(c, AA, r) for c in aa]
        rng.shuffle(rnd)
        units += rnd
    return units


def order_seed(sc: Scenario) -> int:
    """The schedule's seed: fixed per scenario, so a rerun repeats the order."""
    return zlib.crc32(sc.name.encode())


class Runner:
    """Runs units of one matrix folder; each finished unit leaves
    DIR/<cell>/<kind><rep>.json (its rows), so an interrupted matrix resumes
    where it stopped."""

    def __init__(self, sc: Scenario, out: Path, topo: topology.Topology, run_as: RunAs):
        self.sc, self.out, self.topo, self.run_as = sc, out, topo, run_as
        self.tpcc = "runners.workloads.sqlite_tpcc" in sc.command
        self.cache = out / "cache"

    def unit_file(self, u: Unit) -> Path:
        return self.out / u.cell.name / f"{u.key}.json"

    def done(self, u: Unit) -> bool:
        return self.unit_file(u).exists()

    def run(self, u: Unit, seq: int) -> None:
        cdir = self.out / u.cell.name
        cdir.mkdir(exist_ok=True)
        started = time.time()
        rows = self.traced(u.cell, cdir, u.rep) if u.kind == TRACED else \
            self.untraced(u, cdir)
        for r in rows:
            r.update(seq=seq, started_s=started)
        self.unit_file(u).write_text(json.dumps(rows, default=str, indent=1))

    def untraced(self, u: Unit, cdir: Path) -> list[dict]:
        db = cdir / f"db-{u.key}"
        logs = cdir / u.key
        for d in (db, logs):
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir()
            chown_tree(d, self.run_as)
        argv = pin_prefix(u.cell, self.topo) + self.sc.argv(u.cell, str(db), str(self.cache))
        text = run_untraced(argv, self.run_as, cdir / f"{u.key}.log", self.sc.timeout_s, logs)
        sizes = db_sizes(db)
        shutil.rmtree(db, ignore_errors=True)
        return (tpcc_rows(u.cell, u.kind, u.rep, logs, sizes) if self.tpcc else
                rows_for(u.cell, u.kind, u.rep, text, sizes))

    def traced(self, cell: Cell, cdir: Path, rep: int = 0) -> list[dict]:
        """A traced run: rep 0 (the middle round's) into <cell>/traced, any
        other round's into <cell>/traced<rep>."""
        db = cdir / "db-traced"
        folder = cdir / ("traced" if rep == 0 else f"traced{rep}")
        for d in (db, folder):
            shutil.rmtree(d, ignore_errors=True)
        db.mkdir()
        chown_tree(db, self.run_as)
        topo = self.topo
        res = trace(TraceOptions(
            command=pin_prefix(cell, topo) + self.sc.argv(cell, str(db), str(self.cache)),
            output=folder, cwd=str(ROOT), mode=self.sc.mode,
            cpu_types=None if topo.source != "declared"
            else ",".join(f"{t}:{i}" for i, t in enumerate(topo.types) if t in "PE"),
            user=self.run_as.name, echo=False, print_table=False,
            allow_empty=True))   # a cell may only read
        sizes = db_sizes(db)
        shutil.rmtree(db, ignore_errors=True)
        if res.exit_code != 0:
            raise MatrixError(f"cell {cell.name}: traced run exited {res.exit_code}")
        s = res.summary
        extra = {"run_dir": str(res.run_dir.relative_to(self.out)),
                 "traced_writes": s["writes"]["count"],
                 **{f"mean_{c}_ns": v["mean_ns"] for c, v in s["components"].items()},
                 "lost_events": sum(s["lost_events"].values()), **sizes}
        if self.tpcc:
            return tpcc_rows(cell, TRACED, rep, res.run_dir, extra, s.get("by_type"))
        return rows_for(cell, TRACED, rep, RunFolder(res.run_dir).command_log.read_text(),
                        extra)

    def finish(self, cell: Cell) -> list[dict]:
        """The cell's rows from its units, with the traced/untraced ratios;
        written to cell.json."""
        cdir = self.out / cell.name
        rows: list[dict] = []
        for f in sorted(cdir.glob("*.json")):
            if f.name != "cell.json":
                rows += json.loads(f.read_text())
        compare_traced(rows, self.tpcc, self.sc.repeats)
        (cdir / "cell.json").write_text(json.dumps({"values": cell.values, "rows": rows},
                                                   default=str, indent=1))
        return rows


def compare_traced(rows: list[dict], tpcc: bool, repeats: int = 1) -> None:
    """Each row of a cell gets the traced runs against the cell's baselines
    (not the A/A runs): throughput, the medians'; and for sqlite_tpcc each
    traced run's compensated latency against the untraced run of its own
    round (mean, and p50, which lock-wait outliers spare), as the verdict
    rule pairs runs: the VM's drift over minutes moved a traced run 0.8-1.3x
    off the median of five rounds, every type alike (study 004). A round
    without its baseline falls back to the median."""
    if tpcc:
        for stat, traced_col in (("mean_us", "traced_adj_mean_us"),
                                 ("p50_us", "traced_adj_p50_us")):
            base: dict[str, dict[int, float]] = {}
            for r in rows:
                if r["kind"] == BASELINE:
                    base.setdefault(r["benchmark"], {})[int(r["rep"])] = r[stat]
            for r in rows:
                b = base.get(r["benchmark"], {})
                if r["kind"] == TRACED and r.get(traced_col) and b:
                    own = b.get(traced_round(int(r["rep"]), repeats))
                    ref = own if own else statistics.median(b.values())
                    r[f"adj_vs_baseline_{stat[:-3]}"] = r[traced_col] / ref
    base = [r["ops_sec"] for r in rows if r["kind"] == BASELINE and r.get("ops_sec")]
    traced_ops = [r["ops_sec"] for r in rows if r["kind"] == TRACED and r.get("ops_sec")]
    if base and traced_ops:
        ratio = statistics.median(traced_ops) / statistics.median(base)
        for r in rows:
            r["overhead_ratio"] = ratio


def run(sc: Scenario, out: Path, cpu_types: str | None = None, user: str | None = None,
        report: bool = True, quiet: bool = False, seed: int | None = None) -> pd.DataFrame:
    """Every run of sc into the matrix folder out, in the schedule's
    interleaved order (resuming finished runs); returns matrix.parquet's
    frame.  Raises MatrixError, ScenarioError, TraceError or TopologyError
    with a one-line message."""
    topo = topology.resolve(cpu_types)
    run_as = RunAs.lookup(user)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cache").mkdir(exist_ok=True)
    chown_tree(out / "cache", run_as)
    cells = sc.cells()
    for c in cells:  # refuse impossible pinning before running anything
        pin_prefix(c, topo)
    seed = order_seed(sc) if seed is None else seed
    runner = Runner(sc, out, topo, run_as)
    families = sc.aa_cells()
    units = schedule(cells, sc.repeats, seed, [c for fam in families.values() for c in fam],
                     sc.traced_rounds)
    todo = [(i, u) for i, u in enumerate(units) if not runner.done(u)]
    env_json = out / "environment.json"
    machine = environment(out, topo)
    if len(todo) < len(units) and env_json.exists():
        # a resumed matrix keeps the machine as its first run saw it (where
        # the disk's interrupts had landed by then); the scenario is today's
        began = json.loads(env_json.read_text())
        machine = {k: began.get(k, v) for k, v in machine.items()}
    env_json.write_text(json.dumps(
        {**machine, "scenario": str(sc.path), "command": sc.command,
         "mode": sc.mode, "repeats": sc.repeats, "fixed": sc.fixed, "axes": sc.axes,
         "fixed_by": sc.fixed_by,
         "order_seed": seed, "aa_cell": cells[0].name, "aa_by": sc.aa_by,
         "traced_rounds": sc.traced_rounds,
         "aa_cells": {f: [c.name for c in fam] for f, fam in families.items()},
         "families": {c.name: sc.family(c) for c in cells}},
        indent=1, default=str))
    if len(todo) < len(units):
        print(f"run_matrix: {len(units) - len(todo)} of {len(units)} runs done earlier",
              file=sys.stderr)
    with tqdm(todo, desc=sc.name, unit="run", file=sys.stderr, dynamic_ncols=True,
              disable=quiet) as bar:
        for seq, u in bar:
            bar.set_postfix_str(f"{u.cell.name} {u.key}")
            runner.run(u, seq)
    rows: list[dict] = []
    for c in cells:
        rows += runner.finish(c)
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
    ap.add_argument("--seed", type=int,
                    help="seed of the run order (default: fixed per scenario)")
    a = ap.parse_args(argv)
    from analysis.heap import keep_heap_small
    keep_heap_small()
    try:
        sc = load(a.scenario)
        out = a.output or ROOT / "runs" / f"matrix-{sc.name}"
        df = run(sc, out, a.cpu_types, a.user, report=not a.no_report, seed=a.seed)
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
