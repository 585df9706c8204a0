"""SQLite: transactions traced for real, checked against independent counts."""
from __future__ import annotations

import pytest
import json
from pathlib import Path

import pandas as pd

from tests import schema
from tests.conftest import GOLDEN, ROOT, BpftraceTotals, ensure_tracefs, run_trace

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

N = 40
WORKLOAD = ["python3", str(ROOT / "tests" / "sqlite_workload.py")]


def trace_sqlite(tmp: Path, *args: str, bt: bool = False):
    """(summary, writes, io, bpftrace counts or {}) of one traced run."""
    counts: dict[str, int] = {}
    totals = None
    if bt:
        ensure_tracefs()
        script = "\n".join(l for l in (ROOT / "probes" / "sqlite_commit_io.bt")
                           .read_text().splitlines() if not l.startswith("#!"))
        totals = BpftraceTotals(script, ("syncs", "sync_ns", "unlinks", "ftruncates",
                                         "writes"), tmp / "bt.out", args=("python3",))
    try:
        p = run_trace(["-q", "--mode", "full", "-o", str(tmp / "o"), "--", *WORKLOAD,
                       str(tmp / "t.db"), *args], timeout=300)
        if totals is not None:
            counts = totals.totals()
    finally:
        if totals is not None:
            totals.stop()
    assert p.returncode == 0, p.stderr[-2000:]
    out_dir = tmp / "o"
    return (json.loads((out_dir / "summary.json").read_text()),
            pd.read_parquet(out_dir / "writes.parquet"),
            pd.read_parquet(out_dir / "io.parquet"), counts)


def components_sum(w: pd.DataFrame) -> None:
    comps = GOLDEN.components("sqlite")
    assert (w[[f"{c}_ns" for c in comps]].sum(axis=1) == w["dur_ns"]).all()


def test_delete_full_commit_syscalls(tmp_path):
    s, w, io, bt = trace_sqlite(tmp_path, "delete", "full", str(N), bt=True)
    assert s["engine"] == "sqlite"
    sq = s["sqlite"]
    assert sq["explicit"] == N and sq["rollbacks"] == 0
    components_sum(w)
    # the whole run, against bpftrace counting the same process
    syncs = io[io["syscall"].isin(["fsync", "fdatasync"])]
    assert len(syncs) == bt["syncs"]
    assert len(io[io["syscall"].isin(["unlink", "unlinkat"])]) == bt["unlinks"]
    # DELETE mode: every commit deletes its journal, and syncs it before
    # the database is written and the database after
    # (the autocommit transactions that wrote: the CREATE TABLE)
    assert sq["autocommit"] == 1
    assert sq["journal_unlink"]["count"] == N + sq["autocommit"]
    assert sq["journal_sync"]["count"] >= N and sq["db_sync"]["count"] >= N
    txn = w[w["explicit"]]
    assert (txn["journal_lifecycle_ns"] > 0).all()
    assert (txn["journal_sync_io_ns"] > 0).all() and (txn["db_sync_io_ns"] > 0).all()
    assert (txn["statements"] == 3).all()       # BEGIN, INSERT, COMMIT
    # sync time inside transactions is what bpftrace timed, less set-up's
    assert s["components_raw"]["journal_sync_io"]["sum_ns"] + \
        s["components_raw"]["db_sync_io"]["sum_ns"] + \
        s["components_raw"]["dir_sync_io"]["sum_ns"] <= bt["sync_ns"] * 1.02


def test_wal_normal_has_no_commit_sync(tmp_path):
    s, w, io, _ = trace_sqlite(tmp_path, "wal", "normal", str(N), "--checkpoint")
    sq = s["sqlite"]
    txn = w[w["explicit"]]
    assert len(txn) == N
    assert (txn["journal_sync_io_ns"] == 0).all() and (txn["db_sync_io_ns"] == 0).all()
    assert (txn["journal_write_io_ns"] > 0).all()   # frames appended to -wal
    assert sq["journal_unlink"]["count"] == 0
    # the forced checkpoint: one autocommit statement, its I/O is checkpoint
    cp = w[w["checkpoint_ns"] > 0]
    assert len(cp) == 1 and not cp["explicit"].iloc[0]
    assert cp["checkpoint_ns"].iloc[0] > cp["dur_ns"].iloc[0] * 0.5
    assert sq["checkpoints"] == 1
    components_sum(w)


def test_untraced_syscalls_are_counted_and_compensated(tmp_path):
    """K getppid() calls inside each INSERT: walscope traces no getppid, yet
    each passes its syscall programs, so each is counted in sql_exec and
    compensated by the calibrated slow-path cost."""
    k = 200
    s, w, _, _ = trace_sqlite(tmp_path, "wal", "normal", str(N), "--getppid", str(k))
    txn = w[w["explicit"]]
    assert len(txn) == N
    # a few more are Python's own (allocation, locks): not many
    assert (txn["untraced_syscalls"] >= k).all(), txn["untraced_syscalls"].describe()
    assert txn["untraced_syscalls"].median() <= k + 10
    # each is charged at least the warm cost (more for a cold share)
    ign = s["calibration"]["warm"]["sys_ign_ns"]
    assert ign > 0
    assert (txn["sql_exec_overhead_ns"] >= k * ign).all()


def test_tpcc_labels_and_latency(tmp_path):
    p = run_trace(["-q", "--mode", "full", "-o", str(tmp_path / "o"), "--", "python3", "-m",
                   "runners.workloads.sqlite_tpcc", "--db", str(tmp_path / "tpcc.db"),
                   "--scale", "0.005", "--transactions", "150"],
                  timeout=300, cwd=str(ROOT))
    assert p.returncode == 0, p.stderr[-2000:]
    out = tmp_path / "o"
    s = json.loads((out / "summary.json").read_text())
    w = pd.read_parquet(out / "writes.parquet")
    log = pd.read_csv(out / "txlog.csv")
    assert len(log) == 150
    schema.check(out, "sqlite")   # the columns and keys users rely on
    labelled = w[w["txn_type"] != ""]
    assert len(labelled) == 150      # each logged transaction found its trace
    assert set(s["by_type"]) == set(log["type"])
    for typ, v in s["by_type"].items():
        assert v["count"] == int((log["type"] == typ).sum())
        # the traced span sits inside the workload's own timing of it
        assert v["mean_ns"] <= v["app_mean_ns"]
        if typ in ("new_order", "payment", "delivery"):  # sync-bound, ms scale
            assert v["mean_ns"] >= 0.9 * v["app_mean_ns"], (typ, v)
    assert s["sqlite"]["rollbacks"] == int(log["rolled_back"].sum())
    components_sum(w)
    html = (out / "report.html").read_text()
    assert "SQLite transactions by type" in html
    assert (out / "phase.folded").read_text().count("new_order") > 3


FD_REUSE = """
import os, sys
d = sys.argv[1]
a = os.open(os.path.join(d, "t.db"), os.O_CREAT | os.O_RDWR)       # a database file
os.write(a, b"x" * 10)
w = os.open(os.path.join(d, "t.db-wal"), os.O_CREAT | os.O_RDWR)   # SQLite's WAL
os.dup2(w, a)    # fd a now names the WAL, and no close of it was seen
for _ in range(5):
    os.write(a, b"y" * 100)
    os.fsync(a)
"""


@pytest.mark.root
def test_a_reused_fd_takes_its_new_files_kind(tmp_path):
    """An fd that comes to name another file where no close was seen
    (dup2 here; a close between windows in the default mode): its I/O is
    the new file's, kind and path (the kind was the old file's: a WAL
    labelled as the database in study 004)."""
    ensure_tracefs()
    (tmp_path / "w.py").write_text(FD_REUSE)
    p = run_trace(["-q", "--allow-empty", "-o", str(tmp_path / "o"), "--",
                   "python3", str(tmp_path / "w.py"), str(tmp_path)])
    assert p.returncode == 0, p.stderr
    io = pd.read_parquet(tmp_path / "o" / "io.parquet")
    mine = io[io["path"].str.startswith(str(tmp_path / "t.db"))]
    first = mine[(mine["syscall"] == "write") & (mine["bytes"] == 10)]
    later = mine[(mine["syscall"].isin(["write", "fsync"])) & (mine["bytes"] != 10)]
    assert len(first) == 1 and first["kind"].iloc[0] == "db"
    assert len(later) == 10 and (later["kind"] == "wal").all(), later
    assert (later["path"] == str(tmp_path / "t.db-wal")).all()
    assert later["ino"].nunique() == 1 and later["ino"].iloc[0] != first["ino"].iloc[0]


LOCKED_OUT = """
import os, sqlite3, sys, time
db = sys.argv[1]
con = sqlite3.connect(db, isolation_level=None)
con.execute("CREATE TABLE IF NOT EXISTS t(x)")
r, w = os.pipe()
if os.fork() == 0:                 # the holder: the write lock for 1 s
    h = sqlite3.connect(db, isolation_level=None)
    h.execute("BEGIN IMMEDIATE")
    h.execute("INSERT INTO t VALUES (1)")
    os.write(w, b"x")
    time.sleep(1.0)
    h.execute("COMMIT")
    os._exit(0)
os.read(r, 1)
con.execute("PRAGMA busy_timeout = 300")
try:
    con.execute("BEGIN IMMEDIATE")  # fails: the holder keeps the lock past 300 ms
    sys.exit("BEGIN did not fail")
except sqlite3.OperationalError as e:
    assert "locked" in str(e), e
os.wait()
con.execute("BEGIN IMMEDIATE")      # then a transaction that commits
con.execute("INSERT INTO t VALUES (2)")
con.execute("COMMIT")
"""


@pytest.mark.root
def test_a_begin_that_found_the_database_locked_is_a_row_of_its_own(tmp_path):
    """BEGIN IMMEDIATE that gives up after the busy timeout starts no
    transaction and no COMMIT or ROLLBACK follows it: its row ends there
    (flagged rollback: nothing committed), and the next transaction is a
    row of its own, not merged into one spanning both."""
    ensure_tracefs()
    (tmp_path / "w.py").write_text(LOCKED_OUT)
    p = run_trace(["-q", "-o", str(tmp_path / "o"), "--",
                   "python3", str(tmp_path / "w.py"), str(tmp_path / "t.db")])
    assert p.returncode == 0, p.stderr
    w = pd.read_parquet(tmp_path / "o" / "writes.parquet").sort_values("start_ns")
    waiter = w[w["pid"] == w["pid"].min()]         # the parent: forked first, lower pid
    failed = waiter[waiter["rollback"]]
    assert len(failed) == 1, waiter
    f = failed.iloc[0]
    assert 0.25e9 < f["dur_ns"] < 0.9e9 and f["lock_wait_ns"] > 0.2e9, f
    after = waiter[waiter["start_ns"] > f["start_ns"]]
    assert len(after) >= 1 and not after["rollback"].any()
    assert (after["dur_ns"] < 0.2e9).all(), after[["dur_ns", "lock_wait_ns"]]
