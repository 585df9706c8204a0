"""walscope serve (issue 47): a running server's write latency at /metrics.

The exposition is read back with the Prometheus client library's own
parser (an outside reading of the format), and the end-to-end test serves
a SQLite "server" (a process that commits when told to) attached with -p,
scraping /metrics over HTTP while it commits: the rows the endpoint
counts are the server's own commits."""
from __future__ import annotations

import bisect
import grp
import json
import math
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_families
from prometheus_client.parser import text_string_to_metric_families

from runners.command import serve
from tests import test_postgres as PG
from tests.conftest import ROOT
from runfolder.records import Layout, read_records as Records
from tests.mariadb import MYROCKS_COUNTERS, server as mariadb_server
from tests.test_postgres import base, cluster, template  # noqa: F401 (fixtures)
from viz import openmetrics as OM


def families(text: str) -> dict[str, object]:
    return {f.name: f for f in text_string_to_metric_families(text)}


def rows(durs_us: list[float]) -> pd.DataFrame:
    d = np.array(durs_us) * 1e3
    return pd.DataFrame({"dur_adj_ns": d, "wal_sync_io_adj_ns": d * 0.75,
                         "other_adj_ns": d * 0.25})


def test_the_exposition_reads_back_as_prometheus_reads_it():
    m = OM.Metrics()
    m.add_rows("rocksdb", 'db"bench', rows([3, 30, 300, 3000]), ["wal_sync_io", "other"])
    m.add_rows("rocksdb", 'db"bench', rows([40]), ["wal_sync_io", "other"])
    m.add_counter("wal_syncs_recorded_total", (("engine", "rocksdb"), ("process", 'db"bench')), 7)
    m.set_gauge("budget_ratio", (), 0.02)
    fam = families(m.exposition())
    h = fam["walscope_write_duration_seconds"]
    assert h.type == "histogram"
    got = {s.name.rsplit("_", 1)[1] if not s.name.endswith("_bucket") else s.labels["le"]: s.value
           for s in h.samples}
    assert got["count"] == 5 and math.isclose(got["sum"], 3373e-6)
    assert got["+Inf"] == 5 and got["1e-05"] == 1 and got["5e-05"] == 3   # 3, 30, 40 us
    assert all(s.labels["process"] == 'db"bench' for s in h.samples)
    comp = fam["walscope_write_component_duration_seconds"]
    counts = {s.labels["component"]: s.value for s in comp.samples if s.name.endswith("_count")}
    assert counts == {"wal_sync_io": 5, "other": 5}
    # a sum over components is the writes' own sum: no write counted twice
    sums = sum(s.value for s in comp.samples if s.name.endswith("_sum"))
    assert math.isclose(sums, got["sum"])
    assert [s.value for s in fam["walscope_writes_recorded"].samples] == [5]
    assert [s.value for s in fam["walscope_wal_syncs_recorded"].samples] == [7]
    assert [s.value for s in fam["walscope_budget_ratio"].samples] == [0.02]


def test_openmetrics_carries_each_buckets_last_retained_write():
    """Asked for OpenMetrics (Prometheus' Accept header), the exposition
    parses as OpenMetrics strictly does, counters named as its families
    are, and a bucket's exemplar is the last retained write that fell in
    it; the text format has none."""
    m = OM.Metrics()
    m.add_rows("postgres", "postgres", rows([300, 3000, 3500, 40000]), ["wal_sync_io", "other"])
    m.set_gauge("tracing", (), 1)
    m.add_exemplars("postgres", "postgres", [
        OM.Exemplar("slow-20261129T031200Z/41/1000", 3000e-6, 1.7e9),
        OM.Exemplar("slow-20261129T031200Z/42/2000", 3500e-6, 1.7e9 + 1),
        OM.Exemplar("slow-20261129T031200Z-2/43/3000", 40000e-6, 1.7e9 + 2)])
    assert OM.wants_openmetrics(
        "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
    assert not OM.wants_openmetrics("text/plain") and not OM.wants_openmetrics(None)
    text = m.exposition(openmetrics=True)
    assert text.endswith("# EOF\n")
    fam = {f.name: f for f in om_families(text)}
    assert [s.value for s in fam["walscope_writes_recorded"].samples] == [4]
    ex = {s.labels["le"]: (s.exemplar.labels["write"], s.exemplar.value)
          for s in fam["walscope_write_duration_seconds"].samples if s.exemplar}
    assert ex == {"0.005": ("slow-20261129T031200Z/42/2000", 3500e-6),
                  "0.05": ("slow-20261129T031200Z-2/43/3000", 40000e-6)}
    assert " # {" not in m.exposition() and "# EOF" not in m.exposition()
    # a folder the cap removed: its exemplars go, the others stay
    m.forget_exemplars(["slow-20261129T031200Z-2"])
    fam = {f.name: f for f in om_families(m.exposition(openmetrics=True))}
    assert [s.labels["le"] for s in fam["walscope_write_duration_seconds"].samples
            if s.exemplar] == ["0.005"]


def test_the_quantile_is_prometheus_histogram_quantile():
    buckets = [(1.0, 0), (2.0, 50), (4.0, 100), (math.inf, 100)]
    assert OM.quantile(buckets, 0.5) == 2.0
    assert OM.quantile(buckets, 0.75) == 3.0
    assert math.isnan(OM.quantile([(1.0, 0), (math.inf, 0)], 0.5))


def test_bad_input_is_one_line():
    for bad in ("9464", "host:", "host:99999", "x:y"):
        with pytest.raises(serve.ServeError):
            serve.parse_listen(bad)
    assert serve.parse_listen("127.0.0.1:9464") == ("127.0.0.1", 9464)
    assert serve.parse_listen(":9464") == ("127.0.0.1", 9464)


# a "server": opens its database, then commits COMMITS transactions each
# time it is told to (SIGUSR1), and says when it has (a line on stdout)
SERVER = r'''
import signal, sqlite3, sys, threading
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT)")
go = threading.Event()
signal.signal(signal.SIGUSR1, lambda *a: go.set())
print("ready", flush=True)
while True:
    go.wait(); go.clear()
    for i in range(int(sys.argv[2])):
        db.execute("INSERT INTO t(v) VALUES (?)", (f"row {i}",))
    print("committed", flush=True)
'''
COMMITS = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port: int) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            return r.read().decode()
    except OSError:
        return None


def recorded(text: str | None) -> float:
    if not text:
        return -1
    fam = families(text)
    f = fam.get("walscope_writes_recorded")
    return sum(s.value for s in f.samples) if f else 0


@pytest.mark.root
def test_serve_counts_a_running_servers_commits(tmp_path):
    """serve -p on a SQLite server: /metrics answers while it runs, and
    once the server has committed, the rows it counts are its commits,
    in histograms that hold each once; SIGTERM finishes the run folder."""
    srv = subprocess.Popen([sys.executable, "-c", SERVER, str(tmp_path / "t.db"),
                            str(COMMITS)], stdout=subprocess.PIPE, text=True)
    port = free_port()
    out = tmp_path / "o"
    walscope = None
    try:
        assert srv.stdout.readline().strip() == "ready"
        walscope = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "walscope"), "serve", "-p", str(srv.pid), "--listen", f"127.0.0.1:{port}", "-o", str(out),
             "--interval", "0.2", "--keep-all"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
        # the endpoint answers; the server is traced once serve says so
        said = []
        while not said or "traced: metrics at http://127.0.0.1:" not in said[-1]:
            said.append(walscope.stderr.readline())
            assert said[-1], "".join(said)
        assert families(scrape(port))["walscope_tracing"].samples[0].value == 1
        assert recorded(scrape(port)) == 0      # nothing committed yet
        os.kill(srv.pid, signal.SIGUSR1)
        assert srv.stdout.readline().strip() == "committed"
        deadline = time.monotonic() + 60       # the feeder reads every 0.2 s
        # the rows and their syncs read (the collector flushes its files one
        # after the other: a read may find the rows before their syncs)
        while (recorded(text := scrape(port)) < COMMITS or
               total(text, "walscope_wal_syncs_recorded") < COMMITS) and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        fam = families(text)
        assert recorded(text) == COMMITS, text
        h = [s for s in fam["walscope_write_duration_seconds"].samples
             if s.name.endswith("_count")]
        assert [(s.labels["engine"], s.value) for s in h] == [("sqlite", COMMITS)]
        comps = [s for s in fam["walscope_write_component_duration_seconds"].samples
                 if s.name.endswith("_count")]
        assert comps and all(s.value == COMMITS for s in comps)
        assert sum(s.value for s in fam["walscope_wal_syncs_recorded"].samples) >= COMMITS
        # no probe counts SQLite's commits: the estimate, every write recorded
        # (set after the rows in each read: the next one has it)
        def estimated() -> list[tuple[str, float]]:
            f = families(scrape(port)).get("walscope_writes_estimated")
            return [(x.labels["engine"], x.value) for x in f.samples] if f else []
        deadline = time.monotonic() + 30
        while estimated() != [("sqlite", COMMITS)] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert estimated() == [("sqlite", COMMITS)]
        assert scrape(port) and urllib.request.urlopen(
            f"http://127.0.0.1:{port}/metrics").status == 200
        walscope.send_signal(signal.SIGTERM)
        rc = walscope.wait(timeout=120)
        assert rc == 0, walscope.stderr.read()[-3000:]
        w = pd.read_parquet(out / "writes.parquet")
        assert len(w) == COMMITS
        # the endpoint's sum is the run folder's, compensated the same way
        served = sum(s.value for s in fam["walscope_write_duration_seconds"].samples
                     if s.name.endswith("_sum"))
        assert math.isclose(served, w["dur_adj_ns"].sum() / 1e9, rel_tol=0.02), \
            (served, w["dur_adj_ns"].sum() / 1e9)
    finally:
        srv.kill()
        if walscope is not None and walscope.poll() is None:
            walscope.kill()


def total(text: str | None, family: str) -> float:
    if not text:
        return -1
    f = families(text).get(family)
    return sum(s.value for s in f.samples) if f else 0


def serving(pid: int, port: int, out: Path, *args: str) -> subprocess.Popen:
    """walscope serve -p pid, once it says the processes are traced;
    every record kept in one run folder unless args say otherwise."""
    p = subprocess.Popen([str(ROOT / ".venv" / "bin" / "walscope"), "serve", "-p", str(pid),
                          "--listen", f"127.0.0.1:{port}", "-o", str(out), "--interval", "0.2",
                          *(args or ("--keep-all",))],
                         cwd=ROOT, stderr=subprocess.PIPE, text=True)
    said = []
    while not said or "traced: metrics at http://127.0.0.1:" not in said[-1]:
        said.append(p.stderr.readline())
        assert said[-1], "".join(said)
    return p


def wal_syncs(data_dir: Path) -> int:
    """pg_stat_wal's wal_sync now."""
    q = subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-h", str(data_dir), "-p",
                        PG.pg_port(data_dir), "-At", "-c", "select wal_sync from pg_stat_wal",
                        "bench"], capture_output=True, text=True, timeout=60)
    assert q.returncode == 0, q.stderr
    return int(q.stdout.strip())


def log_syncs_now(port: int, out: Path) -> float:
    """walscope_wal_syncs_total with every sync made before this call in
    it: once the collector has written its counters after this moment
    (counters.json, each second) and the endpoint serves at least that.
    out: the collector's folder (a retaining serve's spool)."""
    names = Layout.of(out).counter_names()
    t0 = time.monotonic_ns()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            live = json.loads((out / "counters.json").read_text())
        except (OSError, ValueError):
            live = {}
        if live.get("ts_ns", 0) > t0:
            want = dict(zip(names, live["counters"])).get("wal_sync_marks", 0)
            if (got := total(scrape(port), "walscope_wal_syncs")) >= want:
                return got
        time.sleep(0.1)
    raise AssertionError("the collector's counters never came after the call")


def settled(data_dir: Path, port: int, out: Path) -> tuple[int, float]:
    """pg_stat_wal's wal_sync and walscope_wal_syncs_total, once two
    reads agree, each at least a second apart (the collector's counters
    and a WAL writer's loop; its report comes after each loop:
    runners/workloads/postgres/stats.py)."""
    last = None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        now = (wal_syncs(data_dir), log_syncs_now(port, out))
        if now == last:
            return now
        last = now
    raise AssertionError(f"pg_stat_wal and walscope never settled: {last}")


@pytest.mark.root
@pytest.mark.skipif(not PG.HAVE_PG, reason=PG.NO_PG)
def test_serve_counts_every_pgbench_transaction(cluster, tmp_path):
    """serve -p on a running postmaster: walscope_writes_total, from
    PostgreSQL's commit probe (attached windows or not), is pgbench's
    processed transactions; the rows recorded are no more than it;
    walscope_wal_syncs_total, from its WAL sync probe, moves as
    pg_stat_wal's wal_sync does (the server's own syncs included); the
    rows' self-check verdict is served beside the histograms."""
    start = PG.runner("start", str(cluster))
    assert start.returncode == 0, start.stderr
    pid = int(start.stdout.split()[-1])
    port, out, walscope = free_port(), tmp_path / "o", None
    try:
        walscope = serving(pid, port, out, "--max-disk", "1G")   # retaining, as by default
        pg_port = PG.pg_port(cluster)
        syncs0, counted0 = settled(cluster, port, out / "spool")
        bench = subprocess.run(["runuser", "-u", "postgres", "--", "pgbench", "-h", str(cluster),
                                "-p", pg_port, "-n", "-c", "2", "-t", "100", "bench"],
                               capture_output=True, text=True, timeout=300)
        assert bench.returncode == 0 and "actually processed: 200/200" in bench.stdout, \
            bench.stdout + bench.stderr
        deadline = time.monotonic() + 60      # the collector writes its counters each second
        while total(text := scrape(port), "walscope_writes") < 200 and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        assert total(text, "walscope_writes") == 200, text
        assert 0 < recorded(text) <= 200
        assert total(text, "walscope_events_lost") == 0
        # the default retention's p99.9 has no threshold under 1,000 rows: read on
        assert families(text)["walscope_feeder_ok"].samples[0].value == 1
        fam = families(text)
        trusted = fam["walscope_rows_trusted"].samples
        assert {s.labels["engine"] for s in trusted} == {"postgres"}, [s.labels for s in trusted]
        assert trusted[0].value in (0, 1) and "walscope_self_check_risk" in fam
        # the ratio is set after the rows are read: one exposition with both
        deadline = time.monotonic() + 30
        while True:
            fam = families(text := scrape(port))
            ratio = fam["walscope_recorded_ratio"].samples[0].value
            if ratio == pytest.approx(recorded(text) / 200) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert ratio == pytest.approx(recorded(text) / 200)
        # the backends' syncs flushed their counters at exit
        deadline = time.monotonic() + 60
        while True:
            syncs1, counted1 = settled(cluster, port, out / "spool")
            if counted1 - counted0 == syncs1 - syncs0 or time.monotonic() > deadline:
                break
        assert syncs1 - syncs0 >= 1
        assert counted1 - counted0 == syncs1 - syncs0, (syncs0, syncs1, counted0, counted1)
        walscope.send_signal(signal.SIGTERM)
        assert walscope.wait(timeout=120) == 0, walscope.stderr.read()[-3000:]
    finally:
        if walscope is not None and walscope.poll() is None:
            walscope.kill()
        PG.runner("stop", str(cluster))


def test_a_feeder_error_is_said_once_and_shown(capsys):
    """A chunk the feeder cannot read stops the metrics, says so once and
    shows it (walscope_feeder_ok 0), and raises nothing: the run folder is
    still finished."""
    f = serve.Feeder.__new__(serve.Feeder)
    f.metrics, f.failed = OM.Metrics(), False

    def broken() -> None:
        raise KeyError("engine 9")
    f.read = broken
    f._read_or_say()
    f._read_or_say()
    assert capsys.readouterr().err.count("walscope serve: reading the records: KeyError") == 1
    assert "walscope_feeder_ok 0" in f.metrics.exposition()
    f.read = lambda: None
    f._read_or_say()
    assert "walscope_feeder_ok 1" in f.metrics.exposition()


def test_the_feeder_forgets_ended_processes_and_keeps_the_living():
    """The feeder's per-process maps hold the processes alive lately:
    one ended FORGET_S ago is dropped, one still running is kept."""
    ended = subprocess.Popen(["true"])
    ended.wait()
    f = serve.Feeder.__new__(serve.Feeder)
    old = time.monotonic() - serve.FORGET_S
    f.last_seen = {ended.pid: old, os.getpid(): old}
    f.names = {ended.pid: "true", os.getpid(): "pytest"}
    f.engine_of_pid = {ended.pid: "sqlite", os.getpid(): "sqlite"}
    f._forget_ended()
    assert f.names == {os.getpid(): "pytest"} and list(f.engine_of_pid) == [os.getpid()]
    assert f.last_seen[os.getpid()] > old      # asked again later
    f.last_seen[ended.pid] = time.monotonic()  # ended, but not long since: kept
    f.names[ended.pid] = "true"
    f._forget_ended()
    assert ended.pid in f.names


PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
NO_PROMETHEUS = "no prometheus/promtool: apt-get install prometheus (./setup.sh --test does)"
DASHBOARD = ROOT / "deploy" / "grafana" / "walscope.json"
# what Grafana puts in the dashboard's queries before Prometheus sees them
GRAFANA_VARS = {"$__rate_interval": "1m", "$engine": ".*", "$process": ".*"}


class Prometheus:
    """Debian's Prometheus server, scraping one target every second, with
    its data in a folder of its own; queried over its HTTP API."""

    def __init__(self, folder: Path, target: str, *flags: str) -> None:
        folder.mkdir()
        (folder / "prometheus.yml").write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: walscope\n    static_configs:\n"
            f"      - targets: ['{target}']\n")
        self.port = free_port()
        self.log = (folder / "prometheus.log").open("w")
        self.proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={folder / 'prometheus.yml'}",
             f"--storage.tsdb.path={folder / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", *flags],
            stdout=self.log, stderr=subprocess.STDOUT)

    def api(self, path: str, **params: str) -> dict:
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.loads(r.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict]:
        return self.api("query", query=expr)["result"]

    def value(self, expr: str) -> float | None:
        got = self.query(expr)
        return float(got[0]["value"][1]) if got else None

    def until(self, expr: str, want: Callable[[float | None], bool], what: str) -> float:
        """expr's value once want(value) holds (Prometheus scrapes each
        second; the deadline only bounds a failure)."""
        deadline = time.monotonic() + 90
        while True:
            try:
                v = self.value(expr)
            except OSError:
                v = None            # not listening yet
            if want(v):
                return v
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: {expr} = {v}")
            time.sleep(0.25)

    def until_some(self, expr: str, what: str) -> list[dict]:
        """expr's result once it has one."""
        deadline = time.monotonic() + 90
        while not (got := self.query(expr)):
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: {expr}")
            time.sleep(0.25)
        return got

    def stop(self) -> None:
        """Stopped, whatever state it is in (a test's finally goes on)."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def dashboard_queries() -> list[str]:
    """Every PromQL query of the Grafana dashboard, as Grafana sends it."""
    dash = json.loads(DASHBOARD.read_text())
    out = []
    for p in dash["panels"]:
        for t in p["targets"]:
            expr = t["expr"]
            for k, v in GRAFANA_VARS.items():
                expr = expr.replace(k, v)
            out.append(expr)
    return out


def test_the_dashboard_reads_only_walscopes_metrics():
    """Each query of deploy/grafana/walscope.json names only metrics
    walscope serve exposes (a renamed metric fails here, not on a
    dashboard), and every panel has one."""
    known = {OM.PREFIX + n for n in (*OM.HELP, *OM.GAUGES)}
    known |= {OM.PREFIX + n + s for n in OM.HELP if n.endswith("_seconds")
              for s in ("_bucket", "_sum", "_count")}
    dash = json.loads(DASHBOARD.read_text())
    assert dash["panels"] and all(p["targets"] for p in dash["panels"])
    for expr in dashboard_queries():
        names = set(re.findall(r"\bwalscope_\w+", expr))
        assert names and names <= known, (expr, names - known)
    for v in dash["templating"]["list"]:
        if v["type"] == "query":
            assert re.fullmatch(r"label_values\((walscope_\w+)(\{.*\})?, \w+\)", v["query"])


@pytest.mark.root
@pytest.mark.skipif(not PG.HAVE_PG, reason=PG.NO_PG)
@pytest.mark.skipif(not (PROMETHEUS and PROMTOOL), reason=NO_PROMETHEUS)
def test_prometheus_scrapes_serve_while_pgbench_runs(cluster, tmp_path):
    """A real Prometheus scraping `walscope serve -p <postmaster>` while
    pgbench runs: walscope_writes_total is pgbench's processed
    transactions, walscope_wal_syncs_total moves as pg_stat_wal's
    wal_sync; histogram_quantile(0.99) over the run lies in the bucket of
    walscope's own p99 of the same rows; promtool checks the exposition;
    every query of the Grafana dashboard returns data."""
    start = PG.runner("start", str(cluster))
    assert start.returncode == 0, start.stderr
    pid = int(start.stdout.split()[-1])
    port, out, walscope, prom = free_port(), tmp_path / "o", None, None
    try:
        walscope = serving(pid, port, out)
        prom = Prometheus(tmp_path / "prometheus", f"127.0.0.1:{port}")
        prom.until('up{job="walscope"}', lambda v: v == 1, "Prometheus never scraped serve")
        syncs0, counted0 = settled(cluster, port, out)
        bench = subprocess.run(["runuser", "-u", "postgres", "--", "pgbench", "-h", str(cluster),
                                "-p", PG.pg_port(cluster), "-n", "-c", "2", "-t", "100",
                                "bench"], capture_output=True, text=True, timeout=300)
        assert "actually processed: 200/200" in bench.stdout, bench.stdout + bench.stderr
        prom.until("sum(walscope_writes_total)", lambda v: v == 200,
                   "walscope_writes_total never reached pgbench's 200")
        deadline = time.monotonic() + 60
        while True:
            syncs1, counted1 = settled(cluster, port, out)
            if counted1 - counted0 == syncs1 - syncs0 or time.monotonic() > deadline:
                break
        assert counted1 - counted0 == syncs1 - syncs0 >= 1, (syncs0, syncs1, counted0, counted1)
        prom.until("sum(walscope_wal_syncs_total)", lambda v: v == counted1,
                   "Prometheus never saw walscope's WAL syncs")
        # every row read into the metrics, and scraped
        rows = total(scrape(port), "walscope_writes_recorded")
        prom.until("sum(walscope_writes_recorded_total)", lambda v: v == rows,
                   "Prometheus never saw every row")
        p99 = prom.value("histogram_quantile(0.99, sum by (le) "
                         "(walscope_write_duration_seconds_bucket))")
        # a rate() has data from a series' second scrape on
        for expr in dashboard_queries():
            prom.until_some(expr, "the dashboard's query returned nothing")
        check = subprocess.run([PROMTOOL, "check", "metrics"], input=scrape(port),
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        walscope.send_signal(signal.SIGTERM)
        assert walscope.wait(timeout=120) == 0, walscope.stderr.read()[-3000:]
        summary = json.loads((out / "summary.json").read_text())
        assert summary["writes"]["count"] == rows
        own = summary["writes"]["duration_adj"]["p99_ns"] / 1e9
        # Prometheus's quantile lies in the bucket where 0.99 of the rows'
        # count falls (their own p99 interpolates between two rows, and
        # lands in the bucket below where that rank sits on its bound:
        # 0.0164 against 0.0251 in one fresh clone)
        durs = np.sort(pd.read_parquet(out / "writes.parquet",
                                       columns=["dur_adj_ns"])["dur_adj_ns"].to_numpy() / 1e9)
        below = np.searchsorted(durs, OM.BUCKETS_S, side="right")   # rows <= each bound
        i = min(int(np.searchsorted(below, 0.99 * len(durs), side="left")),
                len(OM.BUCKETS_S) - 1)
        lo, hi = (OM.BUCKETS_S[i - 1] if i else 0.0), OM.BUCKETS_S[i]
        assert lo <= p99 <= hi, (p99, own, lo, hi)
    finally:
        if prom is not None:
            prom.stop()
        if walscope is not None and walscope.poll() is None:
            walscope.kill()
        PG.runner("stop", str(cluster))


def pgbench(data_dir: Path, transactions: int) -> None:
    bench = subprocess.run(["runuser", "-u", "postgres", "--", "pgbench", "-h", str(data_dir),
                            "-p", PG.pg_port(data_dir), "-n", "-c", "2", "-t",
                            str(transactions // 2), "bench"],
                           capture_output=True, text=True, timeout=300)
    assert f"actually processed: {transactions}/{transactions}" in bench.stdout, \
        bench.stdout + bench.stderr


def closed_folders(out: Path) -> list[Path]:
    """The retained folders serve has closed (run.json says when)."""
    return [d for d in sorted(out.glob("slow-*"))
            if "end" in json.loads((d / "run.json").read_text())]


@pytest.mark.root
@pytest.mark.skipif(not PG.HAVE_PG, reason=PG.NO_PG)
@pytest.mark.skipif(not (PROMETHEUS and PROMTOOL), reason=NO_PROMETHEUS)
def test_exemplars_lead_to_the_slow_writes_serve_kept(cluster, tmp_path):
    """serve as always on (retaining, the default) on a postmaster while
    pgbench runs, scraped by Prometheus with exemplar storage: each
    exemplar Prometheus holds names a retained folder where `walscope
    analyse` and `walscope query` find that write, with the exemplar's
    duration, in the bucket it was given; SIGHUP closes the open folder
    while serve runs on; the folders are root's and --group's only."""
    start = PG.runner("start", str(cluster))
    assert start.returncode == 0, start.stderr
    pid = int(start.stdout.split()[-1])
    port, out, walscope, prom = free_port(), tmp_path / "o", None, None
    gid = grp.getgrnam("postgres").gr_gid
    try:
        walscope = serving(pid, port, out, "--keep-slower", "p90", "--group", "postgres")
        prom = Prometheus(tmp_path / "prometheus", f"127.0.0.1:{port}",
                          "--enable-feature=exemplar-storage")
        prom.until('up{job="walscope"}', lambda v: v == 1, "Prometheus never scraped serve")
        t0 = time.time()
        pgbench(cluster, 200)
        prom.until("sum(walscope_writes_total)", lambda v: v == 200,
                   "walscope_writes_total never reached pgbench's 200")
        # a slow write kept: SIGHUP closes its folder, serve runs on
        deadline = time.monotonic() + 60
        while not list(out.glob("slow-*")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert list(out.glob("slow-*")), "no write kept over the last minute's p90"
        # a second serve on the same folder would take the first's spool
        second = subprocess.run([str(ROOT / ".venv" / "bin" / "walscope"), "serve", "-p",
                                 str(pid), "-o", str(out), "--listen",
                                 f"127.0.0.1:{free_port()}"],
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 2 and "another walscope serve writes to it" in \
            second.stderr and second.stderr.count("\n") == 1, second.stderr
        walscope.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 60
        while not closed_folders(out) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert closed_folders(out) and walscope.poll() is None
        pgbench(cluster, 200)
        prom.until("sum(walscope_writes_total)", lambda v: v == 400,
                   "walscope_writes_total never reached 400")
        deadline = time.monotonic() + 60
        while True:
            got = prom.api("query_exemplars", query="walscope_write_duration_seconds_bucket",
                           start=str(t0 - 60), end=str(time.time() + 60))
            exemplars = [(ser["seriesLabels"], e) for ser in got for e in ser["exemplars"]]
            if exemplars or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert exemplars, "Prometheus holds no exemplar"
        walscope.send_signal(signal.SIGTERM)
        assert walscope.wait(timeout=120) == 0, walscope.stderr.read()[-3000:]
        assert not (out / "spool").exists()
        folders = sorted(out.glob("slow-*"))
        assert len(closed_folders(out)) == len(folders) >= 1
        for d in [out, *folders]:
            assert stat.S_IMODE(d.stat().st_mode) == 0o750 and d.stat().st_gid == gid, d
            for f in d.iterdir() if d != out else []:
                assert stat.S_IMODE(f.stat().st_mode) == 0o640 and f.stat().st_gid == gid, f
        # each exemplar: its folder, its write, its duration, its bucket
        analysed: set[str] = set()
        for series, e in exemplars:
            folder, tid, start_ns = e["labels"]["write"].split("/")
            if folder not in analysed:
                a = subprocess.run([str(ROOT / ".venv" / "bin" / "walscope"), "analyse",
                                    str(out / folder)], capture_output=True, text=True)
                assert a.returncode == 0 and "retained by walscope serve" in a.stdout, \
                    a.stdout + a.stderr
                analysed.add(folder)
            w = pd.read_parquet(out / folder / "writes.parquet")
            row = w[(w["tid"] == int(tid)) & (w["start_ns"] == int(start_ns))]
            assert len(row) == 1, e
            # (compensated with the rows read beside it; the folder's analysis
            # has the rows kept beside it: a group's chain may differ by a hair)
            value = float(e["value"])
            assert value == pytest.approx(row["dur_adj_ns"].iloc[0] / 1e9, rel=0.02)
            le = float(series["le"])
            i = OM.BUCKETS_S.index(le) if le in OM.BUCKETS_S else len(OM.BUCKETS_S)
            assert (OM.BUCKETS_S[i - 1] if i else 0) < value <= le, (value, le)
        # and `walscope query` over the folder exported, as docs/serve.md shows it
        folder, tid, start_ns = exemplars[0][1]["labels"]["write"].split("/")
        ds = tmp_path / "ds"
        subprocess.run([str(ROOT / ".venv" / "bin" / "walscope"), "export", str(out / folder),
                        str(ds)], check=True, capture_output=True)
        q = subprocess.run([str(ROOT / ".venv" / "bin" / "walscope"), "query",
                            f"select * from writes where tid = {tid} and start_ns = {start_ns}",
                            str(ds), "--format", "csv"], capture_output=True, text=True)
        found = q.stdout.strip().splitlines()
        assert q.returncode == 0 and len(found) == 2, q.stdout + q.stderr   # header, the row
        assert str(start_ns) in found[1] and tid in found[1]
    finally:
        if prom is not None:
            prom.stop()
        if walscope is not None and walscope.poll() is None:
            walscope.kill()
        PG.runner("stop", str(cluster))


def said_until(proc: subprocess.Popen, text: str) -> str:
    """proc's stderr up to the first line holding text."""
    said = []
    while not said or text not in said[-1]:
        said.append(proc.stderr.readline())
        assert said[-1], "".join(said)
    return said[-1]


@pytest.mark.root
@pytest.mark.skipif(not PG.HAVE_PG, reason=PG.NO_PG)
def test_serve_follows_a_server_by_name_across_a_restart(cluster, tmp_path):
    """serve --name postgres: the postmaster found by name (not a backend),
    traced; when the server stops, serve waits for the next one and traces
    it; walscope_writes_total goes on from where it was (100 then 200,
    pgbench's), each life's slow writes in folders of its own; SIGTERM
    while it runs ends it with 0."""
    start = PG.runner("start", str(cluster))
    assert start.returncode == 0, start.stderr
    pid1 = int(start.stdout.split()[-1])
    assert serve.find_server("postgres") == pid1, "another PostgreSQL runs here"
    port, out = free_port(), tmp_path / "o"
    walscope = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "walscope"), "serve", "--name", "postgres", "--listen",
         f"127.0.0.1:{port}", "-o", str(out), "--interval", "0.2", "--keep-slower", "0"],
        cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        assert f"pid {pid1} traced" in said_until(walscope, "traced: metrics at")
        pgbench(cluster, 100)
        deadline = time.monotonic() + 60
        while total(scrape(port), "walscope_writes") < 100 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert total(scrape(port), "walscope_writes") == 100
        PG.runner("stop", str(cluster))
        said_until(walscope, "waiting for the next process named postgres")
        assert families(scrape(port))["walscope_tracing"].samples[0].value == 0
        start = PG.runner("start", str(cluster))
        assert start.returncode == 0, start.stderr
        pid2 = int(start.stdout.split()[-1])
        assert f"pid {pid2} traced" in said_until(walscope, "traced: metrics at")
        pgbench(cluster, 100)
        deadline = time.monotonic() + 60
        while total(text := scrape(port), "walscope_writes") < 200 and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        assert total(text, "walscope_writes") == 200, text
        rows = recorded(text)
        walscope.send_signal(signal.SIGTERM)
        assert walscope.wait(timeout=120) == 0, walscope.stderr.read()[-3000:]
        folders = sorted(out.glob("slow-*"))
        lives = {json.loads((d / "run.json").read_text())["summary"]["pid"] for d in folders}
        assert lives == {pid1, pid2}
        # --keep-slower 0: every row kept, once
        assert sum(len(Records(d, "ws_write_rec")) for d in folders) == rows
    finally:
        if walscope.poll() is None:
            walscope.kill()
        PG.runner("stop", str(cluster))


def cgroup2() -> Path | None:
    return next((Path(m) for m, kind in serve.cgroup_mounts() if kind == "cgroup2"), None)


@pytest.mark.root
@pytest.mark.skipif(not PG.HAVE_PG, reason=PG.NO_PG)
@pytest.mark.skipif(cgroup2() is None, reason="no cgroup2 mount")
def test_serve_finds_a_server_by_its_cgroup(cluster, tmp_path):
    """serve --cgroup /<a cgroup> (a path inside the cgroup2 mount, as a
    systemd unit's is named): the postmaster started in it is traced, not
    the pgbench outside it, and every commit counted."""
    group = cgroup2() / f"walscope-test-{os.getpid()}"
    group.mkdir()
    walscope = None
    try:
        start = subprocess.run(["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec '
                                f'"{sys.executable}" -m runners.workloads.postgres start '
                                f'"{cluster}"'], cwd=ROOT, capture_output=True, text=True,
                               timeout=300)
        assert start.returncode == 0, start.stderr
        pid = int(start.stdout.split()[-1])
        assert pid in serve.cgroup_pids(group)
        port, out = free_port(), tmp_path / "o"
        walscope = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "walscope"), "serve", "--cgroup", f"/{group.name}",
             "--listen", f"127.0.0.1:{port}", "-o", str(out), "--interval", "0.2",
             "--keep-slower", "0"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
        assert f"pid {pid} traced" in said_until(walscope, "traced: metrics at")
        pgbench(cluster, 200)
        deadline = time.monotonic() + 60
        while total(scrape(port), "walscope_writes") < 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert total(scrape(port), "walscope_writes") == 200
        walscope.send_signal(signal.SIGTERM)
        assert walscope.wait(timeout=120) == 0, walscope.stderr.read()[-3000:]
        assert {json.loads((d / "run.json").read_text())["summary"]["pid"]
                for d in out.glob("slow-*")} == {pid}
    finally:
        if walscope is not None and walscope.poll() is None:
            walscope.kill()
        PG.runner("stop", str(cluster))
        deadline = time.monotonic() + 30      # the postmaster's children leave it
        while serve.cgroup_pids(group) and time.monotonic() < deadline:
            time.sleep(0.2)
        group.rmdir()


UNIT = ROOT / "deploy" / "walscope-serve@.service"


def unit_capabilities() -> list[str]:
    """The capabilities the systemd unit gives serve (AmbientCapabilities)."""
    line = next(x for x in UNIT.read_text().splitlines()
                if x.startswith("AmbientCapabilities="))
    return line.split("=", 1)[1].split()


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="no systemd-analyze")
def test_the_systemd_unit_verifies(tmp_path):
    """systemd's own check of an instance of the unit; it bounds serve
    to the capabilities it is given, no more."""
    inst = tmp_path / "walscope-serve@pg.service"
    inst.write_text(UNIT.read_text())
    v = subprocess.run(["systemd-analyze", "verify", str(inst)], capture_output=True, text=True)
    assert v.returncode == 0 and not v.stderr.strip(), v.stderr
    bound = next(x for x in UNIT.read_text().splitlines()
                 if x.startswith("CapabilityBoundingSet="))
    assert bound.split("=", 1)[1].split() == unit_capabilities()


@pytest.mark.root
@pytest.mark.skipif(not shutil.which("setpriv"), reason="no setpriv (util-linux)")
def test_serve_runs_unprivileged_with_the_units_capabilities():
    """serve as nobody with only the unit's capabilities (CAP_BPF,
    CAP_PERFMON), attached to a root process, retaining as the unit does:
    every commit a row, every probe attached, the dynamic loader's hook
    too (a uprobe_multi link: as a classic perf-event uprobe it took
    CAP_SYS_ADMIN); every commit kept (--keep-slower 0) in folders only
    nobody and its group can read; with CAP_BPF alone, a one-line
    refusal."""
    caps = ",".join("+" + c.removeprefix("CAP_").lower() for c in unit_capabilities())
    nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    venv = str(ROOT / ".venv" / "bin" / "walscope")
    if subprocess.run([*nobody, "test", "-x", venv]).returncode:
        pytest.skip(f"nobody cannot run {venv} (the clone's folders are not open to it)")
    work = Path(tempfile.mkdtemp(prefix="walscope-unpriv-"))
    work.chmod(0o777)
    srv = subprocess.Popen([sys.executable, "-c", SERVER, str(work / "t.db"), str(COMMITS)],
                           stdout=subprocess.PIPE, text=True)
    try:
        assert srv.stdout.readline().strip() == "ready"
        port = free_port()
        out = work / "o"
        p = subprocess.Popen([*nobody, f"--inh-caps={caps}",
                              f"--ambient-caps={caps}", venv, "serve", "-p",
                              str(srv.pid), "--listen", f"127.0.0.1:{port}", "-o", str(out),
                              "--interval", "0.2", "--keep-slower", "0"], cwd=work,
                             stderr=subprocess.PIPE, text=True)
        said = []
        while not said or "traced: metrics at" not in said[-1]:
            said.append(p.stderr.readline())
            assert said[-1], "".join(said)
        os.kill(srv.pid, signal.SIGUSR1)
        assert srv.stdout.readline().strip() == "committed"
        deadline = time.monotonic() + 60
        while recorded(scrape(port)) < COMMITS and time.monotonic() < deadline:
            time.sleep(0.2)
        assert recorded(scrape(port)) == COMMITS
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=120)
        err = "".join(said) + err
        assert p.returncode == 0, err[-3000:]
        kept = sorted(out.glob("slow-*"))
        assert kept and not (out / "spool").exists()
        assert sum(len(Records(d, "ws_write_rec")) for d in kept) == COMMITS
        assert "could not attach" not in err, err[-3000:]
        assert "cannot attach" not in (kept[-1] / "collector.log").read_text()
        nobody_uid = int(subprocess.check_output(["id", "-u", "nobody"]))
        for d in [out, *kept]:
            assert stat.S_IMODE(d.stat().st_mode) == 0o750 and d.stat().st_uid == nobody_uid
        assert all(stat.S_IMODE(f.stat().st_mode) == 0o640 for f in kept[0].iterdir())
        no = subprocess.run([*nobody, "--inh-caps=+bpf", "--ambient-caps=+bpf", venv, "serve",
                             "-p", str(srv.pid), "-o", str(work / "o2")], cwd=work,
                            capture_output=True, text=True, timeout=120)
        assert no.returncode != 0 and no.stderr.strip().count("\n") == 0, no.stderr
        assert "CAP_BPF and CAP_PERFMON" in no.stderr
    finally:
        srv.kill()
        shutil.rmtree(work, ignore_errors=True)


def myrocks_clients(m, clients: int, per: int, pause: float) -> list[subprocess.Popen]:
    """clients MariaDB clients, each committing per rows into w.t (ids of
    its own), a pause of that many seconds after each; started, not waited."""
    loads = []
    for c in range(clients):
        script = "".join(f"INSERT INTO t VALUES ({c * per + i}, 'row {i}');\n"
                         f"DO SLEEP({pause});\n" for i in range(per))
        loads.append(subprocess.Popen([m.client, "--no-defaults", "-S", m.sock, "-u", "root",
                                       "w"], stdin=subprocess.PIPE, text=True))
        loads[-1].stdin.write(script)
        loads[-1].stdin.close()
    return loads


@pytest.mark.root
def test_serve_on_a_myrocks_server_counts_what_rocksdb_counts(tmp_path):
    """serve -p on MariaDB with MyRocks while two clients commit at a
    server's resting rate (every commit recorded, the budget's every-write
    start): the rows and WAL syncs served equal the server's own RocksDB
    counters over the same span (writes: write_self + write_other; syncs:
    wal_synced), walscope_wal_syncs_total (libc's syncs, windows or not)
    holds RocksDB's and no more than InnoDB's besides, the rows are
    trusted or not as the run folder's self-check says, and the run
    folder holds the same rows."""
    per, clients, pause = 100, 2, 0.006
    with mariadb_server(tmp_path / "m", rocksdb=True) as m:
        m.sql("CREATE DATABASE w; CREATE TABLE w.t (id INT PRIMARY KEY, "
              "v VARCHAR(40)) ENGINE=ROCKSDB")
        port, out = free_port(), tmp_path / "o"
        walscope = serving(m.proc.pid, port, out)
        try:
            before, counted0 = m.counters(), log_syncs_now(port, out)
            innodb0 = m.counters(("Innodb_data_fsyncs",))["Innodb_data_fsyncs"]
            loads = myrocks_clients(m, clients, per, pause)
            assert all(p.wait(timeout=300) == 0 for p in loads)
            after = m.counters()
            delta = {k: after[k] - before[k] for k in MYROCKS_COUNTERS}
            writes = delta["Rocksdb_write_self"] + delta["Rocksdb_write_other"]
            assert writes == clients * per, delta
            deadline = time.monotonic() + 60     # (the rows and their syncs read)
            while (recorded(text := scrape(port)) < writes or total(
                    text, "walscope_wal_syncs_recorded") < delta["Rocksdb_wal_synced"]) \
                    and time.monotonic() < deadline:
                time.sleep(0.2)
            assert recorded(text) == writes, text
            assert total(text, "walscope_wal_syncs_recorded") == delta["Rocksdb_wal_synced"]
            # every log sync, counted at libc's fdatasync and fsync: RocksDB's
            # WAL syncs (199 of 199 here), and any of InnoDB's (its redo log
            # is a WAL too), no more than its own count of fsyncs
            counted = log_syncs_now(port, out) - counted0
            innodb = m.counters(("Innodb_data_fsyncs",))["Innodb_data_fsyncs"] - innodb0
            assert delta["Rocksdb_wal_synced"] <= counted <= \
                delta["Rocksdb_wal_synced"] + innodb, (counted, delta, innodb)
            fam = families(text)
            assert {s.labels["engine"] for s in fam["walscope_write_duration_seconds"].samples} \
                == {"rocksdb"}
            served_trust = fam["walscope_rows_trusted"].samples[0].value
            walscope.send_signal(signal.SIGTERM)
            assert walscope.wait(timeout=120) == 0, walscope.stderr.read()[-3000:]
        finally:
            if walscope.poll() is None:
                walscope.kill()
    s = json.loads((out / "summary.json").read_text())
    assert s["budget"]["every_write"] and s["writes"]["count"] == writes
    assert served_trust == int(s["self_check"]["trusted"])


class Said:
    """A process's stderr lines as they come (a thread reads them)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self._t = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._t.start()

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stderr:
            self.lines.append(line)

    def wait_for(self, text: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            assert time.monotonic() < deadline, f"never said {text!r}: {''.join(self.lines)}"
            time.sleep(0.05)


def by_process(text: str | None, family: str) -> dict[str, float]:
    """A family's samples summed by their process label."""
    out: dict[str, float] = {}
    f = families(text).get(family) if text else None
    for s in f.samples if f else []:
        out[s.labels["process"]] = out.get(s.labels["process"], 0) + s.value
    return out


CTYPES = str(ROOT / "tests" / "engines" / "rocks_ctypes.py")


@pytest.mark.root
@pytest.mark.skipif(not (PROMETHEUS and PROMTOOL), reason=NO_PROMETHEUS)
def test_serve_all_finds_a_myrocks_server_and_a_rocksdb_program(tmp_path):
    """serve --all, no process named, scraped by a real Prometheus: a
    MariaDB server with MyRocks that runs before serve starts, and a
    RocksDB program (Python through ctypes, no other engine) started while
    serve runs, found by serve's reading of /proc before it writes; each
    process's rows and WAL syncs served equal its own RocksDB counts (the
    server's counters; the program's synced puts, one WAL sync each), in
    Prometheus too; each process's histogram_quantile(0.99) lies in the
    bucket of its own rows' p99 in the run folder; a process with no
    engine is not traced; promtool checks the exposition."""
    per, clients, pause, puts = 100, 2, 0.006, 150
    with mariadb_server(tmp_path / "m", rocksdb=True) as m:
        m.sql("CREATE DATABASE w; CREATE TABLE w.t (id INT PRIMARY KEY, "
              "v VARCHAR(40)) ENGINE=ROCKSDB")
        port, out = free_port(), tmp_path / "o"
        plain = subprocess.Popen(["sleep", "600"])
        walscope = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "walscope"), "serve", "--all", "--listen",
             f"127.0.0.1:{port}", "-o", str(out), "--interval", "0.2", "--keep-all"],
            cwd=ROOT, stderr=subprocess.PIPE, text=True)
        said = Said(walscope)
        program = prom = None
        try:
            said.wait_for("traced: metrics at http://127.0.0.1:")
            prom = Prometheus(tmp_path / "prometheus", f"127.0.0.1:{port}")
            prom.until('up{job="walscope"}', lambda v: v == 1, "Prometheus never scraped serve")
            said.wait_for(f"pid {m.proc.pid} (")
            program = subprocess.Popen([sys.executable, CTYPES, str(tmp_path / "rdb"),
                                        str(puts), "loaded"], stdout=subprocess.PIPE, text=True)
            assert program.stdout.readline().strip() == "ready"
            said.wait_for(f"pid {program.pid} (")      # found before it writes
            name = Path(f"/proc/{program.pid}/comm").read_text().strip()
            before = m.counters()
            loads = myrocks_clients(m, clients, per, pause)
            program.send_signal(signal.SIGUSR1)
            assert all(p.wait(timeout=300) == 0 for p in loads)
            assert program.stdout.readline().strip() == f"puts {puts}"
            assert program.wait(timeout=60) == 0
            after = m.counters()
            delta = {k: after[k] - before[k] for k in MYROCKS_COUNTERS}
            writes = delta["Rocksdb_write_self"] + delta["Rocksdb_write_other"]
            assert writes == clients * per, delta
            server = Path(f"/proc/{m.proc.pid}/comm").read_text().strip()
            want = {server: writes, name: puts}
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                text = scrape(port)
                rows = by_process(text, "walscope_writes_recorded")
                syncs = by_process(text, "walscope_wal_syncs_recorded")
                if {k: rows.get(k) for k in want} == want and \
                        syncs.get(server, 0) >= delta["Rocksdb_wal_synced"] and \
                        syncs.get(name, 0) >= puts:
                    break
                time.sleep(0.2)
            rows = by_process(text, "walscope_writes_recorded")
            assert rows.get(server) == writes and rows.get(name) == puts, (rows, want)
            syncs = by_process(text, "walscope_wal_syncs_recorded")
            assert syncs.get(server) == delta["Rocksdb_wal_synced"], (syncs, delta)
            assert syncs.get(name) == puts, syncs
            assert {s.labels["engine"] for s in
                    families(text)["walscope_write_duration_seconds"].samples} == {"rocksdb"}
            assert not any(f"pid {plain.pid} " in line for line in said.lines)
            check = subprocess.run([PROMTOOL, "check", "metrics"], input=text,
                                   capture_output=True, text=True)
            assert check.returncode == 0, check.stdout + check.stderr
            p99 = {}
            for process, n in want.items():
                sel = f'{{process="{process}"}}'
                prom.until(f"sum(walscope_writes_recorded_total{sel})", lambda v: v == n,
                           f"Prometheus never saw {process}'s rows")
                p99[process] = prom.value(
                    "histogram_quantile(0.99, sum by (le) "
                    f"(walscope_write_duration_seconds_bucket{sel}))")
            walscope.send_signal(signal.SIGTERM)
            assert walscope.wait(timeout=120) == 0, "".join(said.lines)[-3000:]
        finally:
            plain.kill()
            for p in (walscope, program):
                if p is not None and p.poll() is None:
                    p.kill()
            if prom is not None:
                prom.stop()
    w = pd.read_parquet(out / "writes.parquet")
    assert sorted(w.groupby("pid").size().items()) == sorted(
        [(m.proc.pid, writes), (program.pid, puts)])
    for process, pid in ((server, m.proc.pid), (name, program.pid)):
        # the row at rank 0.99 n, the one Prometheus' estimate is interpolated beside
        own = np.quantile(w.loc[w["pid"] == pid, "dur_adj_ns"], 0.99,
                          method="inverted_cdf") / 1e9
        i = bisect.bisect_left(OM.BUCKETS_S, own)
        lo, hi = (OM.BUCKETS_S[i - 1] if i else 0.0), OM.BUCKETS_S[min(i, len(OM.BUCKETS_S) - 1)]
        assert lo <= p99[process] <= hi, (process, p99[process], own, lo, hi)


@pytest.mark.root
@pytest.mark.skipif(not shutil.which("unshare"), reason="no unshare (util-linux)")
def test_serve_reads_a_server_in_another_mount_namespace_by_its_own_files(tmp_path):
    """A server in a mount namespace of its own (as in a container) maps a
    library at a path that names another file here: serve -p reads and
    probes the file the server has (through /proc/PID/map_files), not the
    one its path names here, and counts every commit."""
    import sqlite3  # noqa: F401 (maps the library, to find it)
    lib = next(line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines()
               if "libsqlite3" in line)
    copy = tmp_path / "libsqlite3-copy.so"
    shutil.copy2(lib, copy)
    assert os.stat(copy).st_ino != os.stat(lib).st_ino
    srv = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "sh", "-c",
         'mount --bind "$1" "$2" && exec "$3" -c "$4" "$5" "$6"', "sh", str(copy), lib,
         sys.executable, SERVER, str(tmp_path / "t.db"), str(COMMITS)],
        stdout=subprocess.PIPE, text=True)
    port, out, walscope = free_port(), tmp_path / "o", None
    try:
        assert srv.stdout.readline().strip() == "ready"
        mapped = [line.split() for line in Path(f"/proc/{srv.pid}/maps").read_text()
                  .splitlines() if line.endswith(lib)]
        assert mapped and int(mapped[0][4]) == os.stat(copy).st_ino   # the copy, at lib
        walscope = serving(srv.pid, port, out)
        os.kill(srv.pid, signal.SIGUSR1)
        assert srv.stdout.readline().strip() == "committed"
        deadline = time.monotonic() + 60
        while recorded(text := scrape(port)) < COMMITS and time.monotonic() < deadline:
            time.sleep(0.2)
        assert recorded(text) == COMMITS, text
        walscope.send_signal(signal.SIGTERM)
        assert walscope.wait(timeout=120) == 0, walscope.stderr.read()[-3000:]
    finally:
        srv.kill()
        if walscope is not None and walscope.poll() is None:
            walscope.kill()
    s = json.loads((out / "summary.json").read_text())
    found = [o for o in s["objects"] if o.get("engine") == "sqlite"]
    assert found and found[0]["path"] == lib, found     # named as the server names it
