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
    return p, s, db_bench_stats((d / "o" / "command.log").read_text()), d / "o"


def test_headline_takes_the_untouched_lens_where_rows_are_distrusted(unsynced_run):
    p, s, _, _ = unsynced_run
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
    _, s, st, _ = unsynced_run
    u = s["untouched"]
    rocksdb = st["rocksdb.write.self"] + st["rocksdb.write.other"]
    assert rocksdb == THREADS * PER_THREAD
    assert u["writes_untouched"] + u["window_rows"] <= 1.05 * rocksdb
    assert 0.8 * rocksdb <= u["writes_untouched"] / u["untouched_share"] <= 1.25 * rocksdb
    # the whole run's writes, by the bytes written (write syscalls, the
    # budget's estimate, read 7% high on one such run)
    assert 0.9 * rocksdb <= u["writes_total"] <= 1.1 * rocksdb


def test_serve_reads_the_same_untouched_lens_live(unsynced_run, tmp_path):
    """serve's live headline (runners/command/live_lens.py), fed the run's
    records a read at a time as the feeder feeds it, finds the untouched
    lens the analysis found in the same folder: the same mean, interval
    and verdict (the live one has no samples or symbols: its on-CPU time is
    one component), and takes it by the same rule."""
    import numpy as np
    from analysis import components
    from analysis.compensation import load as load_calibration
    from analysis.writes import writes_frame_from
    from runfolder import records as R
    from runfolder.files import RunFolder
    from runners.command.live_lens import LiveLens, RowTotals

    _, s, _, run_dir = unsynced_run
    folder = RunFolder(run_dir)
    layout, cal = R.Layout.of(folder), load_calibration(run_dir)
    live = LiveLens(layout, cal)
    writes = R.read_records(folder, "ws_write_rec")
    wall = R.read_records(folder, "ws_wall_rec")
    lines = folder.windows_tsv.read_text().splitlines()
    comps = components.names("rocksdb", layout)
    for k in range(8):        # eight reads, each a slice of every record file
        w = writes[k * len(writes) // 8:(k + 1) * len(writes) // 8]
        frame = writes_frame_from(w, cal, "rocksdb", len(s["environment"]["cpu_types"]),
                                  layout=layout)
        live.add_rows("rocksdb", frame, RowTotals("rocksdb", cal.band).add(frame, comps))
        live.add_wall(wall[k * len(wall) // 8:(k + 1) * len(wall) // 8])
        live.add_lines(lines[k * len(lines) // 8:(k + 1) * len(lines) // 8])
    h = live.headline("rocksdb")
    u, want = h["untouched"], s["untouched"]
    assert u["available"] == want["available"] and u["trusted"] == want["trusted"]
    assert u["mean_ns"] == pytest.approx(want["mean_ns"], rel=1e-9)
    assert (u["lo_ns"], u["hi_ns"]) == pytest.approx((want["lo_ns"], want["hi_ns"]), rel=1e-9)
    assert sum(u["components"].values()) == pytest.approx(u["mean_ns"], rel=1e-6)
    if u["trusted"]:
        assert h["lens"] == "untouched" and h["mean_ns"] == u["mean_ns"] and h["trusted"]
    assert not np.isnan(h["mean_ns"])
    # and weighs the rows as the same sample: the same rows in the same
    # windows, by the same method (its span is the records held, not the
    # run; its rows' compensation, read a slice at a time, differs from the
    # whole file's where a slice cuts a chain of waits: 1% here)
    got, want = h["rows_sample"], s["rows_sample"]
    assert (got["census"], got["rows"], got["windows"]) == \
        (want["census"], want["rows"], want["windows"]), (got, want)
    if not want["census"]:
        assert got["method"] == want["method"]
        assert (got["lo_ns"], got["hi_ns"]) == pytest.approx((want["lo_ns"], want["hi_ns"]),
                                                             rel=0.05, nan_ok=True)


def test_a_process_attached_mid_run_counts_its_windows_bytes_from_the_open(tmp_path):
    """-p on a db_bench that has written for a while: its writer threads
    were made long before the first window, so a window opened before the
    attach found them unswept at its open and counts for them only from
    an edge it saw; their bytes per write then match the WAL's bytes per
    recorded write.  (Taking such a thread's first sweep for its birth
    counted its whole life's bytes in the first window: ~5,000 bytes a
    write against ~150, and an interval of +-1900%.)"""
    import subprocess
    import time
    db = tmp_path / "db"
    bench = subprocess.Popen(["db_bench", f"--db={db}", "--benchmarks=fillrandom",
                              f"--num={12 * PER_THREAD}", f"--threads={THREADS}",
                              "--sync=false"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120     # bounds a failure: it waits for the WAL
        while sum(f.stat().st_size for f in db.glob("*.log")) < (1 << 20) \
                if db.exists() else True:
            assert bench.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        p = run_trace(["-o", str(tmp_path / "o"), "-p", str(bench.pid)], timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
    finally:
        if bench.poll() is None:
            bench.kill()
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    u = s["untouched"]
    assert u["available"], u.get("why")
    per_write = 1 / u["writes_per_unit"]
    wal = s["wal"]["write"]["bytes"] / s["writes"]["count"]
    assert 0.5 <= per_write / wal <= 2.0, (per_write, wal, u)
