"""Windows where the work is: a run that loads and then runs gets rows
from the run.  The default's every-write start and the repay after it can
outlast a run's own phase; where threads no window has seen start writing,
the next window opens for them (collectors/collect_windows.c phase_due)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis import phases, windows
from tests.conftest import ROOT, run_trace

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

PG_BIN = Path("/usr/lib/postgresql/15/bin")
HAVE_PG = (PG_BIN / "postgres").exists() and shutil.which("pgbench") is not None


def test_a_load_then_a_run_has_rows_from_both(tmp_path):
    """db_bench fillseq then overwrite, unsynced, one thread each (each
    benchmark starts its own thread): the load and the run each have rows,
    and the table says which window held them."""
    p = run_trace(["-o", str(tmp_path / "o"), "--", "db_bench", f"--db={tmp_path}/db",
                   "--benchmarks=fillseq,overwrite", "--num=200000", "--threads=1",
                   "--sync=false"], timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    rows = pd.read_parquet(tmp_path / "o" / "writes.parquet", columns=["tid"])
    assert not s["budget"]["every_write"]
    assert rows["tid"].nunique() == 2, rows["tid"].value_counts()
    each = s["windows"]["by_window"]
    assert sum(w["rows"] for w in each) == len(rows)
    assert "rows by window (opened at, rows)" in p.stdout


@pytest.mark.skipif(not HAVE_PG, reason="no PostgreSQL 15 server or no pgbench")
def test_the_readme_postgres_line_has_rows_from_pgbench(tmp_path):
    """The README's PostgreSQL line in the default mode: initdb and
    pgbench -i first, then pgbench's transactions; rows from those (WAL
    syncs: the set-up syncs none inside a transaction), in a window the
    table names."""
    p = run_trace(["-o", str(tmp_path / "o"), "--", "python3", "-m",
                   "runners.workloads.postgres", "bench", "--", "-c", "4", "-t", "500"],
                  timeout=600, cwd=str(ROOT))
    assert p.returncode == 0, p.stderr[-2000:]
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["wal"]["sync"]["count"] > 0, s["wal"]
    each = s["windows"]["by_window"]
    assert any(w["rows"] for w in each[1:]), each   # not the set-up's window alone
    assert "could not attach" not in p.stderr
    # the headline's rows are pgbench's, not the set-up's (pgbench -i's
    # load is one long transaction): where the windows saw phases, most of
    # the phase the headline takes began inside pgbench's own clock (its
    # window can also hold the runner's own queries just before pgbench:
    # 36% of one fresh clone's 121 rows, 5% of another run's 395)
    # the self-check weighs the rows as the sample they are: all of them,
    # in the windows that held them (a census only where the budget
    # recorded every write), and says so where that sample cannot tell
    every = pd.read_parquet(tmp_path / "o" / "writes.parquet", columns=["start_ns"])
    smp = s["self_check"]["sample"]
    assert smp["rows"] == len(every), smp
    assert smp["census"] or smp["windows"] == sum(1 for w in each if w["rows"]), (smp, each)
    main = s.get("main_phase")
    if main and not main["self_check"]["sampled_ok"]:
        assert main["self_check"]["sample"]["rows"] == main["rows"], main["self_check"]
        assert "the rows are a sample (" in p.stdout, p.stdout[-3000:]
    h = s["headline"]
    if h["lens"] == "rows" and s.get("main_phase"):
        own = json.loads((tmp_path / "o" / "pgbench-result.json").read_text())["pgbench"]
        rows = pd.read_parquet(tmp_path / "o" / "writes.parquet", columns=["start_ns"])
        sched = windows.read_windows(tmp_path / "o")
        mine = phases.row_phases(sched, each, rows["start_ns"].to_numpy()) == \
            s["main_phase"]["phase"]
        inside = rows["start_ns"][mine].between(own["t0_ns"], own["t1_ns"])
        assert inside.mean() >= 0.5, (s["phases"], inside.mean())
        assert h["phase"]["rows"] == int(mine.sum())
