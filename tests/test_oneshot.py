"""More programs of issue 24's kinds, traced with the plain command (the
default mode, as a user types it): every write recorded, and the counts
exact against what the engine itself recorded.

- a Python program that imports, 1.5 s into the run, an extension module
  with RocksDB linked in statically (tests/engines/rocks_ext.c against
  Debian's librocksdb.a; RocksDB's functions only in the module's .symtab)
  and writes synced puts: against RocksDB's Statistics, read through the C
  API;
- one-shot command-line tools: RocksDB's `ldb put` and `ldb batchput`
  (against the records in the WAL they leave, read back with `ldb
  dump_wal`) and the `sqlite3` shell running a script of statements
  (against SQLite's file change counter, which each write transaction
  increments, in the database header).

The extension module is built on first use into .output/bindings/ (as
tests/test_bindings.py builds its workloads; 11-16 s cold on 2 cores).
Debian's librocksdb.a is built for executables (-fPIE), which a shared
object cannot wholly take: the 9 objects whose thread-locals use the
local-exec model are rebuilt with -fPIC from Debian's source of the
installed package (`apt-get source`, with a private list of deb-src
indexes; configured with debian/rules' CMake options and compiled with the
command Debian compiled librocksdb.so's objects with); libstdc++ is linked
in statically; and the module defines its own copies of the three C
library data symbols the other objects reach as an executable would
(rocks_ext.c says how).  Everything else is Debian's archive as shipped.
Missing python3-dev, cmake or dpkg-dev, or a source that cannot be
fetched, skips with the reason (./setup.sh --test installs them).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import ROOT, db_bench_stats, run_trace
from tests.test_bindings import ENGINES, Unavailable, built, need, step, tool, traced

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build
LATE = ("mmap", "dlopen")


def rocksdb_object(s: dict) -> dict:
    objs = [o for o in s["objects"] if o["engine"] == "rocksdb"]
    assert len(objs) == 1, s["objects"]
    return objs[0]


# -- a Python binding with RocksDB linked in statically ---------------------

def system_python() -> tuple[str, str, str]:
    """(interpreter, its C headers' folder, its extension suffix): the
    system's python3, which the traced program runs."""
    py = next((p for p in ("/usr/bin/python3", shutil.which("python3"))
               if p and os.access(p, os.X_OK)), None)
    if not py:
        raise Unavailable("no python3")
    inc, suffix, ver = subprocess.run(
        [py, "-c", "import sys, sysconfig; print(sysconfig.get_paths()['include']); "
         "print(sysconfig.get_config_var('EXT_SUFFIX')); print(sys.version.split()[0])"],
        capture_output=True, text=True, check=True).stdout.split()
    if not Path(inc, "Python.h").exists():
        raise Unavailable(f"no {inc}/Python.h: apt-get install python3-dev "
                          "(./setup.sh --test does)")
    return py, inc, suffix


def local_exec_tls_members(archive: Path) -> list[str]:
    """The archive's members that reach their thread-locals in the
    local-exec model (R_X86_64_TPOFF32/64): linkable into executables only."""
    out = subprocess.run([tool("readelf"), "-rW", str(archive)], capture_output=True,
                         text=True, check=True).stdout
    member, found = None, set()
    for line in out.splitlines():
        m = re.match(r"File: .*\((.+)\)$", line)
        if m:
            member = m.group(1)
        elif re.search(r"\bR_X86_64_TPOFF(32|64)\b", line):
            found.add(member)
    return sorted(found)


def debian_source(package: str, d: Path) -> Path:
    """`apt-get source PACKAGE` (the installed version) into d, with deb-src
    indexes of the system's own archives in a private list folder."""
    parts, lists = d / "parts", d / "lists"
    (lists / "partial").mkdir(parents=True)
    parts.mkdir()
    (d / "cache" / "archives" / "partial").mkdir(parents=True)
    etc = Path("/etc/apt")
    for f in sorted(etc.glob("sources.list.d/*.sources")):
        (parts / f.name).write_text(re.sub(r"(?m)^Types:.*$", "Types: deb-src",
                                           f.read_text()))
    for f in [etc / "sources.list", *sorted(etc.glob("sources.list.d/*.list"))]:
        if f.exists():
            (parts / (f.name + ".list")).write_text(
                re.sub(r"(?m)^deb\s", "deb-src ", f.read_text()))
    src = subprocess.run(["dpkg-query", "-W", "-f=${source:Package}=${source:Version}",
                          package], capture_output=True, text=True).stdout
    if not src:
        raise Unavailable(f"{package} is not installed")
    apt = ["apt-get", "-q", "-o", "Dir::Etc::SourceList=/dev/null",
           "-o", f"Dir::Etc::SourceParts={parts}", "-o", f"Dir::State::Lists={lists}",
           "-o", f"Dir::Cache={d / 'cache'}"]
    subprocess.run([*apt, "update"], capture_output=True, text=True, timeout=600)
    tool("dpkg-source")
    step([*apt, "source", src], f"fetching the source of {src} (apt-get source)",
         fetch=True, cwd=d)
    tree = [p for p in d.iterdir() if p.is_dir() and (p / "debian" / "rules").exists()]
    assert len(tree) == 1, list(d.iterdir())
    return tree[0]


def pic_objects(src: Path, members: list[str], out: Path) -> None:
    """MEMBERS compiled as Debian compiled them for its librocksdb.so: CMake
    configured with debian/rules' options and dpkg-buildflags' flags, each
    object built with the shared library's compile command (-fPIC)."""
    cmake = tool("cmake")
    rules = (src / "debian" / "rules").read_text()
    opts = re.findall(r"-D\w+=\w+", rules.split("override_dh_auto_configure", 1)[1]
                      .split("override_", 1)[0])
    flags = {k: subprocess.run(["dpkg-buildflags", "--get", k], capture_output=True,
                               text=True).stdout.strip() for k in ("CFLAGS", "CXXFLAGS")}
    b = src / "obj-walscope"
    step([cmake, "-S", str(src), "-B", str(b), "-DCMAKE_BUILD_TYPE=None",
          "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", *opts, "-DWITH_TESTS=OFF"],
         "configuring RocksDB's source (cmake)", env={**os.environ, **flags})
    commands = {}
    for e in json.loads((b / "compile_commands.json").read_text()):
        args = shlex.split(e["command"])
        o = args.index("-o")
        if "-fPIC" in args:
            commands.setdefault(Path(args[o + 1]).name, []).append((args, o, e["directory"]))
    out.mkdir()

    def compile_one(m: str) -> None:
        found = commands.get(m, [])
        assert len(found) == 1, f"{m}: {len(found)} -fPIC compile commands"
        args, o, cwd = found[0]
        step([*args[:o + 1], str(out / m), *args[o + 2:]], f"compiling {m} -fPIC", cwd=cwd)

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(compile_one, members))


def build_rocks_ext() -> tuple[str, Path]:
    """(python, folder holding rocks_ext): the module linked with Debian's
    librocksdb.a, its local-exec objects rebuilt -fPIC."""
    py, inc, suffix = system_python()
    gxx = tool("g++")
    archive = Path(subprocess.run([gxx, "-print-file-name=librocksdb.a"],
                                  capture_output=True, text=True).stdout.strip())
    if not archive.is_absolute():
        raise Unavailable("no librocksdb.a: apt-get install librocksdb-dev")
    rocksdb = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "librocksdb-dev"],
                             capture_output=True, text=True).stdout.strip() or "unknown"

    def build(d: Path) -> None:
        members = local_exec_tls_members(archive)
        lib = d / "lib"
        lib.mkdir()
        shutil.copy(archive, lib / "librocksdb.a")
        if members:
            names = subprocess.run(["ar", "t", str(archive)], capture_output=True,
                                   text=True, check=True).stdout.split()
            assert all(names.count(m) == 1 for m in members), members
            src = debian_source("librocksdb-dev", d / "src")
            pic_objects(src, members, d / "pic")
            step(["ar", "r", str(lib / "librocksdb.a"), *(str(d / "pic" / m) for m in members)],
                 "ar r librocksdb.a")
        step([gxx, "-O2", "-g", "-Wall", "-fPIC", "-shared", f"-I{inc}",
              "-x", "c", str(ENGINES / "rocks_ext.c"), "-x", "none",
              "-o", str(d / f"rocks_ext{suffix}"),
              "-static-libstdc++", "-static-libgcc", "-Wl,--exclude-libs,ALL",
              f"-L{lib}", "-Wl,-Bstatic", "-lrocksdb", "-Wl,-Bdynamic",
              "-lgflags", "-lsnappy", "-lz", "-lbz2", "-llz4", "-lzstd", "-lpthread", "-ldl"],
             "linking rocks_ext with librocksdb.a")
        (d / "rebuilt-pic.txt").write_text("".join(m + "\n" for m in members))
        for p in ("lib", "src", "pic"):
            shutil.rmtree(d / p, ignore_errors=True)

    tag = re.sub(r"[^\w.]+", "_", f"{'-'.join(suffix.strip('.').split('-')[:2])}-rocksdb{rocksdb}")
    d = built(f"rocks_ext-{tag}", ["rocks_ext.c"], build)
    return py, d


def test_python_imports_a_static_rocksdb_binding_late(tmp_path):
    """1.5 s into the run the interpreter imports rocks_ext, RocksDB linked
    into it, and writes 37 synced puts: the module is found when it is
    mapped, probed through its .symtab before the first put; writes,
    leaders and WAL syncs equal RocksDB's own tickers."""
    py, d = need(build_rocks_ext, "the static binding needs g++, python3-dev, "
                 "librocksdb-dev, and for its rebuilt objects cmake, dpkg-dev and "
                 "RocksDB's Debian source")
    so = next(d.glob("rocks_ext.*.so"))
    n = 37
    s, log = traced(tmp_path, [py, str(ENGINES / "rocks_late.py"), str(d),
                               str(tmp_path / "db"), str(n), "1.5"])
    assert f"puts {n}" in log, log[-2000:]
    st = db_bench_stats(log)
    assert st["rocksdb.number.keys.written"] == n
    assert s["writes"]["count"] == n == st["rocksdb.write.self"] + st["rocksdb.write.other"]
    assert s["groups"]["leaders"] == st["rocksdb.write.self"]
    assert s["wal"]["sync"]["count"] == st["rocksdb.wal.synced"] == n
    # the interpreter's own _sqlite3 is probed from the start, in case it
    # is imported; it never was, and every write is RocksDB's
    assert s["engine"] == "rocksdb" and "rocksdb" in s["engines_found"]
    assert not s.get("by_engine"), s.get("by_engine")
    obj = rocksdb_object(s)
    assert obj["path"] == str(so) and obj["symbols"] == ".symtab", obj
    assert obj["how"] in LATE and obj["probes"] > 0 and obj["failed"] == 0, obj
    assert obj["seen_ns"] > 1e9 and obj["seen_ns"] < obj["attached_ns"], obj
    w = pd.read_parquet(tmp_path / "o" / "writes.parquet")
    assert len(w) == n and (w["engine"] == "rocksdb").all()


# -- one-shot command-line tools --------------------------------------------

def wal_records(db: Path) -> list[tuple[int, int]]:
    """(sequence, keys) of each write batch in the DB's live WAL files, as
    RocksDB's own `ldb dump_wal` reads them."""
    recs = []
    for wal in sorted(db.glob("*.log")):
        out = subprocess.run(["ldb", "dump_wal", f"--walfile={wal}"], capture_output=True,
                             text=True, check=True).stdout
        recs += [(int(m.group(1)), int(m.group(2)))
                 for m in re.finditer(r"(?m)^(\d+),(\d+),", out)]
    return recs


def test_ldb_put_and_batchput(tmp_path):
    """`ldb put` creates a database and writes one key; `ldb batchput` then
    writes five keys in one batch: each run is one write, unsynced (ldb's
    default WriteOptions), as the WAL it leaves records."""
    ldb = need(lambda: tool("ldb"), "ldb (rocksdb-tools)")
    db = tmp_path / "db"
    for run in ("put", "batch"):
        (tmp_path / run).mkdir()
    s, log = traced(tmp_path / "put", [ldb, f"--db={db}", "--create_if_missing",
                                       "put", "k0", "v0"])
    assert "OK" in log
    assert wal_records(db) == [(1, 1)]
    assert s["writes"]["count"] == 1 and s["groups"]["leaders"] == 1
    assert s["wal"]["sync"]["count"] == 0
    assert s["engines_found"] == ["rocksdb"]
    obj = rocksdb_object(s)
    assert obj["how"] == "start" and obj["symbols"] == ".dynsym", obj

    kv = [x for i in range(1, 6) for x in (f"k{i}", f"v{i}")]
    s, log = traced(tmp_path / "batch", [ldb, f"--db={db}", "batchput", *kv])
    assert "OK" in log
    assert wal_records(db) == [(2, 5)]   # the put's WAL was recovered and flushed
    assert s["writes"]["count"] == 1 and s["groups"]["leaders"] == 1
    assert s["wal"]["sync"]["count"] == 0
    w = pd.read_parquet(tmp_path / "batch" / "o" / "writes.parquet")
    assert len(w) == 1
    scan = subprocess.run([ldb, f"--db={db}", "scan"], capture_output=True, text=True,
                          check=True).stdout.split("\n")
    assert [ln for ln in scan if ln] == [f"k{i} : v{i}" for i in range(6)]


def change_counter(path: Path) -> int:
    """SQLite's file change counter (header offset 24): one more at each
    write transaction's commit in rollback-journal mode."""
    return struct.unpack(">I", path.read_bytes()[24:28])[0]


def test_sqlite3_shell_runs_a_script(tmp_path):
    """`sqlite3 FILE SCRIPT`: a CREATE TABLE, 2 autocommit INSERTs, 3
    explicit transactions of 4 INSERTs each, and reads: 6 write
    transactions, as the database's change counter says."""
    sqlite3 = need(lambda: tool("sqlite3"), "the sqlite3 shell")
    auto, txns, rows = 2, 3, 4
    script = ["CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT);"]
    script += [f"INSERT INTO t (v) VALUES ('auto {i}');" for i in range(auto)]
    script += ["SELECT count(*) FROM t;"]
    for t in range(txns):
        script += ["BEGIN;", *(f"INSERT INTO t (v) VALUES ('txn {t} row {r}');"
                               for r in range(rows)), "COMMIT;"]
    script += ["SELECT count(*) FROM t;"]
    f = tmp_path / "t.db"
    s, log = traced(tmp_path, [sqlite3, str(f), " ".join(script)])
    assert log.split() == [str(auto), str(auto + txns * rows)], log
    writes = 1 + auto + txns
    assert change_counter(f) == writes
    assert s["engine"] == "sqlite" and s["engines_found"] == ["sqlite"]
    assert s["writes"]["count"] == writes
    sq = s["sqlite"]
    assert sq["explicit"] == txns and sq["autocommit"] == 1 + auto and sq["rollbacks"] == 0
    assert sq["db_sync"]["count"] == writes   # synchronous=FULL, DELETE journal
    obj = next(o for o in s["objects"] if o["engine"] == "sqlite")
    assert obj["how"] == "start" and obj["symbols"] == ".dynsym", obj
    w = pd.read_parquet(tmp_path / "o" / "writes.parquet")
    assert len(w) == writes and int(w["explicit"].sum()) == txns


def test_the_plain_command_puts_its_run_folder_under_runs(tmp_path):
    """`sudo ./trace_wal.py -- db_bench ...` with no -o and no --mode, from
    the user's directory: one run folder, runs/<stamp>-db_bench there
    (runfolder/files.py RUNS_DIR), every write of a short synced run
    recorded, as many as RocksDB's statistics count."""
    p = run_trace(["-q", "--", "db_bench", "--benchmarks=fillrandom", "--num=300",
                   "--sync=true", "--statistics", f"--db={tmp_path / 'db'}"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    folders = list((tmp_path / "runs").iterdir())
    assert len(folders) == 1 and folders[0].name.endswith("-db_bench"), folders
    s = json.loads((folders[0] / "summary.json").read_text())
    stats = db_bench_stats((folders[0] / "command.log").read_text())
    assert s["mode"] == "budget"
    assert s["writes"]["count"] == stats["rocksdb.write.self"] + stats["rocksdb.write.other"] == 300
