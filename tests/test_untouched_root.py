"""The untouched lens in the plain command (no --mode): RocksDB's
default WriteOptions (sync=false), four threads on this machine's cores,
where the probes cost as much as a write and the self-check distrusts the
rows.  The writes the lens counts between windows are checked against
RocksDB's own statistics; how close its mean comes to the untraced
workload's own timing is bench/truth.py's (a tolerance in a timed test
would be noise here)."""
from __future__ import annotations

import json

import pytest

from tests.conftest import db_bench_stats, run_trace

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

THREADS, PER_THREAD = 4, 40000


@pytest.fixture(scope="module")
def unsynced_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("untouched")
    p = run_trace(["-o", str(d / "o"), "--", "db_bench", f"--db={d}/db",
                   "--benchmarks=fillrandom", f"--num={PER_THREAD}", f"--threads={THREADS}",
                   "--sync=false", "--statistics"], timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    s = json.loads((d / "o" / "summary.json").read_text())
    return p, s, db_bench_stats((d / "o" / "command.log").read_text())


def test_headline_takes_the_untouched_lens_where_rows_are_distrusted(unsynced_run):
    p, s, _ = unsynced_run
    u, h = s["untouched"], s["headline"]
    assert s["mode"] == "budget" and not s["budget"]["every_write"]
    assert u["available"], u.get("why")
    assert u["writer_threads"] == THREADS and u["unit"] == "bytes"
    # the mean from the untouched lens where it is trusted; a p99 only
    # from rows their self-check trusts
    assert h["lens"] == ("untouched" if u["trusted"] else "rows")
    assert (h["p99_ns"] is not None) == s["self_check"]["trusted"]
    if h["lens"] == "untouched":
        assert h["mean_ns"] == u["mean_ns"]
        assert p.stdout.index("answer: the untouched lens") < p.stdout.index("rows (recorded")
    # every part of the mean is a component of it
    assert sum(u["components"].values()) == pytest.approx(u["mean_ns"], rel=1e-6)


def test_writes_between_windows_as_rocksdb_counts_them(unsynced_run):
    """The writes the lens finds in the untouched time (bytes written there
    at the windows' writes per byte) are that share of RocksDB's writes:
    no more than all of them with the rows, and, scaled by the untouched
    share of the writers' time, all of them (the touched stretches ran
    slower, so a little over)."""
    _, s, st = unsynced_run
    u = s["untouched"]
    rocksdb = st["rocksdb.write.self"] + st["rocksdb.write.other"]
    assert rocksdb == THREADS * PER_THREAD
    assert u["writes_untouched"] + u["window_rows"] <= 1.05 * rocksdb
    assert 0.8 * rocksdb <= u["writes_untouched"] / u["untouched_share"] <= 1.25 * rocksdb
    # the whole run's writes, by the bytes written (write syscalls, the
    # budget's estimate, read 7% high on one such run)
    assert 0.9 * rocksdb <= u["writes_total"] <= 1.1 * rocksdb
