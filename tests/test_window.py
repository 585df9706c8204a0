"""--mode window: full's exact rows for the writes that begin inside short
windows at random moments, sampling between.  Rows keep every invariant of
full mode, counts inside windows are exact, the schedule is what was asked,
and a stop inside a window leaves nothing attached."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import windows as W
from tests.conftest import TRACE, BpftraceTotals, db_bench_stats, ensure_tracefs, run_trace
from tests.test_faults import ours_attached

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build
LIB = "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8"
# every write's leader and fdatasync, stamped with the write's start
# (bpftrace's nsecs is CLOCK_MONOTONIC, the clock windows.tsv is in), and
# every write counted, to show bpftrace saw them all
LEADERS_BT = f"""
uprobe:{LIB}:_ZN7rocksdb6DBImpl9WriteImplE* /comm == "db_bench"/ {{
	@start[tid] = nsecs; @writes = count(); }}
uretprobe:{LIB}:_ZN7rocksdb6DBImpl9WriteImplE* /comm == "db_bench"/ {{ delete(@start[tid]); }}
uprobe:{LIB}:*EnterAsBatchGroupLeader* /@start[tid]/ {{ printf("L %lld\\n", @start[tid]); }}
tracepoint:syscalls:sys_enter_fdatasync /@start[tid]/ {{ printf("S %lld\\n", @start[tid]); }}
"""
COMPONENTS = ["other", "queue", "crc", "wal_append", "wal_write_io", "wal_sync_io",
              "memtable", "sched_runq"]


@pytest.fixture(scope="module")
def windowed(tmp_path_factory):
    d = tmp_path_factory.mktemp("window")
    p = run_trace(["-q", "--mode", "window", "--window-ms", "100", "--window-duty", "0.25",
                   "-o", str(d / "o"), "--", "db_bench", f"--db={d}/db",
                   "--benchmarks=fillrandom", "--num=40000", "--threads=2", "--sync=true"],
                  timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return d / "o"


def test_rows_keep_full_modes_invariants(windowed):
    w = pd.read_parquet(windowed / "writes.parquet")
    s = json.loads((windowed / "summary.json").read_text())
    assert len(w) > 1000
    assert (sum(w[f"{c}_ns"] for c in COMPONENTS) == w["dur_ns"]).all()
    assert not w["truncated"].any() and not w["partial"].any()   # none cut at a close
    assert s["tracking_gaps"]["phase_mismatch"] == 0
    assert all(v == 0 for v in s["lost_events"].values())
    # every write began inside a window, and each window recorded some (but
    # the last, which may open as db_bench finishes)
    win = W.read_windows(windowed)
    where = W.window_of(w["start_ns"].to_numpy(), win)
    assert (where >= 0).all()
    assert set(range(len(win) - 1)) <= set(where.tolist()) and len(win) > 5
    # counts inside windows are exact: a synced group's leader syncs the WAL once
    assert s["groups"]["leaders"] == s["wal"]["sync"]["count"] > 0
    assert s["groups"]["followers"] > 0


def test_the_schedule_is_the_one_asked_for(windowed):
    win = W.read_windows(windowed)
    length = (win["close_ns"] - win["open_ns"]) / 1e6
    # every window but one the end of the run closed
    assert ((length[:-1] >= 100) & (length[:-1] < 125)).all(), length.tolist()
    assert length.iloc[-1] < 125
    # closed time between windows: mean 300 ms, each stretch of 400 ms
    # holding one window at a uniformly random place; its sample mean within
    # four standard errors of an exponential gap's (a looser bound than the
    # stretches need), plus the drain and detach
    gaps = (win["open_ns"].to_numpy()[1:] - win["detached_ns"].to_numpy()[:-1]) / 1e6
    assert abs(gaps.mean() - 300) < 4 * 300 / np.sqrt(len(gaps)) + 5, gaps.mean()
    # no stretch goes without a window: from a detach to the next open is at
    # most the rest of its stretch and the next one's free part (2 x 300
    # ms), counted to when the open began (before its attach), plus a poll
    # and the detach's own work; exponential gaps of mean 300 pass 600 ms
    # one time in 7.4
    began = win["open_ns"].to_numpy()[1:] - win["attach_us"].to_numpy()[1:] * 1000
    waits = (began - win["detached_ns"].to_numpy()[:-1]) / 1e6
    slack = 20 + win["detach_us"].max() / 1e3 + 5
    assert waits.max() < 2 * 300 + slack, (waits.tolist(), slack)
    s = json.loads((windowed / "summary.json").read_text())["windows"]
    assert s["attach_us"] > 0 and s["detach_us"] > 0
    # the share of the run inside windows is the duty asked for: within 20%,
    # or within 3 standard errors of a Poisson schedule when the run is too
    # short for that (n exponential gaps: their sum's sd is mean * sqrt(n))
    n, dur = len(win), length.sum() / 1e3
    gap_s = 0.3 * n
    se = dur * 0.3 * np.sqrt(n) / (dur + gap_s) ** 2
    assert abs(s["duty"] - 0.25) <= max(0.2 * 0.25, 3 * se), (s["duty"], se)
    assert s["attached_share"] >= s["duty"]


def test_estimates_have_intervals_across_windows(windowed):
    est = json.loads((windowed / "summary.json").read_text())["windows"]["estimates"]
    for c in ("dur", "wal_sync_io", "queue"):
        assert est[c]["lo_ns"] <= est[c]["mean_ns"] <= est[c]["hi_ns"], (c, est[c])
    assert est["dur"]["hi_ns"] > est["dur"]["lo_ns"]


def test_counts_inside_windows_match_bpftrace(tmp_path):
    """Leaders and WAL syncs of the writes that began inside a window, as
    bpftrace counts them on its own probes, against walscope's rows: equal
    but for a write at a window's edge (bpftrace's stamp and walscope's
    admission are a few hundred ns apart): at most one each side of a window."""
    ensure_tracefs()
    printed = tmp_path / "bpftrace.out"
    bt = BpftraceTotals(LEADERS_BT, ("writes",), printed)
    try:
        p = run_trace(["-q", "--mode", "window", "--window-ms", "100", "--window-duty",
                       "0.3", "-o", str(tmp_path / "o"), "--", "db_bench",
                       f"--db={tmp_path}/db", "--benchmarks=fillrandom", "--num=5000",
                       "--threads=4", "--sync=true"], timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        seen = bt.totals()["writes"]
    finally:
        bt.stop()
    out = printed.read_text()
    assert "Lost" not in out, out[-500:]
    assert seen == 20000, out[-500:]   # saw every write
    win = W.read_windows(tmp_path / "o")
    assert len(win) >= 3
    leaders = np.array([int(l[2:]) for l in out.splitlines() if l.startswith("L ")])
    syncs = np.array([int(l[2:]) for l in out.splitlines() if l.startswith("S ")])
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    w = pd.read_parquet(tmp_path / "o" / "writes.parquet", columns=["leader"])
    slack = 2 * len(win)
    for name, stamps, ours in (("leaders", leaders, int(w["leader"].sum())),
                               ("WAL syncs", syncs, s["wal"]["sync"]["count"])):
        inside = int((W.window_of(stamps, win) >= 0).sum())
        assert inside > 100, name
        assert abs(inside - ours) <= slack, (name, inside, ours, slack)


def tsv_fields(run_dir: Path) -> list[list[str]]:
    """windows.tsv's lines, each split into its fields."""
    return [line.split("\t") for line in (run_dir / "windows.tsv").read_text().splitlines()]


def schedule_lines(path: Path) -> list[str]:
    """windows.tsv's open and close lines (not the budget's cost lines)."""
    lines = path.read_text().splitlines() if path.exists() else []
    return [line for line in lines if line.startswith(("open", "close"))]


@pytest.mark.parametrize("mode", [["--mode", "window", "--window-ms", "2000",
                                   "--window-duty", "0.9"], []], ids=["window", "default"])
def test_a_stop_inside_a_window_leaves_nothing_attached(tmp_path, mode):
    """Ctrl-C while a window is open (the default mode's first window holds
    every write until the budget is spent): its writes end, its probes go."""
    out = tmp_path / "o"
    proc = subprocess.Popen(TRACE + ["-q", *mode, "-o", str(out), "--",
                                     "db_bench", f"--db={tmp_path}/db",
                                     "--benchmarks=fillrandom", "--num=100000000",
                                     "--sync=true", "--threads=2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 300
        while True:   # until a window is open, with writes going on in it
            lines = schedule_lines(out / "windows.tsv")
            if lines and lines[-1].startswith("open") and (out / "writes.bin").exists() \
                    and (out / "writes.bin").stat().st_size > 0:
                break
            assert time.monotonic() < end and proc.poll() is None, "no window opened"
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in err
    assert ours_attached() == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["interrupted"] and s["writes"]["count"] > 0
    assert s["tracking_gaps"]["phase_mismatch"] == 0
    assert schedule_lines(out / "windows.tsv")[-1].startswith("close")
    assert (out / "windows.tsv").read_text().splitlines()[-1].startswith("end")


@pytest.mark.parametrize("wrapped", [False, True], ids=["direct", "sh -c"])
def test_the_writes_of_a_short_run_are_counted_once(tmp_path, wrapped):
    """The plain command on a 0.2 s db_bench: every write for the burst, a
    window or none, then the process exits.  The writes it did not record
    are estimated from the write syscalls of its threads, each counted at
    its exit too: read from /proc every 100 ms, the reaped process's last
    writes were missing (21,291 of 30,000 here), and under `sh -c` the
    shell's count held its reaped child's again (600,152 syscalls for
    300,000 writes)."""
    n = 30_000
    bench = f"db_bench --db={tmp_path}/db --benchmarks=fillrandom --num={n} " \
            "--sync=false --threads=1 --statistics"
    cmd = ["sh", "-c", bench + "; true"] if wrapped else bench.split()
    p = run_trace(["-q", "-o", str(tmp_path / "o"), "--", *cmd], timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    stats = db_bench_stats((tmp_path / "o" / "command.log").read_text())
    assert stats["rocksdb.number.keys.written"] == n
    b = s["budget"]
    # windows were closed on some of the writes, which the syscalls estimate
    # (and, where the untouched lens had its windows, the bytes written)
    assert not b["every_write"] and "syscall" in b["estimated_from"], b
    assert abs(b["estimated_total"] - n) < 0.05 * n, b


def test_the_default_backs_off_a_fast_workload_and_counts_what_it_missed(tmp_path):
    """The plain command on unsynced db_bench: every write for the budget's
    burst, then windows; the writes it did not record are estimated, and
    the estimate is checked against RocksDB's own count."""
    n = 400_000
    p = run_trace(["-q", "-o", str(tmp_path / "o"), "--", "db_bench", f"--db={tmp_path}/db",
                   "--benchmarks=fillrandom", f"--num={n}", "--sync=false", "--threads=1",
                   "--statistics"], timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    stats = db_bench_stats((tmp_path / "o" / "command.log").read_text())
    b = s["budget"]
    assert s["mode"] == "budget" and not b["every_write"]
    assert b["cost_max"] > b["budget"]        # why it backed off
    assert 0 < b["recorded"] < stats["rocksdb.number.keys.written"] == n
    assert abs(b["estimated_total"] - n) < 0.2 * n, b
    assert "syscall" in b["estimated_from"]
    assert "recorded:" in p.stdout and "budget 2%" in p.stdout
    # the start's burst is lent: the first window waits until the budget
    # has repaid what the start spent, at least the 25 ms of credit
    lines = tsv_fields(tmp_path / "o")
    kinds = [f[0] for f in lines]
    first_close = kinds.index("close")
    assert kinds[first_close + 1:first_close + 3].count("repay") == 1, lines[:12]
    repay = next(f for f in lines[first_close:] if f[0] == "repay")
    assert int(repay[2]) >= 25e6 / 0.02, repay
    opens = [int(f[1]) for f in lines if f[0] == "open"]
    assert all(o >= int(repay[1]) + int(repay[2]) for o in opens[1:]), (repay, opens)


LONG_TXNS = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("CREATE TABLE t(x)")
for i in range(8):              # transactions longer than a window and its drain
    con.execute("BEGIN")
    con.execute("INSERT INTO t VALUES (?)", (i,))
    time.sleep(1.3)
    con.execute("COMMIT")
print("long done", time.clock_gettime_ns(time.CLOCK_MONOTONIC), flush=True)
end = time.monotonic() + 3      # then short ones, windows opening and closing
while time.monotonic() < end:
    con.execute("INSERT INTO t VALUES (0)")
    time.sleep(0.002)
"""


@pytest.mark.root
def test_a_row_cut_by_its_windows_end_does_not_hold_later_windows(tmp_path):
    """A transaction still running when its window's drain gives up (1 s)
    is let go: later windows close as soon as their own rows end (close
    lines' in-flight count 0 once the long transactions are over), and no
    row runs on into a later window's transaction."""
    (tmp_path / "w.py").write_text(LONG_TXNS)
    p = run_trace(["-q", "--mode", "window", "--window-ms", "200", "--window-duty", "0.5",
                   "-o", str(tmp_path / "o"), "--", "python3", str(tmp_path / "w.py"),
                   str(tmp_path / "t.db")])
    assert p.returncode == 0, p.stderr
    done = int(re.search(r"long done (\d+)", (tmp_path / "o" / "command.log").read_text())
               .group(1))
    closes = [line.split("\t") for line in
              (tmp_path / "o" / "windows.tsv").read_text().splitlines()
              if line.startswith("close")]
    cut = [c for c in closes if int(c[1]) < done and int(c[4]) > 0]
    later = [c for c in closes if int(c[1]) > done + 1_100_000_000]
    if not cut:
        pytest.skip("no long transaction began inside a window (1 in 256)")
    assert later, closes
    w = pd.read_parquet(tmp_path / "o" / "writes.parquet")
    assert (w["dur_ns"] < 1.6e9).all(), w.sort_values("dur_ns").tail(3)
    assert all(int(c[4]) == 0 for c in later), later       # nothing leaked
    from analysis.summary import collector_counters
    assert collector_counters(tmp_path / "o")[0].get("rows_cut", 0) >= 1


# one thread's transaction stays open for 1.5 s (as a client that SQLite's
# busy handler starves does), begun before another thread writes fast to a
# second database: tracing every write of that costs more than the budget
# (the Python insert loop costs tracing every write far more than the 2%
# budget: the start closes within ~0.1 s, well before the slow commit at
# 1.5 s, and its drain cap is tens of ms)
STARVED_TXN = """
import sqlite3, sys, threading, time
begun = threading.Event()
def slow():
    con = sqlite3.connect(sys.argv[1], isolation_level=None)
    con.execute("CREATE TABLE IF NOT EXISTS t(x)")
    con.execute("BEGIN")
    con.execute("INSERT INTO t VALUES (1)")
    begun.set()
    time.sleep(1.5)
    con.execute("COMMIT")
t = threading.Thread(target=slow)
t.start()
begun.wait()
con = sqlite3.connect(sys.argv[2], isolation_level=None)
con.execute("PRAGMA journal_mode=memory")
con.execute("PRAGMA synchronous=off")
con.execute("CREATE TABLE t(x)")
end = time.monotonic() + 3
while time.monotonic() < end:
    con.execute("INSERT INTO t VALUES (1)")
t.join()
"""


def test_the_defaults_start_does_not_wait_a_second_for_a_starved_transaction(tmp_path):
    """The plain command: every write at first, then windows once that costs
    more than the budget.  A transaction begun in the every-write start and
    still open at its close holds the probes only as long as a window's
    edges may cost (here tens of ms), not the full second; it is let go and
    counted.  Before, the drain lasted DRAIN_MAX (1 s) while the other
    thread ran traced: in 4 s SQLite runs, 3-13% of the transactions."""
    (tmp_path / "w.py").write_text(STARVED_TXN)
    p = run_trace(["-q", "-o", str(tmp_path / "o"), "--", "python3", str(tmp_path / "w.py"),
                   str(tmp_path / "slow.db"), str(tmp_path / "fast.db")])
    assert p.returncode == 0, p.stderr[-2000:]
    lines = tsv_fields(tmp_path / "o")
    closes = [c for c in lines if c[0] == "close"]
    assert closes, lines
    first = closes[0]                  # the every-write start's close
    drain_s = (int(first[2]) - int(first[1])) / 1e9
    assert int(first[4]) >= 1, first   # the slow transaction still in flight
    assert drain_s < 0.5, first
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["windows"]["rows_cut"] >= 1, s["windows"]


def test_the_pace_checks_the_credit_before_every_write_spends_it(tmp_path):
    """The plain command on synced db_bench (every write costs this VM's
    probes 7-11%, past the 2% budget: every write on credit).  After 250
    ms of credit the probes come off for a pace check: no repay at that
    close, the next window opens once the gap has settled (80 ms) and run
    a shortest window's length (50 ms), and after it every write either
    resumes (the pace priced it, credit left) or the credit is repaid."""
    p = run_trace(["-q", "-o", str(tmp_path / "o"), "--", "db_bench", f"--db={tmp_path}/db",
                   "--benchmarks=fillrandom", "--num=8000", "--sync=true", "--threads=1"],
                  timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    lines = tsv_fields(tmp_path / "o")
    costs = [(i, f) for i, f in enumerate(lines) if f[0] == "cost"]
    # the start's stop: a check if credit was left (the bucket's tokens)
    check = next((i for i, f in costs if f[8] == "0"), None)
    # no every-write estimate before it was due a check: 250 ms of credit,
    # 10 ms of it spent by the model's price, credit left
    budget = float(next(f for f in lines if f[0] == "budget")[1])
    credit = spent = 0.0
    for i, f in costs:
        if check is not None and i >= check:
            break
        cost, period = float(f[2]), int(f[7])
        if cost <= budget:
            credit = spent = 0.0
            continue
        credit += period
        spent += period * cost / (1 + cost)
        assert not (credit >= 250e6 and spent >= 10e6 and float(f[9]) > 0), \
            ("every write went on past a check's due", f)
    if check is None or float(lines[check][9]) <= 0:
        pytest.skip("every write was within the budget or its credit ran out "
                    "before 250 ms: no check on this machine")
    after = lines[check + 1:]
    kinds = [f[0] for f in after]
    close = after[kinds.index("close")]
    opened = after[kinds.index("open")]
    assert "repay" not in kinds[:kinds.index("open")], after[:8]    # no repay at a check
    gap_ms = (int(opened[1]) - int(close[2])) / 1e6
    assert 130 <= gap_ms < 130 + 60, (close, opened)
    verdict = after[kinds.index("cost", kinds.index("open"))]
    resumed = verdict[8] == "1"
    # the check's window runs its due length, the shortest and the pace's
    # 20 ms lead, uncut: its pace counts from the lead's end
    assert "spent" not in kinds[kinds.index("open"):kinds.index("cost", kinds.index("open"))]
    assert int(verdict[1]) - int(opened[1]) >= 70e6, (opened, verdict)
    rest = kinds[kinds.index("cost", kinds.index("open")) + 1:]
    # resumed: no repay until every write stops again; else one follows
    assert resumed or "repay" in rest[:rest.index("open") if "open" in rest else None], after


# two threads take turns at one database's write lock, each holding it 4
# ms, spinning (the other sleeps in SQLite's busy handler meanwhile: the
# only sleeps inside writes), beside a fast insert loop on a second
# database that puts tracing every write well over the budget: every
# write is on credit from the first estimates.  The loop is a process of
# its own: sharing the holders' interpreter lock, it slowed to ~4,000
# inserts a second in a fresh clone's suite, every estimate but three
# stayed under the budget, and none of those three saw a sleep
SLEEPING_WRITERS = """
import sqlite3, subprocess, sys, threading, time
setup = sqlite3.connect(sys.argv[1], isolation_level=None)
setup.execute("CREATE TABLE IF NOT EXISTS t(x)")
setup.close()
stop = time.monotonic() + 1.5
FAST = '''
import sqlite3, sys, time
stop = time.monotonic() + float(sys.argv[2])
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA journal_mode=memory")
con.execute("PRAGMA synchronous=off")
con.execute("CREATE TABLE t(x)")
while time.monotonic() < stop:
    con.execute("INSERT INTO t VALUES (1)")
'''
fast = subprocess.Popen([sys.executable, "-c", FAST, sys.argv[2], "1.5"])
def holder():
    con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
    while time.monotonic() < stop:
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO t VALUES (1)")
        held = time.monotonic() + 0.004
        while time.monotonic() < held:
            pass
        con.execute("COMMIT")
holders = [threading.Thread(target=holder) for _ in range(2)]
for h in holders:
    h.start()
for h in holders:
    h.join()
sys.exit(fast.wait())
"""


def test_credit_where_writes_sleep_is_checked_at_the_first_estimate(tmp_path):
    """The plain command where writers sleep inside their writes (a lock's
    backoff: the model cannot price what they wait for).  The first
    estimate over the budget that saw such sleeps stops every write for the
    pace's check, with credit left (no repay at that close), well before
    the 250 ms of credit a check otherwise waits for; the windows.tsv
    "cost" lines count the sleeps."""
    (tmp_path / "w.py").write_text(SLEEPING_WRITERS)
    p = run_trace(["-q", "-o", str(tmp_path / "o"), "--", "python3", str(tmp_path / "w.py"),
                   str(tmp_path / "locked.db"), str(tmp_path / "fast.db")])
    assert p.returncode == 0, p.stderr[-2000:]
    lines = tsv_fields(tmp_path / "o")
    budget = float(next(f for f in lines if f[0] == "budget")[1])
    first_close = next(i for i, f in enumerate(lines) if f[0] == "close")
    start = [f for f in lines[:first_close] if f[0] == "cost"]
    credit = 0.0
    for f in start:
        cost, period, sleeps = float(f[2]), int(f[7]), int(f[10])
        credit = credit + period if cost > budget else 0.0
        if cost > budget and sleeps > 0:
            break
    else:
        raise AssertionError(("no estimate over the budget saw a sleep", start))
    assert f is start[-1], ("every write went on past a slept estimate", start)
    assert f[8] == "0" and float(f[9]) > 0, f        # stopped, credit left: a check
    assert credit < 250e6, start
    after = [g[0] for g in lines[first_close:]]
    assert "open" in after and "repay" not in after[:after.index("open")], lines[first_close:]
