"""Probe-overhead mechanics: calibration, and drops that are counted, never silent."""
from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest

from collectors import calibration
from tests.conftest import TRACE, db_bench_stats

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build


def test_calibration_positive_and_consistent():
    """What a run relies on, not how stable this VM's timing is: every figure
    positive, the median inside its rounds' range, the parts adding up.  How
    far two calibrations apart differ (2.15x once on CI) is a benchmark's
    figure: bench/calibration_spread.py."""
    a = calibration.measure(iterations=3000, rounds=1)   # (medians of 3 would not add up)
    for k in ("uprobe_ns", "pair_ns", "pair_in_ns", "one_ns"):
        assert a[k] > 0, (k, a)
        for half in ("warm", "cold"):
            assert a[half][k] > 0 and a[half][k + "_spread"] >= 0, (k, half, a[half])
        lo, hi = sorted((a["warm"][k], a["cold"][k]))
        assert lo <= a[k] <= hi, (k, a)
    # a pair costs at least an entry probe; in + out add up to the pair
    assert a["pair_ns"] >= 0.8 * a["one_ns"]
    assert abs(a["pair_in_ns"] + a["pair_out_ns"] - a["pair_ns"]) <= 1
    assert 0 <= a["tracepoint_ns"] < a["uprobe_ns"]
    assert abs(a["band"]) < 1


def test_forced_drops_are_counted_and_shown(tmp_path):
    p = subprocess.run(TRACE + ["-q", "--mode", "full", "--ringbuf-kb", "4", "-o", str(tmp_path / "o"), "--",
                                "db_bench", f"--db={tmp_path}/db", "--benchmarks=fillrandom",
                                "--num=30000", "--threads=2", "--sync=false", "--statistics"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    lost = s["lost_events"]
    assert sum(lost.values()) > 0
    assert "events lost" in p.stderr
    # every write is either a row or a counted loss: nothing vanishes silently
    w = pd.read_parquet(tmp_path / "o" / "writes.parquet")
    st = db_bench_stats((tmp_path / "o" / "command.log").read_text())
    assert len(w) + lost["write"] == st["rocksdb.number.keys.written"] == 60000


@pytest.mark.parametrize("mode", ["sample", "writes"])
def test_no_drops_at_full_speed(tmp_path, mode):
    """The default ring buffer keeps up with the fastest workload here: in
    sample mode (the fastest writes) and writes mode (the most records)."""
    p = subprocess.run(TRACE + ["-q", "--mode", mode, "-o", str(tmp_path / "o"), "--",
                                "db_bench", f"--db={tmp_path}/db", "--benchmarks=fillrandom",
                                "--num=200000", "--threads=4", "--sync=false"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert sum(s["lost_events"].values()) == 0
    if mode == "writes":   # every write and its WAL write(2) is a record
        assert s["writes"]["count"] == 800000
        assert s["wal"]["write"]["count"] > 10000
    else:   # nothing on the scheduler: threads' time from the kernel's accounting
        assert "offcpu_stacks" not in s
        assert s["thread_time"]["roles"]["foreground"]["threads"] >= 4
        assert s["sample_breakdown"]["wal_write_io"]["samples"] > 10


def test_uretprobe_syscalls_are_not_charged_twice(tmp_path):
    """Since Linux 6.11 the uretprobe trampoline enters the kernel through
    uretprobe(2): bpftrace counts those syscalls on db_bench's threads, while
    write records count no untraced syscall for them (the calibrated probe
    cost holds that syscall already; db_bench's writes make none but
    write(2), as strace -c shows)."""
    from tests.conftest import BpftraceTotals, ensure_tracefs
    ensure_tracefs()
    bt = BpftraceTotals('tracepoint:raw_syscalls:sys_enter /comm == "db_bench" '
                        '&& args->id == 335/ { @n = count(); }', ("n",), tmp_path / "bt.out")
    try:
        p = subprocess.run(TRACE + ["-q", "--mode", "full", "-o", str(tmp_path / "o"), "--",
                                    "db_bench", f"--db={tmp_path}/db", "--benchmarks=fillrandom",
                                    "--num=5000", "--threads=1", "--sync=false"],
                           capture_output=True, text=True, timeout=300)
        n = bt.totals()["n"]
    finally:
        bt.stop()
    assert p.returncode == 0, p.stderr
    w = pd.read_parquet(tmp_path / "o" / "writes.parquet", columns=["untraced_syscalls"])
    assert len(w) == 5000
    assert n >= 4 * len(w), n   # WriteImpl, WriteToWAL, AddRecord, InsertInto... return
    assert w["untraced_syscalls"].sum() <= 0.01 * len(w), w["untraced_syscalls"].sum()


def test_a_costly_mode_is_flagged_while_the_workload_runs(tmp_path):
    """full mode on an unsynced workload: the warning names the rate seen in
    the first second and the cheaper mode."""
    p = subprocess.run(TRACE + ["--mode", "full", "-o", str(tmp_path / "o"), "--", "db_bench",
                                f"--db={tmp_path}/db", "--benchmarks=fillrandom",
                                "--num=150000", "--threads=1", "--sync=false"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    live = [l for l in p.stderr.splitlines() if "in the first second" in l]
    assert live and "default mode (budget)" in live[0], p.stderr[-2000:]
    # the synced workload's rate is far below: no warning
    q = subprocess.run(TRACE + ["-q", "--mode", "full", "-o", str(tmp_path / "o2"), "--",
                                "db_bench", f"--db={tmp_path}/db2", "--benchmarks=fillrandom",
                                "--num=3000", "--threads=1", "--sync=true"],
                       capture_output=True, text=True, timeout=300)
    assert q.returncode == 0 and "in the first second" not in q.stderr, q.stderr[-2000:]
