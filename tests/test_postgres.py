"""PostgreSQL as walscope's third engine, with the plain command (the
default mode), against the server's own counters: every pgbench
transaction is a row (pgbench's "number of transactions actually
processed"), and the WAL writes and syncs walscope saw between the
runner's two pg_stat_wal reads are the deltas pg_stat_wal counted.

The cluster is prepared untraced once per module (runners/workloads/postgres); each
test runs a copy.  A run is a few seconds."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT, TRACE, run_trace, wait_attached

PG_BIN = Path("/usr/lib/postgresql/15/bin")
HAVE_PG = (PG_BIN / "postgres").exists() and shutil.which("pgbench") is not None
NO_PG = f"no PostgreSQL 15 server ({PG_BIN}/postgres) or no pgbench: apt-get install postgresql-15"

pytestmark = [pytest.mark.root, pytest.mark.skipif(not HAVE_PG, reason=NO_PG)]

WRITES = {"write", "pwrite64", "writev", "pwritev", "pwritev2"}
SYNCS = {"fsync", "fdatasync", "sync_file_range"}


def runner(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runners.workloads.postgres", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def pg_port(cluster: Path) -> str:
    """The port the runner gave the cluster (postgresql.conf's last "port")."""
    return next(line.split("=")[1].strip() for line in
                (cluster / "postgresql.conf").read_text().splitlines()[::-1]
                if line.startswith("port"))


@pytest.fixture(scope="module")
def base():
    d = Path(tempfile.mkdtemp(prefix="walscope-pg-"))
    d.chmod(0o755)   # the cluster's owner (postgres) must enter it
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def template(base):
    t = base / "template"
    p = runner("prepare", str(t), "--scale", "1")
    assert p.returncode == 0, p.stderr
    return t


@pytest.fixture
def cluster(base, template, request):
    # the socket lives in the cluster's folder: its path must stay short
    d = Path(tempfile.mkdtemp(dir=base, prefix="c")) / "data"
    d.parent.chmod(0o755)
    subprocess.run(["cp", "-a", str(template), str(d)], check=True)
    return d


def traced_run(cluster: Path, out: Path, clients: int, per_client: int,
               pgoptions: str = "") -> tuple[dict, dict]:
    """The runner's run under the plain command: (summary, RESULT.json)."""
    result = cluster.parent / "result.json"
    # the workload's environment is walscope's clean one: settings go
    # through env(1), as a user would write them after sudo
    env = ["env", f"PGOPTIONS={pgoptions}"] if pgoptions else []
    p = run_trace(["-q", "-o", str(out), "--", *env, sys.executable, "-m",
                   "runners.workloads.postgres", "run", str(cluster), "-o", str(result),
                   "--", "-c", str(clients), "-t", str(per_client)], cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(result.read_text())
    assert r["pgbench"]["returncode"] == 0 and r["settle"]["settled"], r["settle"]
    return json.loads((out / "summary.json").read_text()), r


def wal_io_between(out: Path, r: dict) -> tuple[int, int]:
    """WAL-segment writes and syncs walscope recorded between the runner's
    two pg_stat_wal reads (io records start at syscall entry)."""
    io = pd.read_parquet(out / "io.parquet", columns=["ts_ns", "syscall", "kind"])
    lo, hi = r["before"]["t1_ns"], r["after"]["t0_ns"]
    w = io[(io["kind"] == "wal") & (io["ts_ns"] > lo) & (io["ts_ns"] < hi)]
    return int(w["syscall"].isin(WRITES).sum()), int(w["syscall"].isin(SYNCS).sum())


def check_partition(out: Path, n: int) -> pd.DataFrame:
    """n rows, each one's components adding up to its duration exactly."""
    from analysis import components
    from runfolder.records import Layout
    w = pd.read_parquet(out / "writes.parquet")
    assert len(w) == n and (w["engine"] == "postgres").all()
    comps = components.names("postgres", Layout.of(out))
    total = sum(w[f"{c}_ns"] for c in comps)
    assert (total == w["dur_ns"]).all()
    assert not w["truncated"].any() and not w["partial"].any()
    return w


def test_synchronous_commits_are_rows_and_wal_io_matches_pg_stat_wal(cluster, tmp_path):
    """-c 2 -t 23, synchronous_commit on: 46 rows; the commits that synced
    the WAL themselves are the leaders, the rest found their record
    flushed by another backend (group commit); WAL writes and syncs equal
    pg_stat_wal's deltas over the same span."""
    out = tmp_path / "run"
    s, r = traced_run(cluster, out, 2, 23)
    n = r["pgbench"]["processed"]
    assert n == 46 and not r["new_wal_segment"]
    assert s["mode"] == "budget" and s["budget"]["every_write"], s["budget"]
    assert s["engine"] == "postgres" and s["writes"]["count"] == n
    writes, syncs = wal_io_between(out, r)
    assert (writes, syncs) == (r["delta"]["wal"]["wal_write"], r["delta"]["wal"]["wal_sync"])
    w = check_partition(out, n)
    own_sync = w["wal_sync_io_ns"] > 0
    assert (w["leader"] == own_sync).all()
    assert s["groups"]["leaders"] == int(own_sync.sum()) >= 1
    # a commit waits for its flush inside the row: every row either synced
    # or waited for WALWriteLock while another did
    assert (own_sync | (w["wal_lock_wait_ns"] > 0)).all()
    # pgbench's TPC-B: 3 updates and an insert between BEGIN and END
    assert (w["wal_insert_ns"] > 0).all() and (w["executor_ns"] > 0).all()
    assert (w["client_wait_ns"] > 0).all()
    obj = next(o for o in s["objects"] if o.get("engine") == "postgres")
    assert obj["path"].endswith("/bin/postgres") and obj["version"].startswith("15.")


def test_asynchronous_commits_leave_the_syncs_to_the_wal_writer(cluster, tmp_path):
    """synchronous_commit off: still a row per transaction, but no commit
    waits for a flush (no row syncs or waits for WALWriteLock); the WAL
    writer's syncs, outside any row, are what pg_stat_wal counts."""
    out = tmp_path / "run"
    s, r = traced_run(cluster, out, 2, 23, "-c synchronous_commit=off")
    assert r["settings"]["synchronous_commit"] == "off"
    n = r["pgbench"]["processed"]
    assert n == 46 and s["writes"]["count"] == n
    w = check_partition(out, n)
    assert (w["wal_sync_io_ns"] == 0).all() and s["groups"]["leaders"] == 0
    writes, syncs = wal_io_between(out, r)
    assert (writes, syncs) == (r["delta"]["wal"]["wal_write"], r["delta"]["wal"]["wal_sync"])
    assert s["wal"]["sync"]["count"] == 0 < s["wal"]["sync"]["all_count"]


def test_running_postmaster_attached_with_p(cluster, tmp_path):
    """-p on a running postmaster: the backends pgbench's connections fork
    after the attach are traced, every transaction a row."""
    start = runner("start", str(cluster))
    assert start.returncode == 0, start.stderr
    pid = int(start.stdout.split()[-1])
    out = tmp_path / "run"
    tracer = subprocess.Popen([*TRACE, "-q", "-o", str(out), "-p", str(pid)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_attached(out, tracer)
        port = pg_port(cluster)
        bench = subprocess.run(["runuser", "-u", "postgres", "--", "pgbench", "-h", str(cluster),
                                "-p", port, "-n", "-c", "2", "-t", "23", "bench"],
                               capture_output=True, text=True, timeout=300)
        assert bench.returncode == 0, bench.stderr
        assert "actually processed: 46/46" in bench.stdout
        tracer.send_signal(signal.SIGINT)
        _, err = tracer.communicate(timeout=300)
    finally:
        if tracer.poll() is None:
            tracer.kill()
            tracer.wait()
        runner("stop", str(cluster))
    assert tracer.returncode == 0, err[-3000:]
    s = json.loads((out / "summary.json").read_text())
    assert s["writes"]["count"] == 46
    check_partition(out, 46)


def test_a_busy_cluster_in_the_default_mode_keeps_whole_rows(cluster, tmp_path):
    """Four clients with asynchronous commit: fast enough that the budget
    may turn to windows.  Whatever it chose, every row it kept is a whole
    transaction (begun inside a window, ended by its commit: none cut by
    a window's close, none truncated), and it says what it chose: every
    transaction, or fewer rows than pgbench processed and the windows."""
    out = tmp_path / "run"
    s, r = traced_run(cluster, out, 4, 1500, "-c synchronous_commit=off")
    n = r["pgbench"]["processed"]
    assert n == 6000
    rows = s["writes"]["count"]
    if s["budget"]["every_write"]:
        assert rows == n
    else:
        assert 0 < rows < n and s["windows"]["count"] >= 1, s["windows"]
        # the commit records are counted between windows too: the share
        # recorded is exact (pgbench's transactions, and nothing else wrote)
        assert s["budget"]["estimated_from"].startswith("counted")
        assert s["budget"]["estimated_total"] == n, s["budget"]
    check_partition(out, rows)
