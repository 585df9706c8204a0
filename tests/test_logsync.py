"""The log-sync engine (issue 46): SQLite compiled into a stripped program,
so that none of its functions is named, traced with the plain command.
Its commits come from its log's syscalls alone: one row per commit in
WAL mode with synchronous=FULL (the WAL's sync ends it; a checkpoint's
sync is a row of its own, marked) and in DELETE mode (the journal's
unlink ends it), against the program's own count of its commits."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import ROOT, run_trace

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

STATIC = Path("/usr/lib/x86_64-linux-gnu/libsqlite3.a")
INSERTS = 80
# the program's commits: its CREATE TABLE, then one per INSERT
COMMITS = 1 + INSERTS
PROGRAM = r'''
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	sqlite3 *db;
	char sql[128];
	int i, n = atoi(argv[3]);

	if (sqlite3_open(argv[1], &db))
		return 1;
	snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s; PRAGMA synchronous=FULL;",
		 argv[2]);
	if (sqlite3_exec(db, sql, 0, 0, 0) ||
	    sqlite3_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)", 0, 0, 0))
		return 2;
	for (i = 0; i < n; i++) {
		snprintf(sql, sizeof sql, "INSERT INTO t(v) VALUES ('row %d')", i);
		if (sqlite3_exec(db, sql, 0, 0, 0))
			return 3;
	}
	return sqlite3_close(db);
}
'''


@pytest.fixture(scope="module")
def stripped(tmp_path_factory) -> Path:
    if not STATIC.exists() or not shutil.which("cc"):
        pytest.skip(f"{STATIC} and cc (libsqlite3-dev, build-essential; ./setup.sh has them)")
    d = tmp_path_factory.mktemp("stripped")
    (d / "sq.c").write_text(PROGRAM)
    exe = d / "sqlite_stripped"
    subprocess.run(["cc", "-O2", str(d / "sq.c"), str(STATIC), "-lm", "-lpthread", "-ldl",
                    "-o", str(exe)], check=True)
    subprocess.run(["strip", "--strip-all", str(exe)], check=True)
    syms = subprocess.run(["nm", "-D", str(exe)], capture_output=True, text=True).stdout
    assert "sqlite3_step" not in syms and b"SQLite format 3" in exe.read_bytes()
    return exe


def traced(tmp_path: Path, exe: Path, journal: str) -> tuple[dict, pd.DataFrame]:
    db = tmp_path / "t.db"
    p = run_trace(["-q", "-o", str(tmp_path / "o"), "--", str(exe), str(db), journal,
                   str(INSERTS)])
    assert p.returncode == 0, p.stderr[-3000:]
    assert "none of its functions are named (stripped)" in p.stderr, p.stderr
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["mode"] == "budget" and s["engine"] == "logsync", (s["mode"], s.get("engine"))
    return s, pd.read_parquet(tmp_path / "o" / "writes.parquet")


def test_wal_synchronous_full_one_row_per_commit(tmp_path, stripped):
    s, w = traced(tmp_path, stripped, "wal")
    commits = w[~w["during_checkpoint"]]
    assert len(w) >= INSERTS
    # and two more: the switch to WAL is a commit of the rollback journal,
    # and a new WAL's header is synced apart from its first commit's frames
    assert COMMITS <= len(commits) <= COMMITS + 2, len(commits)
    # every commit wrote its WAL and synced it, itself
    assert (commits["log_write_io_ns"] > 0).all() and (commits["log_sync_io_ns"] > 0).all()
    assert commits["leader"].all()
    # the log's bytes, once: no more than the program wrote to its logs
    # (the WAL, and the rollback journal of the switch to WAL)
    io = pd.read_parquet(tmp_path / "o" / "io.parquet")
    wal = io[io["kind"].isin(["wal", "journal"]) & io["syscall"].str.contains("write")
             ]["bytes"].sum()
    assert 0 < w["wal_bytes"].sum() <= wal, (w["wal_bytes"].sum(), wal)


def test_delete_journal_one_row_per_commit(tmp_path, stripped):
    s, w = traced(tmp_path, stripped, "delete")
    assert len(w) == COMMITS, len(w)
    # the journal written and synced, the database synced, the journal unlinked
    for c in ("log_write_io_ns", "log_sync_io_ns", "data_sync_io_ns", "log_lifecycle_ns"):
        assert (w[c] > 0).all(), c
    assert not w["during_checkpoint"].any()


# A program that holds SQLite's mark and none of its functions, and keeps
# its own log: COMMITS writes of a "-wal" file, each a commit.  Opened
# O_DSYNC (argv[2] "dsync"), each write is durable when it returns, so it
# is its own sync; opened plainly and never synced, its writes are bursts.
DSYNC_PROGRAM = r'''
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
const char mark[] = "SQLite format 3";
int main(int argc, char **argv)
{
	int n = 50, i, fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC |
				 (strcmp(argv[2], "dsync") ? 0 : O_DSYNC), 0644);
	char page[4096];

	memset(page, 'x', sizeof page);
	if (fd < 0)
		return 1;
	for (i = 0; i < n; i++)
		if (pwrite(fd, page, sizeof page, (off_t)i * sizeof page) != sizeof page)
			return 2;
	return close(fd) || mark[0] != 'S';
}
'''
DSYNC_WRITES = 50


def compiled(tmp_path_factory, name: str, source: str) -> Path:
    """A C program built into a temporary folder (skipped without cc)."""
    if not shutil.which("cc"):
        pytest.skip("cc (build-essential; ./setup.sh has it)")
    d = tmp_path_factory.mktemp(name)
    (d / f"{name}.c").write_text(source)
    exe = d / name
    subprocess.run(["cc", "-O2", str(d / f"{name}.c"), "-o", str(exe)], check=True)
    return exe


@pytest.fixture(scope="module")
def own_log(tmp_path_factory) -> Path:
    return compiled(tmp_path_factory, "own_log", DSYNC_PROGRAM)


@pytest.mark.parametrize("opened", ["dsync", "plain"])
def test_a_log_opened_o_dsync_syncs_at_each_write(tmp_path, own_log, opened):
    """Each write to a log opened O_DSYNC is a commit of its own (its time
    the log's sync, its writer the one that synced); the same writes to a
    log opened plainly and never synced are one burst."""
    p = run_trace(["-q", "-o", str(tmp_path / "o"), "--", str(own_log),
                   str(tmp_path / "t.db-wal"), opened])
    assert p.returncode == 0, p.stderr[-3000:]
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["engine"] == "logsync", s.get("engine")
    w = pd.read_parquet(tmp_path / "o" / "writes.parquet")
    if opened == "dsync":
        assert len(w) == DSYNC_WRITES, len(w)
        assert (w["log_sync_io_ns"] > 0).all() and (w["log_write_io_ns"] == 0).all()
        assert w["leader"].all() and not w["during_checkpoint"].any()
        assert (w["wal_bytes"] == 4096).all()
    else:
        assert len(w) == 1, len(w)
        assert w["log_write_io_ns"].iloc[0] > 0 and w["log_sync_io_ns"].iloc[0] == 0
        assert w["wal_bytes"].iloc[0] == DSYNC_WRITES * 4096


# A program that holds no engine at all and keeps its own log: each commit
# a write and an fdatasync of argv[1]
OWN_LOG_PROGRAM = r'''
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int i, fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char rec[512];

	memset(rec, 'r', sizeof rec);
	for (i = 0; fd >= 0 && i < 40; i++)
		if (write(fd, rec, sizeof rec) != sizeof rec || fdatasync(fd))
			return 2;
	return fd < 0 || close(fd);
}
'''
OWN_LOG_COMMITS = 40


@pytest.fixture(scope="module")
def app_log(tmp_path_factory) -> Path:
    return compiled(tmp_path_factory, "app_log", OWN_LOG_PROGRAM)


def test_a_log_named_with_log_file_gives_a_row_per_commit(tmp_path, app_log):
    """No engine in the program: --log-file names its log (by a suffix,
    under its directory's name), and each write-and-sync is a row; the same
    file unnamed is no log, and the run has no rows."""
    logs = tmp_path / "journal"
    logs.mkdir()
    p = run_trace(["-q", "-o", str(tmp_path / "o"), "--log-file", "/any/journal/*.dat",
                   "--", str(app_log), str(logs / "app.dat")])
    assert p.returncode == 0, p.stderr[-3000:]
    assert "no engine found: its commits come from the logs --log-file names" in p.stderr
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["engine"] == "logsync"
    w = pd.read_parquet(tmp_path / "o" / "writes.parquet")
    assert len(w) == OWN_LOG_COMMITS, len(w)
    assert (w["log_write_io_ns"] > 0).all() and (w["log_sync_io_ns"] > 0).all()
    assert (w["wal_bytes"] == 512).all() and w["leader"].all()
    io = pd.read_parquet(tmp_path / "o" / "io.parquet")
    assert set(io[io["path"].str.endswith("app.dat")]["kind"]) == {"wal"}
    # another directory's name: not the log the user named
    q = run_trace(["-q", "-o", str(tmp_path / "q"), "--log-file", "journal/*.dat",
                   "--", str(app_log), str(tmp_path / "app.dat")])
    assert q.returncode != 0 and not (tmp_path / "q" / "writes.parquet").exists(), q.stderr


def test_a_glob_walscope_cannot_follow_is_one_line(tmp_path):
    p = run_trace(["-o", str(tmp_path / "o"), "--log-file", "a*/b*.log", "--", "true"])
    assert p.returncode != 0 and p.stderr.count("\n") == 1, p.stderr
    assert "--log-file a*/b*.log: a wildcard in its directory" in p.stderr
    assert not (tmp_path / "o").exists()
