"""runners/workloads/postgres: the PostgreSQL workload runner, against a real cluster.

The root-tier tests prepare one cluster per module (a few seconds) and run
copies of it; each run is about a second.  They wait for events (a process
appearing, the runner exiting), each bounded, never for a fixed time.
The parsing tests need nothing installed."""
from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from runners.workloads.postgres import cli, config, pgbench

ROOT = Path(__file__).resolve().parent.parent
PG_BIN = Path("/usr/lib/postgresql/15/bin")
HAVE_PG = (PG_BIN / "postgres").exists() and shutil.which("pgbench") is not None
NO_PG = (f"no PostgreSQL 15 server ({PG_BIN}/postgres) or no pgbench: "
         "apt-get install postgresql-15")
EVENT_TIMEOUT_S = 60.0

REPORT = """\
pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: simple
number of clients: 2
number of threads: 1
maximum number of tries: 1
number of transactions per client: 50
number of transactions actually processed: 100/100
number of failed transactions: 0 (0.000%)
latency average = 1.349 ms
initial connection time = 5.679 ms
tps = 1482.447818 (without initial connection time)
"""


def runner(*args: str, timeout: float = 300, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runners.workloads.postgres", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def processes_in(folder: Path) -> list[int]:
    """Live processes whose working folder is folder: every postgres
    process of that cluster (the postmaster chdirs to DIR, its children
    inherit it)."""
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if os.readlink(p / "cwd") == str(folder) and alive(int(p.name)):
                    out.append(int(p.name))
            except OSError:
                pass
    return out


def child_named(parent: int, comm: str) -> int | None:
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            stat = (p / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and name == comm:
            return int(p.name)
    return None


# --- no server needed ------------------------------------------------------

def test_pgbench_report_parsed():
    processed, expected, report = pgbench.parse(REPORT)
    assert (processed, expected) == (100, 100)
    assert report["failed"] == 0 and report["clients"] == 2
    assert report["latency_average_ms"] == 1.349 and report["tps"] == 1482.447818


def test_duration_run_has_no_expected_count():
    processed, expected, _ = pgbench.parse(
        "number of transactions actually processed: 1234\n")
    assert (processed, expected) == (1234, None)


def test_pgbench_args_follow_the_separator():
    assert cli.split_args(["run", "D", "--", "-c", "2", "--", "x"]) == \
        (["run", "D"], ["-c", "2", "--", "x"])
    assert cli.split_args(["stop", "D"]) == (["stop", "D"], [])


def test_setting_overrides_quoted_when_needed():
    assert config.parse_override("wal_level=replica") == ("wal_level", "replica")
    assert config.parse_override("shared_buffers=64MB") == ("shared_buffers", "64MB")
    assert config.parse_override("log_line_prefix=%m [%p] ") == \
        ("log_line_prefix", "'%m [%p]'")
    with pytest.raises(ValueError):
        config.parse_override("no_value")


def test_prepare_refuses_a_folder_in_use(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "mine").write_text("x")
    p = runner("prepare", str(tmp_path / "data"))
    assert p.returncode == 1
    assert p.stderr.strip() == f"runners.workloads.postgres: {tmp_path / 'data'}: exists and " \
        "is not an empty folder"
    assert (tmp_path / "data" / "mine").read_text() == "x"


# --- a real cluster --------------------------------------------------------

@pytest.fixture(scope="module")
def base():
    """A folder the cluster owner (postgres, when root) can enter: pytest's
    own are 0700 under /tmp/pytest-of-root."""
    d = Path(tempfile.mkdtemp(prefix="walscope-pgtest-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def template(base):
    if not HAVE_PG:
        pytest.skip(NO_PG)
    t = base / "template"
    p = runner("prepare", str(t), "--scale", "1")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"prepared {t}: PostgreSQL 15")
    assert not (t / "postmaster.pid").exists()
    return t


@pytest.fixture
def cluster(base, template, request):
    """A copy of the prepared cluster (owner kept), DIR of its own."""
    d = base / request.node.name / "data"
    d.parent.mkdir()
    subprocess.run(["cp", "-a", str(template), str(d)], check=True)
    yield d
    assert not processes_in(d), "a process of the cluster outlived its test"


def needs_pg(test):
    """The root tier (a live server), skipped where PostgreSQL is absent."""
    return pytest.mark.root(pytest.mark.skipif(not HAVE_PG, reason=NO_PG)(test))


@needs_pg
def test_counts_of_a_synchronous_run(cluster):
    """-c 2 -t 50, synchronous_commit on: pgbench's 100 transactions are
    100 commits on the server, each flushed before it returns (a commit
    may ride on another's flush: group commit); the WAL writer may add a
    flush of completed WAL pages of its own once per loop."""
    p = runner("run", str(cluster), "--", "-c", "2", "-t", "50")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("pgbench 100/100 ok, ") and "failed" not in p.stdout
    r = json.loads((cluster.parent / "pgbench-result.json").read_text())
    assert r["pgbench"]["processed"] == 100 and r["pgbench"]["expected"] == 100
    assert r["args"] == ["-c", "2", "-t", "50"]
    assert r["settings"]["synchronous_commit"] == "on"
    d = r["delta"]
    assert d["xact"]["xact_commit"] >= 100
    assert d["xact"]["xact_rollback"] == 0
    window_ns = r["after"]["t1_ns"] - r["before"]["t0_ns"]
    delay_ns = 200e6      # wal_writer_delay, as prepare sets it
    assert r["settings"]["wal_writer_delay"] == "200ms"
    walwriter_loops = math.ceil(window_ns / delay_ns) + 1
    assert 1 <= d["wal"]["wal_sync"] <= 100 + walwriter_loops, d["wal"]
    assert d["wal"]["wal_write"] >= 1
    assert d["wal"]["wal_records"] >= 100      # a commit record each, at least
    assert d["bgwriter"]["checkpoints_timed"] == d["bgwriter"]["checkpoints_req"] == 0
    assert r["settle"]["settled"] and r["settle"]["backends_gone"]
    # the windows: before < pgbench < after, on one clock
    b, a, pg = r["before"], r["after"], r["pgbench"]
    assert b["t0_ns"] < b["t1_ns"] < pg["t0_ns"] < pg["t1_ns"] < a["t0_ns"] < a["t1_ns"]
    assert not alive(r["postmaster_pid"])
    assert r["postmaster_exit"] == 0


@needs_pg
def test_asynchronous_commit_through_pgoptions(cluster):
    """--pgoptions reaches pgbench's sessions (trace_wal.py passes no
    PGOPTIONS on): with synchronous_commit off the commits do not each
    wait for a flush, so fewer syncs than commits; the WAL writer's last
    flushes, after pgbench exits, are counted (stats.settle)."""
    out = cluster.parent / "async.json"
    p = runner("run", str(cluster), "-o", str(out),
               "--pgoptions", "-c synchronous_commit=off", "--", "-c", "4", "-t", "50")
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    assert r["settings"]["synchronous_commit"] == "off"
    assert r["pgoptions"] == "-c synchronous_commit=off"
    assert r["pgbench"]["processed"] == 200
    d = r["delta"]
    assert d["xact"]["xact_commit"] >= 200
    assert 1 <= d["wal"]["wal_sync"] < 200, d["wal"]
    assert r["settle"]["settled"] and r["settle"]["reads"] >= 2


@needs_pg
def test_pgbench_logs_are_kept(cluster):
    """-l: pgbench's per-transaction log lands in the folder the result names."""
    out = cluster.parent / "r.json"
    p = runner("run", str(cluster), "-o", str(out), "--", "-c", "1", "-t", "23", "-l")
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    logs = [Path(f) for f in r["pgbench_logs"]]
    assert len(logs) == 1 and logs[0].parent == Path(r["pgbench"]["cwd"])
    assert len(logs[0].read_text().splitlines()) == 23


@needs_pg
def test_failed_pgbench_is_one_line_and_its_status(cluster):
    p = runner("run", str(cluster), "--", "--no-such-option")
    assert p.returncode == 1
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("runners.workloads.postgres: pgbench failed (exit 1): ")
    assert "--no-such-option" in lines[0]
    assert p.stdout == ""
    assert not (cluster / "postmaster.pid").exists()


@needs_pg
def test_sigterm_mid_run_leaves_no_postgres(cluster):
    """SIGTERM while pgbench runs: the runner stops pgbench and the
    postmaster it started (fast shutdown) and exits 143."""
    proc = subprocess.Popen([sys.executable, "-m", "runners.workloads.postgres", "run",
                             str(cluster), "--", "-c", "2", "-T", "60"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + EVENT_TIMEOUT_S
        bench = None
        while bench is None and proc.poll() is None and time.monotonic() < end:
            bench = child_named(proc.pid, "pgbench")
            time.sleep(0.01)
        assert bench is not None, proc.communicate(timeout=60)
        postmaster = int((cluster / "postmaster.pid").read_text().split()[0])
        assert alive(postmaster) and processes_in(cluster)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=EVENT_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "stopped by SIGTERM" in err
    assert not alive(postmaster) and not alive(bench)
    assert processes_in(cluster) == []
    assert not (cluster / "postmaster.pid").exists()


@needs_pg
def test_start_then_stop(cluster):
    """start leaves the postmaster running (for trace_wal.py -p) and
    prints its pid; stop ends it."""
    p = runner("start", str(cluster))
    assert p.returncode == 0, p.stderr
    pid = int(p.stdout.strip())
    try:
        assert alive(pid)
        assert runner("start", str(cluster)).returncode == 1     # one at a time
    finally:
        q = runner("stop", str(cluster))
    assert q.returncode == 0, q.stderr
    assert not alive(pid) and processes_in(cluster) == []
    assert runner("stop", str(cluster)).returncode == 1          # nothing to stop
