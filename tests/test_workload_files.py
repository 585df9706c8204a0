"""Workloads write only under their run folder or a temporary folder: the
SQLite TPC-C-like runner, started where a user starts it (the repository's
root), leaves nothing there; and its clients deal TPC-C's mix exactly."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tpcc(cwd: Path, tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runners.workloads.sqlite_tpcc",
                           "--transactions", "20", "--scale", "0.005", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp), **env})


def test_tpcc_leaves_nothing_in_the_current_folder(tmp_path):
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    p = tpcc(cwd, tmp)
    assert p.returncode == 0, p.stderr
    assert list(cwd.iterdir()) == []
    # the results are kept in the temporary folder; the database is not
    results = Path(p.stderr.strip().splitlines()[-1].removeprefix("results: "))
    assert results.exists() and results.is_relative_to(tmp)
    assert not list(tmp.rglob("tpcc.db")) and not list(tmp.rglob("tpcc.db-*wal"))
    # the loaded template is kept for the next run, in this user's folder
    assert [t.parent.name for t in tmp.rglob("*.template")] == [f"walscope-tpcc-{os.getuid()}"]


def test_tpcc_under_the_tracer_writes_into_the_run_folder(tmp_path):
    run, tmp = tmp_path / "run", tmp_path / "tmp"
    run.mkdir()
    tmp.mkdir()
    p = tpcc(ROOT, tmp, WALSCOPE_RUN_DIR=str(run))
    assert p.returncode == 0, p.stderr
    assert sorted(f.name for f in run.iterdir()) == ["txlog.csv", "txlog.json"]
    assert not [f for f in ROOT.iterdir() if f.name.startswith("tpcc")]
    # only the template cache is left in the temporary folder
    assert [f.name for f in tmp.iterdir()] == [f"walscope-tpcc-{os.getuid()}"]


def test_tpcc_clients_deal_the_mix_exactly_whatever_their_seeds():
    """Each client deals its transaction types from a shuffled deck of a
    hundred cards: every hundred hold TPC-C's mix exactly, so a run's tpmC
    does not move with which client SQLite's busy handler lets win (drawn
    independently, client 0's fixed seed gave 45.6% New-Orders and client
    1's 44.1%)."""
    import random

    from runners.workloads.sqlite_tpcc import schema, txns

    sc = schema.Scale(1, 0.02)
    for idx in range(4):
        keys = txns.Keys.new(random.Random(1), sc)
        keys.rng = random.Random(1000 + idx)
        dealt = [keys.pick_type() for _ in range(300)]
        for hundred in (dealt[:100], dealt[100:200], dealt[200:]):
            assert {t: hundred.count(t) for t, _ in txns.MIX} == dict(txns.MIX)
        assert dealt[:100] != dealt[100:200]            # shuffled afresh
