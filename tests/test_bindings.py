"""RocksDB and SQLite as other toolchains and servers carry them, traced
with the plain command (the default mode, as a user types it): every write
recorded, and the counts exact against the engine's own counters.

- a JVM program through the RocksDB Java binding (Maven Central's
  rocksdbjni), which extracts its library to /tmp and dlopen()s it;
- a Go program with SQLite compiled in (github.com/mattn/go-sqlite3 through
  cgo): SQLite's probe points in the program's own .symtab;
- a database server attached with -p while two clients commit ~300 times a
  second: MariaDB with MyRocks (Debian's mariadb-server and
  mariadb-plugin-rocksdb; ./setup.sh --test installs them), RocksDB inside
  the plugin it loads.

The workloads are built on first use into .output/bindings/NAME-HASH (the
hash of their sources), so a fresh clone builds them once (about a minute
in all, most of it compiling SQLite for Go) and later runs reuse them.  A
test whose toolchain is missing, or whose package cannot be fetched, skips
and says which; a build of our own source that fails is a failure.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import ROOT, TRACE, db_bench_stats, run_trace, wait_attached
from tests.mariadb import MYROCKS_COUNTERS, server
from tests.toolchain import Unavailable, step, tool

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build
ENGINES = ROOT / "tests" / "engines"
CACHE = ROOT / ".output" / "bindings"


def built(name: str, sources: list[str], build) -> Path:
    """build(dir) into .output/bindings/NAME-HASH once; the folder is
    renamed into place only when complete, with build.json (seconds)."""
    h = hashlib.sha256()
    for s in sources:
        h.update(s.encode() + b"\0" + (ENGINES / s).read_bytes() + b"\0")
    final = CACHE / f"{name}-{h.hexdigest()[:12]}"
    if (final / "build.json").exists():
        return final
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=CACHE))
    t0 = time.monotonic()
    try:
        build(tmp)
        (tmp / "build.json").write_text(json.dumps({"seconds": time.monotonic() - t0}) + "\n")
        tmp.chmod(0o755)   # the workload may run as SUDO_USER
        try:
            tmp.rename(final)
        except OSError:   # built meanwhile by another run
            pass
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return final


def build_java() -> tuple[str, str]:
    """(java, classpath): rocksdbjni fetched by Maven, RocksJava compiled."""
    java, javac = tool("java"), tool("javac")
    mvn = tool("mvn")

    def build(d: Path) -> None:
        step([mvn, "-B", "-q", "-f", str(ENGINES / "rocks_java" / "pom.xml"),
              "dependency:copy-dependencies", f"-DoutputDirectory={d / 'lib'}"],
             "fetching rocksdbjni with Maven", fetch=True)
        jars = sorted(str(j) for j in (d / "lib").glob("*.jar"))
        step([javac, "-cp", ":".join(jars), "-d", str(d / "classes"),
              str(ENGINES / "rocks_java" / "RocksJava.java")], "javac RocksJava.java")

    d = built("rocks_java", ["rocks_java/pom.xml", "rocks_java/RocksJava.java"], build)
    jars = sorted(str(j) for j in (d / "lib").glob("*.jar"))
    return java, ":".join([*jars, str(d / "classes")])


def build_go() -> str:
    """The Go program, SQLite compiled into it by cgo."""
    go = tool("go", "/usr/local/go/bin/go")
    tool("gcc")   # cgo's compiler
    src = ENGINES / "sqlite_go"
    env = {**os.environ, "CGO_ENABLED": "1", "GOFLAGS": "-mod=readonly"}

    def build(d: Path) -> None:
        step([go, "mod", "download"], "fetching go-sqlite3 (go mod download)",
             fetch=True, cwd=src, env=env)
        step([go, "build", "-o", str(d / "sqlite_go"), "."], "go build", cwd=src, env=env)

    d = built("sqlite_go", ["sqlite_go/go.mod", "sqlite_go/go.sum", "sqlite_go/main.go"],
              build)
    return str(d / "sqlite_go")


def need(get, what: str):
    try:
        return get()
    except Unavailable as e:
        pytest.skip(f"{what}: {e}")


def traced(tmp_path: Path, command: list[str]) -> tuple[dict, str]:
    """The plain command; it must have recorded every write."""
    p = run_trace(["-q", "-o", str(tmp_path / "o"), "--", *command], timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["mode"] == "budget" and s["budget"]["every_write"], s.get("budget")
    return s, (tmp_path / "o" / "command.log").read_text()


def rocksdb_object(s: dict) -> dict:
    objs = [o for o in s["objects"] if o["engine"] == "rocksdb"]
    assert len(objs) == 1, s["objects"]
    return objs[0]


def test_jvm_through_the_rocksdb_java_binding(tmp_path):
    """Two JVM threads write 23 synced puts each through rocksdbjni: its
    library, extracted to /tmp when the class loads, is found and probed
    before the first put; writes, leaders and WAL syncs equal RocksDB's
    own tickers (Statistics, printed by the program)."""
    java, cp = need(build_java, "the JVM workload needs a JDK (javac) and Maven")
    n, threads = 23, 2
    s, log = traced(tmp_path, [java, "-cp", cp, "RocksJava", str(tmp_path / "db"),
                               str(n), str(threads)])
    assert f"puts {n * threads}" in log, log[-2000:]
    st = db_bench_stats(log)
    assert st["rocksdb.number.keys.written"] == n * threads
    assert s["writes"]["count"] == n * threads == \
        st["rocksdb.write.self"] + st["rocksdb.write.other"]
    assert s["groups"]["leaders"] == st["rocksdb.write.self"]
    assert s["wal"]["sync"]["count"] == st["rocksdb.wal.synced"]
    assert s["engines_found"] == ["rocksdb"]
    lib = rocksdb_object(s)
    assert lib["how"] in ("mmap", "dlopen") and lib["probes"] > 0 and lib["failed"] == 0
    assert Path(lib["path"]).parent == Path("/tmp") and "rocksdbjni" in lib["path"], lib
    assert lib["seen_ns"] < lib["attached_ns"]
    w = pd.read_parquet(tmp_path / "o" / "writes.parquet")
    assert len(w) == n * threads and w["tid"].nunique() == threads


def test_go_binary_with_sqlite_compiled_in(tmp_path):
    """67 transactions of 3 inserts from a Go program, SQLite (the
    amalgamation) compiled into it: every transaction a row, as many as
    SQLite's commit hook counted (the CREATE TABLE and each COMMIT)."""
    exe = need(build_go, "the Go workload needs Go and gcc (cgo)")
    txns, rows = 67, 3
    s, log = traced(tmp_path, [exe, str(tmp_path / "t.db"), str(txns), str(rows)])
    line = next(ln for ln in log.splitlines() if ln.startswith("sqlite "))
    f = line.split()
    got = dict(zip(f[2::2], map(int, f[3::2])))
    assert got == {"committed": txns, "inserted": txns * rows, "rows": txns * rows,
                   "commit_hook": txns + 1}, line
    assert s["engine"] == "sqlite" and s["engines_found"] == ["sqlite"]
    assert s["writes"]["count"] == got["commit_hook"]
    sq = s["sqlite"]
    assert sq["explicit"] == txns and sq["autocommit"] == 1 and sq["rollbacks"] == 0
    assert sq["db_sync"]["count"] == got["commit_hook"]   # synchronous=FULL, DELETE journal
    obj = next(o for o in s["objects"] if o["engine"] == "sqlite")
    assert obj["path"] == exe and obj["symbols"] == ".symtab" and obj["how"] == "start"
    w = pd.read_parquet(tmp_path / "o" / "writes.parquet")
    assert len(w) == txns + 1 and int(w["explicit"].sum()) == txns


# -- a server attached with -p: MariaDB with MyRocks ------------------------

@pytest.fixture
def mariadb(tmp_path):
    with server(tmp_path / "m", rocksdb=True) as m:
        yield m


def test_myrocks_server_attached_while_clients_commit(tmp_path, mariadb):
    """MariaDB runs with MyRocks; walscope attaches with -p; two clients
    commit 150 single-row INSERTs each, ~300 commits a second in all, each
    a synced WAL write (rocksdb_flush_log_at_trx_commit=1).  Every commit
    is a row, and writes, leaders and WAL syncs equal the server's own
    rocksdb status counters over the traced span."""
    per, clients, pause = 150, 2, 0.006
    mariadb.sql("CREATE DATABASE w; CREATE TABLE w.t (id INT PRIMARY KEY, "
                "v VARCHAR(40)) ENGINE=ROCKSDB")
    out = tmp_path / "o"
    tracer = subprocess.Popen([*TRACE, "-q", "-o", str(out), "-p", str(mariadb.proc.pid)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_attached(out, tracer)
        time.sleep(0.5)
        before = mariadb.counters()
        t0 = time.monotonic()
        loads = []
        for c in range(clients):
            script = "".join(f"INSERT INTO t VALUES ({c * per + i}, 'row {i}');\n"
                             f"DO SLEEP({pause});\n" for i in range(per))
            loads.append(subprocess.Popen([mariadb.client, "--no-defaults", "-S",
                                           mariadb.sock, "-u", "root", "w"],
                                          stdin=subprocess.PIPE, text=True))
            loads[-1].stdin.write(script)
            loads[-1].stdin.close()
        assert all(p.wait(timeout=300) == 0 for p in loads)
        rate = clients * per / (time.monotonic() - t0)
        after = mariadb.counters()
        tracer.send_signal(signal.SIGINT)
        _, err = tracer.communicate(timeout=300)
    finally:
        if tracer.poll() is None:
            tracer.kill()
            tracer.wait()
    assert tracer.returncode == 0, err[-3000:]
    n = clients * per
    assert rate < 600, rate   # a low rate, as a server's at rest
    assert mariadb.sql("SELECT count(*) FROM t", "w").strip() == str(n)
    delta = {k: after[k] - before[k] for k in MYROCKS_COUNTERS}
    assert delta["Rocksdb_number_keys_written"] == n, delta
    s = json.loads((out / "summary.json").read_text())
    assert s["mode"] == "budget" and s["budget"]["every_write"], s["budget"]
    assert s["writes"]["count"] == n == delta["Rocksdb_write_self"] + delta["Rocksdb_write_other"]
    assert s["groups"]["leaders"] == delta["Rocksdb_write_self"]
    assert s["wal"]["sync"]["count"] == delta["Rocksdb_wal_synced"]
    obj = rocksdb_object(s)
    assert obj["path"].endswith("/ha_rocksdb.so") and obj["how"] == "start", obj
    w = pd.read_parquet(out / "writes.parquet")
    assert len(w) == n
