"""Scenario matrices: TOML validation, the smoke matrix end to end, pinning."""
from __future__ import annotations

import json
import re
import subprocess

import pandas as pd
import pytest

from runners.experiments.scenario import ScenarioError, load
from tests.conftest import ROOT

RUN_MATRIX = [str(ROOT / ".venv" / "bin" / "python"),
              str(ROOT / "runners" / "experiments" / "run_matrix.py")]
SCENARIOS = ROOT / "runners" / "experiments" / "scenarios"
GOOD = """name = "t"
command = "db_bench --benchmarks=fillrandom --num={num} --sync={sync} --db={db}"
[axes]
sync = [true, false]
[fixed]
num = 10
"""


@pytest.mark.parametrize("text,message", [
    (GOOD.replace("[axes]", "bogus = 1\n[axes]"), ":3: bogus: unknown key"),
    (GOOD.replace("sync = [true, false]", "speed = [1]"), ":4: axes.speed: unknown axis"),
    (GOOD.replace("sync = [true, false]", "sync = true"), ":4: axes.sync: must be a non-empty list"),
    (GOOD.replace('name = "t"', "name = 3"), ":1: name: must be a str"),
    (GOOD.replace('command = "db_bench', 'commnd = "db_bench'), ":2: commnd: unknown key"),
    ("name = 'x'\n[axes]\nsync=[true]\n", "missing required key 'command'"),
    (GOOD.replace("num = 10", "other = 10"), "placeholder {num}"),
    ("repeats = -1\n" + GOOD, ":1: repeats: must be between"),
    ("name = [", "not valid TOML"),
    (GOOD.replace("sync = [true, false]", 'sync = [true]\npin = ["X"]'), "axes.pin"),
    (GOOD + "[fixed_by.sync.maybe]\nnum = 5\n", "fixed_by.sync.maybe: must be a table"),
    (GOOD + "[fixed_by.sync.false]\nother = 5\n", "fixed_by.sync.false.other: is not a fixed"),
    ("traced_rounds = 3\n" + GOOD, "traced_rounds: must be between 1 and repeats"),
])
def test_scenario_errors_name_file_key_line(tmp_path, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ScenarioError) as e:
        load(f)
    assert str(e.value).startswith(str(f))
    assert message in str(e.value)
    p = subprocess.run(RUN_MATRIX + [str(f), "-o", str(tmp_path / "m")],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_shipped_scenarios_load():
    for f in SCENARIOS.glob("*.toml"):
        s = load(f)
        assert s.cells()


@pytest.mark.root
def test_smoke_matrix_end_to_end(tmp_path):
    out = tmp_path / "m"
    p = subprocess.run(RUN_MATRIX + [str(SCENARIOS / "smoke.toml"),
                                     "-o", str(out)], capture_output=True, text=True,
                       timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    df = pd.read_parquet(out / "matrix.parquet")
    # one round: each cell's baseline, the A/A cells' second runs (two
    # pairs in the one family), the traced runs
    assert set(df["kind"]) == {"warmup", "baseline", "aa", "traced"}
    env = json.loads((out / "environment.json").read_text())
    assert sorted(df.loc[df["kind"] == "aa", "cell"]) == sorted(env["aa_cells"]["all"]) == \
        ["sync-false", "sync-true"]
    assert len(df) == 7 and (df["ops_sec"] > 0).all() and (df["p99_us"] > 0).all()
    assert sorted(df["seq"]) == list(range(7))   # each run once, in the schedule's order
    assert df.loc[df["seq"] == 0, "kind"].tolist() == ["warmup"]
    for _, r in df.iterrows():  # parsed numbers equal what db_bench printed
        cell = out / r["cell"]
        log = (cell / ("traced/command.log" if r["kind"] == "traced"
                       else f"{r['kind']}0.log")).read_text()
        m = re.search(r"fillrandom\s+:\s+[\d.]+ micros/op (\d+) ops/sec", log)
        assert int(m.group(1)) == r["ops_sec"]
        assert r["operations"] == 800
    traced = df[df["kind"] == "traced"]
    assert (traced["traced_writes"] == 800).all()
    on = traced[traced["axis_sync"] == "true"].iloc[0]
    assert on["wal_synced"] == json.loads(
        (out / on["run_dir"] / "summary.json").read_text())["wal"]["sync"]["count"]
    assert (df["overhead_ratio"] > 0).all()
    assert (out / "report.html").exists()
    # resume: finished cells are not run again, and the machine as the
    # matrix began (where the disk's interrupts had landed) is kept, the
    # scenario's fields rewritten
    env["block_irqs"] = {"began": "as the first run saw them"}
    env["repeats"] = "stale"
    (out / "environment.json").write_text(json.dumps(env))
    p2 = subprocess.run(RUN_MATRIX + [str(SCENARIOS / "smoke.toml"),
                                      "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert p2.returncode == 0 and "7 of 7 runs done earlier" in p2.stderr
    again = json.loads((out / "environment.json").read_text())
    assert again["block_irqs"] == {"began": "as the first run saw them"}
    assert again["repeats"] != "stale"


PIN = """name = "pin"
command = "db_bench --benchmarks=fillrandom --num=300 --threads=2 --sync=true --db={db}"
repeats = 0
[axes]
pin = ["P", "E"]
"""


@pytest.mark.root
def test_pinning_refused_without_topology(tmp_path):
    f = tmp_path / "pin.toml"
    f.write_text(PIN)
    p = subprocess.run(RUN_MATRIX + [str(f), "-o", str(tmp_path / "m")],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert "needs P and E cores" in p.stderr and "--cpu-types" in p.stderr


@pytest.mark.root
def test_pinning_maps_to_declared_cpus(tmp_path):
    f = tmp_path / "pin.toml"
    f.write_text(PIN)
    out = tmp_path / "m"
    p = subprocess.run(RUN_MATRIX + [str(f), "-o", str(out), "--cpu-types", "P:0,E:1",
                                     "--no-report"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    for pin, cpu, ctype in (("P", 0, "P"), ("E", 1, "E")):
        s = pd.read_parquet(out / f"pin-{pin}" / "traced" / "sched.parquet")
        fg = s[(s["thread"] == "db_bench") & s["in_write"]]  # after taskset pinned it
        assert len(fg) and (fg["to_cpu"] == cpu).all() and (fg["to_type"] == ctype).all()
        w = pd.read_parquet(out / f"pin-{pin}" / "traced" / "writes.parquet")
        on = w["on_p_ns"].sum() if pin == "P" else w["on_e_ns"].sum()
        assert on > 0 and w["on_uniform_ns"].sum() == 0


SQLITE = """name = "sqlite_t"
command = "python3 -m runners.workloads.sqlite_tpcc --db {db}/t.db --template-dir {cache} --journal-mode {journal_mode} --scale 0.005 --transactions 80"
repeats = 1
mode = "full"
[axes]
journal_mode = ["delete", "wal"]
"""


@pytest.mark.root
def test_sqlite_matrix_delete_vs_wal(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(SQLITE)
    out = tmp_path / "m"
    p = subprocess.run(RUN_MATRIX + [str(sc), "-o", str(out)], capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    df = pd.read_parquet(out / "matrix.parquet")
    assert set(df["axis_journal_mode"]) == {"delete", "wal"}
    assert set(df["kind"]) == {"warmup", "baseline", "aa", "traced"}
    traced = df[df["kind"] == "traced"]
    assert set(traced["benchmark"]) >= {"new_order", "payment"}
    assert (traced["traced_adj_mean_us"] > 0).all()
    # the types with a mean to speak of: of 80 transactions the mix gives
    # the rare ones (delivery, order_status, stock_level) 3-4 each, whose
    # mean one lock wait makes (one read 3.56x in a fresh clone)
    common = traced[traced["benchmark"].isin(["new_order", "payment"])]
    assert common["adj_vs_baseline_mean"].between(0.3, 3).all(), common
    # counts per type: what the runner logged is what the trace labelled
    for _, r in traced.iterrows():
        assert r["count"] > 0
    # why WAL commits are cheaper than DELETE's (the seed's headline), as
    # SQLite's atomic-commit design has it: a DELETE commit syncs the journal
    # twice, the database and the directory; a WAL commit syncs the WAL once.
    # Which mean is lower is this VM's timing (one CI run read WAL 1,359 us,
    # DELETE 1,091 us; the next here 723 and 2,043), not a test's business.
    commits = traced[traced["benchmark"].isin(["new_order", "payment", "delivery"])]
    for mode, per_commit in (("delete", (3.5, 4.5)), ("wal", (0.9, 1.2))):
        io = pd.read_parquet(out / f"journal_mode-{mode}" / "traced" / "io.parquet")
        syncs = io[io["syscall"].isin(["fsync", "fdatasync"]) & io["in_write"]]
        n = commits[commits["axis_journal_mode"] == mode]["count"].sum()
        assert per_commit[0] * n <= len(syncs) <= per_commit[1] * n, (mode, len(syncs), n)
    assert "SQLite transactions by type" in (out / "report.html").read_text()


@pytest.mark.parametrize("args,message", [
    (["--scale", "2"], "--scale: must be in (0, 1]"),
    (["--journal-mode", "bogus"], "--journal-mode: invalid choice"),
    (["--clients", "0"], "--clients: must be at least 1"),
    (["--duration", "1", "--transactions", "5"], "not allowed with"),
])
def test_sqlite_tpcc_bad_input(args, message):
    p = subprocess.run(["python3", "-m", "runners.workloads.sqlite_tpcc", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr


TIERED = """name = "tiered_t"
command = "{root}/.output/zipf_writer --db={db} --alpha={alpha} --keys=5000 --writes=20000 --reads=2000 --preclude_last_level_data_seconds={preclude_last_level_data_seconds} --write_buffer_size=262144 --last_level_temperature=cold"
repeats = 1
mode = "writes"
[axes]
alpha = [1.2]
preclude_last_level_data_seconds = [0, 60]
"""


@pytest.mark.root
def test_tiered_zipf_matrix(tmp_path):
    sc = tmp_path / "t.toml"
    sc.write_text(TIERED)
    out = tmp_path / "m"
    p = subprocess.run(RUN_MATRIX + [str(sc), "-o", str(out), "--no-report"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    df = pd.read_parquet(out / "matrix.parquet")
    fill = df[df["benchmark"] == "fillzipf"]
    # warm-up, 2 baselines, 2 A/A (two pairs in the one family), 2 traced
    assert len(fill) == 7 and (fill["ops_sec"] > 0).all()
    assert (fill["operations"] == 20000).all()
    traced = fill[fill["kind"] == "traced"]
    assert (traced["traced_writes"] == 20000).all()       # one WriteImpl per Put
    assert fill["write_amplification"].between(1, 50).all()
    assert fill["last_level_stored_ratio"].between(0, 1).all()
    by = fill.set_index(["kind", "axis_preclude_last_level_data_seconds"])
    # nothing written in the last minute may reach the last level
    assert by.loc[("baseline", "60"), "last_level_stored_ratio"] == 0
    assert by.loc[("baseline", "0"), "last_level_stored_ratio"] > 0


def test_fixed_by_sizes_one_axis_value_apart(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(GOOD + "[fixed_by.sync.false]\nnum = 2000\n")
    sc = load(f)
    by = {c.values["sync"]: " ".join(sc.argv(c, "/d")) for c in sc.cells()}
    assert "--num=10 " in by[True] and "--num=2000 " in by[False]
