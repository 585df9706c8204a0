"""The untouched lens (analysis/untouched.py) on constructed wall sweeps,
windows and samples, and the headline's rule (analysis/answer.py) on
constructed summaries.  The end-to-end check, against RocksDB's own count
of writes, is tests/test_untouched_root.py."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import answer, untouched
from analysis import syscalls
from tests.conftest import GOLDEN

MS = 1_000_000
US = 1_000
SETTLE = GOLDEN.enum_values("ws_tuning")["WS_SETTLE_NS"]
STATES = GOLDEN.enum_values("ws_wall_state")
FUTEX = syscalls.number("futex", GOLDEN) if "futex" in GOLDEN.syscalls().values() else 202
EPOLL = 232   # epoll_wait on x86_64


def sweeps(tids: list[int], end_ns: int, every_ns: int, write_ns: int, bytes_per_write: int,
           oncpu: float, runq: float, blocked_nr: int | list[int], thread: str = "db_bench"
           ) -> pd.DataFrame:
    """Each thread swept every every_ns: its on-CPU and runnable time grow
    at those shares of the wall time, a write every write_ns of
    bytes_per_write bytes; the state found alternates between the syscalls
    in blocked_nr (blocked) when the thread is not on a CPU."""
    nrs = blocked_nr if isinstance(blocked_nr, list) else [blocked_nr]
    rows = []
    for tid in tids:
        for i, t in enumerate(range(0, end_ns + 1, every_ns)):
            rows.append({"ts_ns": t, "pid": tids[0], "tid": tid,
                         "state": STATES["WS_WALL_BLOCKED"],
                         "oncpu_ns": int(t * oncpu), "runq_ns": int(t * runq),
                         "syscw": t // write_ns, "wchar": t // write_ns * bytes_per_write,
                         "sys_nr": nrs[i % len(nrs)], "sys_kind": 0, "thread": thread})
    return pd.DataFrame(rows).sort_values(["tid", "ts_ns"], ignore_index=True)


def frame(starts: np.ndarray, who: np.ndarray, dur_ns: float = 1000.0,
          adj_ns: float | None = None) -> pd.DataFrame:
    """Recorded rows: start, thread, raw and compensated duration."""
    return pd.DataFrame({"start_ns": starts, "tid": who, "dur_ns": dur_ns,
                         "dur_adj_ns": dur_ns if adj_ns is None else adj_ns})


def one_window(open_ns: int, close_ns: int) -> pd.DataFrame:
    return pd.DataFrame([{"open_ns": open_ns, "close_ns": close_ns, "detached_ns": close_ns,
                          "attach_us": 0, "detach_us": 0, "uprobes": 1, "late": 0}])


def rows_in(window: tuple[int, int], tids: list[int], write_ns: int) -> tuple[np.ndarray,
                                                                            np.ndarray]:
    starts = np.concatenate([np.arange(window[0], window[1], write_ns) for _ in tids])
    return starts, np.repeat(tids, len(starts) // len(tids))


def samples(tids: list[int], end_ns: int, shares: dict[str, float], n: int = 1000
            ) -> pd.DataFrame:
    comps = [c for c, f in shares.items() for _ in range(round(f * n))]
    comps = [comps[j] for j in np.random.default_rng(0).permutation(len(comps))]
    ts = np.linspace(0, end_ns, len(comps), endpoint=False).astype(np.int64)
    return pd.DataFrame({"ts_ns": ts, "tid": [tids[i % len(tids)] for i in range(len(comps))],
                         "component": comps, "symbol": ["x"] * len(comps)})


def test_mean_and_components_of_closed_loop_writers():
    """Two writers, a write every 10 us each (100 B), on a CPU half their
    time, runnable a fifth, blocked in a futex the rest: 10 us a write,
    split 5 on-CPU (3 memtable, 2 other by the samples), 2 runnable, 3 the
    leader wait; one window's rows give the writes a byte stands for."""
    tids, end, write = [11, 12], 3000 * MS, 10 * US
    wall = sweeps(tids, end, 10 * MS, write, 100, 0.5, 0.2, FUTEX)
    win = (1000 * MS, 1100 * MS)
    starts, who = rows_in(win, tids, write)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who),
                       samples(tids, end, {"memtable": 0.6, "other": 0.4}), GOLDEN)
    assert u["available"] and u["unit"] == "bytes", u
    assert u["mean_ns"] == pytest.approx(10 * US, rel=0.02)
    c = u["components"]
    assert c["memtable"] == pytest.approx(3 * US, rel=0.05)
    assert c["other"] == pytest.approx(2 * US, rel=0.05)
    assert c["sched_runq"] == pytest.approx(2 * US, rel=0.02)
    assert c["queue"] == pytest.approx(3 * US, rel=0.02)
    assert u["lo_ns"] <= u["mean_ns"] <= u["hi_ns"]
    # the window, its settle and the sweep pairs across them are left out
    touched = (win[1] + SETTLE - win[0]) + 2 * 10 * MS
    assert u["untouched_s"] * 1e9 == pytest.approx(2 * (end - touched), rel=0.01)
    assert u["trusted"]


def test_run_queue_time_is_placed_where_the_writer_waited():
    """Sweeps that find a writer runnable say where its wait for a CPU
    belongs: preempted in user code, the function's component (the
    samples' rules); woken in a futex not yet returned, the leader wait.
    Three quarters preempted in MemTable::Add, a quarter woken in a futex:
    runq_split is memtable 0.75, queue 0.25; sched_runq itself stays."""
    tids, end, write = [31, 32], 3000 * MS, 10 * US
    wall = sweeps(tids, end, 10 * MS, write, 100, 0.5, 0.2, FUTEX)
    wall["user_symbol"] = ""
    runq = wall.index % 4 != 0   # every sweep runnable: 3 of 4 preempted
    wall.loc[:, "state"] = STATES["WS_WALL_RUNQ"]
    wall.loc[runq, "sys_nr"] = -1
    wall.loc[runq, "user_symbol"] = ("rocksdb::MemTable::Add(unsigned long, "
                                     "rocksdb::ValueType, rocksdb::Slice const&)")
    win = (1000 * MS, 1100 * MS)
    starts, who = rows_in(win, tids, write)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who), None, GOLDEN)
    assert u["runq_sweeps"] >= untouched.MIN_RUNQ_SWEEPS
    assert u["runq_split"] == pytest.approx({"memtable": 0.75, "queue": 0.25}, abs=0.02)
    assert u["components"]["sched_runq"] == pytest.approx(2 * US, rel=0.02)


def test_few_runnable_sweeps_place_nothing():
    """Under MIN_RUNQ_SWEEPS sweeps that found a writer runnable: no split."""
    tids, end, write = [41], 3000 * MS, 10 * US
    wall = sweeps(tids, end, 10 * MS, write, 100, 0.5, 0.2, FUTEX)
    few = wall.index[5:5 + untouched.MIN_RUNQ_SWEEPS - 1]
    wall.loc[few, "state"] = STATES["WS_WALL_RUNQ"]
    win = (1000 * MS, 1100 * MS)
    starts, who = rows_in(win, tids, write)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who), None, GOLDEN)
    assert u["runq_split"] == {} and 0 < u["runq_sweeps"] < untouched.MIN_RUNQ_SWEEPS


def test_idle_time_is_no_writes():
    """A backend blocked half of its blocked time waiting for its client
    (epoll_wait): that half is idle, not in a write."""
    tids, end, write = [21], 3000 * MS, 10 * US
    wall = sweeps(tids, end, 10 * MS, write, 100, 0.4, 0.0, [FUTEX, EPOLL])
    win = (1000 * MS, 1100 * MS)
    starts, who = rows_in(win, tids, write)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who), None, GOLDEN)
    assert u["idle_share_of_blocked"] == pytest.approx(0.5, abs=0.02)
    # 4 us on a CPU + half of 6 us blocked
    assert u["mean_ns"] == pytest.approx(7 * US, rel=0.03)
    assert "idle" not in u["components"]


def test_writes_per_byte_come_from_the_windows():
    """Writes twice as large between windows as inside would halve the
    count: the lens takes the windows' bytes a write, and says its unit."""
    tids, end = [31], 2000 * MS
    wall = sweeps(tids, end, 10 * MS, 10 * US, 200, 0.5, 0.0, FUTEX)
    win = (500 * MS, 600 * MS)
    # twice the rows the bytes say: each write is read as 100 B
    starts, who = rows_in(win, tids, 5 * US)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who), None, GOLDEN)
    assert u["mean_ns"] == pytest.approx(5 * US, rel=0.03)


@pytest.mark.parametrize("case,why", [
    ("no_wall", "no wall sweeps"), ("no_windows", "no windows"),
    ("few_rows", "too few writes inside windows")])
def test_no_lens_says_why(case, why):
    tids, end = [41], 2000 * MS
    wall = sweeps(tids, end, 10 * MS, 10 * US, 100, 0.5, 0.0, FUTEX)
    win = one_window(500 * MS, 600 * MS)
    starts, who = rows_in((500 * MS, 600 * MS), tids, 10 * US)
    if case == "no_wall":
        wall = wall.iloc[:0]
    elif case == "no_windows":
        win = win.iloc[:0]
    else:
        starts, who = starts[:5], who[:5]
    u = untouched.lens(wall, "rocksdb", win, frame(starts, who), None, GOLDEN)
    assert not u["available"] and why in u["why"]


def test_mostly_touched_is_not_trusted():
    """Windows over most of the run: the lens is given, not trusted."""
    tids, end = [51], 1000 * MS
    wall = sweeps(tids, end, 10 * MS, 10 * US, 100, 0.5, 0.0, FUTEX)
    win = (100 * MS, 800 * MS)
    starts, who = rows_in(win, tids, 10 * US)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who), None, GOLDEN)
    assert u["available"] and not u["trusted"] and "untouched" in u["distrust"]


def summary(rows_trusted: bool, rows_mean: float, u_mean: float | None,
            u_trusted: bool = True) -> dict:
    s = {"engine": "rocksdb",
         "writes": {"count": 1000, "duration_adj": {"mean_ns": rows_mean, "p99_ns": 9e5}},
         "components": {"queue": {"mean_ns": rows_mean}},
         "self_check": {"trusted": rows_trusted, "tolerance": 0.15}}
    if u_mean is not None:
        s["untouched"] = {"available": True, "mean_ns": u_mean, "lo_ns": u_mean * 0.95,
                          "hi_ns": u_mean * 1.05, "components": {"queue": u_mean},
                          "trusted": u_trusted, "untouched_share": 0.9,
                          "distrust": None if u_trusted else "its interval is +-40%"}
    return s


def test_headline_takes_the_untouched_mean_and_the_trusted_rows_p99():
    """Both trusted: the mean from the untouched lens, the p99 from the rows."""
    h = answer.headline(summary(True, 100e3, 98e3))
    assert h["lens"] == "untouched" and h["mean_ns"] == 98e3 and h["trusted"]
    assert h["p99_ns"] == 9e5 and "rows' p99" in h["p99_why"]
    assert not h["disagree"] and h["other"]["lens"] == "rows"


def test_headline_takes_trusted_rows_without_an_untouched_lens():
    h = answer.headline(summary(True, 100e3, 98e3, u_trusted=False))
    assert h["lens"] == "rows" and h["mean_ns"] == 100e3 and h["p99_ns"] == 9e5
    assert h["trusted"] and "+-40%" in h["why"]
    h = answer.headline(summary(True, 100e3, None))
    assert h["lens"] == "rows" and h["other"] is None


def test_headline_takes_the_untouched_lens_where_rows_are_distrusted():
    h = answer.headline(summary(False, 50e3, 30e3))
    assert h["lens"] == "untouched" and h["trusted"] and h["mean_ns"] == 30e3
    assert h["p99_ns"] is None and "not measurable" in h["p99_why"]
    assert h["disagree"] and h["other"] == {"lens": "rows", "mean_ns": 50e3, "p99_ns": 9e5}


def test_headline_trusts_neither():
    h = answer.headline(summary(False, 50e3, 30e3, u_trusted=False))
    assert h["lens"] == "rows" and not h["trusted"] and "+-40%" in h["why"]
    assert h["p99_ns"] is None


def test_a_folder_from_before_headlines_reads_as_rows():
    s = summary(True, 100e3, None)
    assert "headline" not in s
    assert answer.headline_of(s)["lens"] == "rows"
    assert answer.headline(summary(False, 0, None) | {"writes": {"count": 0}}) is None


def test_a_writer_born_inside_a_window_counts_from_zero():
    """A thread born inside a window (its counters start at 0, its first
    sweep comes later) counts its rows there against its bytes from 0; had
    its first sweep been read as the window's open, its rows would have no
    bytes and the writes a byte stands for would read high."""
    end, write = 3000 * MS, 10 * US
    old = sweeps([61], end, 10 * MS, write, 100, 0.5, 0.0, FUTEX)
    born = 1050 * MS
    new = sweeps([62], end - born, 10 * MS, write, 100, 0.5, 0.0, FUTEX)
    new = new[new["ts_ns"] >= 20 * MS].copy()   # first swept 20 ms after its birth
    new["ts_ns"] += born
    wall = pd.concat([old, new]).sort_values(["tid", "ts_ns"], ignore_index=True)
    win = (1000 * MS, 1100 * MS)
    s1, w1 = rows_in(win, [61], write)
    s2 = np.arange(born, win[1], write)
    starts = np.concatenate([s1, s2])
    who = np.concatenate([w1, np.full(len(s2), 62)])
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who), None, GOLDEN)
    assert u["writes_per_unit"] == pytest.approx(1 / 100, rel=0.02)
    assert u["mean_ns"] == pytest.approx(10 * US, rel=0.03)


def test_the_share_inside_writes_comes_from_the_windows_rows():
    """A write every 10 us, traced 6 us of it, of which 1 us its probes'
    (compensated 5 us): untraced, 5 us of every 9 us are in the write; the
    lens's per-op mean is the writer's time per write, its in-write mean
    that share of it."""
    tids, end, write = [71], 3000 * MS, 10 * US
    wall = sweeps(tids, end, 10 * MS, write, 100, 0.5, 0.0, FUTEX)
    win = (1000 * MS, 1100 * MS)
    starts, who = rows_in(win, tids, write)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who, 6 * US, 5 * US),
                       None, GOLDEN)
    assert u["in_write_share"] == pytest.approx(5 / 9, rel=0.01)
    assert u["in_write_mean_ns"] == pytest.approx(u["mean_ns"] * 5 / 9, rel=1e-6)
    # a probe pair's cost outside each row's span is the probes' too
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who, 6 * US, 5 * US),
                       None, GOLDEN, outside_ns=1 * US)
    assert u["in_write_share"] == pytest.approx(5 / 8, rel=0.01)


def test_diff_leads_with_each_runs_headline():
    """walscope diff's answers: each run's headline (a folder from before
    headlines reads as its rows), their difference, and whether they come
    from one lens."""
    from analysis.diff import answers
    from viz.diff import answer_lines
    a = summary(False, 50e3, 30e3)
    a["headline"] = answer.headline(a)
    b = summary(True, 40e3, None)          # no headline written: its rows
    d = answers(a, b)
    assert d["A"]["lens"] == "untouched" and d["B"]["lens"] == "rows"
    assert d["delta_ns"] == pytest.approx(10e3) and not d["same_lens"]
    lines = answer_lines(d, "write")
    assert "compare with care" in lines[3] and max(map(len, lines)) <= 80


def test_a_thread_that_wrote_only_in_the_set_up_is_no_writer_after():
    """The SQLite driver's main thread loads the database, then waits for
    its clients in a futex: its wait is no transaction's time (with it,
    the lens read 1.5-1.9x the driver's own mean)."""
    end, write = 3000 * MS, 10 * US
    client = sweeps([81], end, 10 * MS, write, 100, 0.5, 0.0, FUTEX)
    setup = sweeps([80], end, 10 * MS, write, 100, 0.5, 0.0, FUTEX)
    stop = setup["ts_ns"] >= 200 * MS          # it stops writing at 200 ms
    setup.loc[stop, "wchar"] = setup.loc[~stop, "wchar"].max()
    setup.loc[stop, "syscw"] = setup.loc[~stop, "syscw"].max()
    wall = pd.concat([client, setup]).sort_values(["tid", "ts_ns"], ignore_index=True)
    win = (1000 * MS, 1100 * MS)
    s1, w1 = rows_in((100 * MS, 150 * MS), [80, 81], write)   # the set-up's and a client's
    s2, w2 = rows_in(win, [81], write)
    wins = pd.DataFrame([{"open_ns": 100 * MS, "close_ns": 150 * MS, "detached_ns": 150 * MS,
                          "attach_us": 0, "detach_us": 0, "uprobes": 1, "late": 0},
                         {"open_ns": win[0], "close_ns": win[1], "detached_ns": win[1],
                          "attach_us": 0, "detach_us": 0, "uprobes": 1, "late": 0}])
    u = untouched.lens(wall, "rocksdb", wins, frame(np.concatenate([s1, s2]),
                                                    np.concatenate([w1, w2])), None, GOLDEN)
    assert u["writer_threads"] == 2
    assert u["mean_ns"] == pytest.approx(10 * US, rel=0.05)


def test_the_writes_per_byte_of_few_windows_have_a_sane_error():
    """Three windows, one tiny and off: the error is the windows' spread
    weighted by their size (a bootstrap over three windows drew the tiny
    one thrice); one window: a count's own error."""
    n, u = np.array([12.0, 157, 376]), np.array([465.0, 4096, 9556])
    e = untouched.ratio_error(n, u)
    assert 1 / np.sqrt(545) <= e < 0.1
    assert untouched.ratio_error(np.array([400.0]), np.array([40000.0])) == \
        pytest.approx(1 / np.sqrt(400))
    assert untouched.ratio_error(np.array([0.0]), np.array([0.0])) == float("inf")


def test_a_writer_born_after_a_window_is_not_in_it():
    """A client born after the only window closed (first swept later) adds
    no bytes to that window: its bytes there would read the writes a byte
    stands for low, and the lens's mean high."""
    end, write = 6000 * MS, 10 * US
    old = sweeps([91], end, 10 * MS, write, 100, 0.5, 0.0, FUTEX)
    born = 4995 * MS
    new = sweeps([92], end - born, 10 * MS, write, 100, 0.5, 0.0, FUTEX)
    new["ts_ns"] += born
    wall = pd.concat([old, new]).sort_values(["tid", "ts_ns"], ignore_index=True)
    win = (1000 * MS, 1050 * MS)
    starts, who = rows_in(win, [91], write)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who), None, GOLDEN)
    assert u["writes_per_unit"] == pytest.approx(1 / 100, rel=0.01)


def io_in(window: tuple[int, int], tids: list[int], write_ns: int, lat_ns: int,
          waited_ns: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A WAL fdatasync of lat_ns at each write call inside the window, the
    last waited_ns of it runnable (woken, waiting for a CPU)."""
    starts, who = rows_in(window, tids, write_ns)
    io = pd.DataFrame({"ts_ns": starts + 1 * US, "tid": who, "lat_ns": lat_ns,
                       "syscall": "fdatasync", "kind": "wal"})
    runq = pd.DataFrame({"ts_ns": io["ts_ns"] + lat_ns, "tid": who, "dur_ns": waited_ns})
    return io, runq


def test_the_io_split_comes_from_the_windows_syscalls():
    """The sweeps never find a writer in its sync (a sweep runs late where
    the writers hold the CPUs: on RocksDB's synced groups, while a leader
    syncs), but the window's own syscalls time every sync: 2 us a write
    call, 0.5 us of it runnable.  Blocked 3 us a write: 1.5 us is the
    WAL sync, the rest the leader wait; the sync's runnable wait stays in
    sched_runq and is said in io_per_call.  Without the syscalls the
    sweeps alone put it all in the wait (the old split)."""
    tids, end, write = [51, 52], 3000 * MS, 10 * US
    wall = sweeps(tids, end, 10 * MS, write, 100, 0.5, 0.2, FUTEX)
    win = (1000 * MS, 1100 * MS)
    starts, who = rows_in(win, tids, write)
    io, runq = io_in(win, tids, write, 2 * US, US // 2)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who), None, GOLDEN,
                       0.0, io, runq)
    c = u["components"]
    assert u["mean_ns"] == pytest.approx(10 * US, rel=0.02)
    assert c["wal_sync_io"] == pytest.approx(1.5 * US, rel=0.03)
    assert c["queue"] == pytest.approx(1.5 * US, rel=0.03)
    assert c["sched_runq"] == pytest.approx(2 * US, rel=0.02)
    per = u["io_per_call"]["wal_sync_io"]
    assert per["time"] == pytest.approx(1.5 * US, rel=0.01)
    assert per["runq"] == pytest.approx(0.5 * US, rel=0.01)
    old = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who), None, GOLDEN)
    assert "wal_sync_io" not in old["components"]
    assert old["components"]["queue"] == pytest.approx(3 * US, rel=0.02)


def test_io_longer_than_the_blocked_time_takes_no_more_than_it():
    """A window whose syncs took longer a call than the untouched writers
    were blocked (a slower moment of the device), on-CPU time split by
    samples that saw no sync: the I/O takes all the blocked time, never
    more, and the mean stays the writers' time."""
    tids, end, write = [61], 3000 * MS, 10 * US
    wall = sweeps(tids, end, 10 * MS, write, 100, 0.5, 0.2, FUTEX)
    win = (1000 * MS, 1100 * MS)
    starts, who = rows_in(win, tids, write)
    io, runq = io_in(win, tids, write, 5 * US, 0)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who),
                       samples(tids, end, {"memtable": 1.0}), GOLDEN, 0.0, io, runq)
    c = u["components"]
    assert u["mean_ns"] == pytest.approx(10 * US, rel=0.02)
    assert c["wal_sync_io"] == pytest.approx(3 * US, rel=0.02)
    assert c.get("queue", 0.0) == pytest.approx(0.0, abs=1.0)


def test_a_syncs_own_cpu_time_comes_from_unsplit_cpu_time():
    """A sync longer a call than the writer was blocked (its kernel time
    on the CPU: a VM's I/O path), with too few samples to split on-CPU
    time: what the blocked time cannot hold comes from the unsplit
    on-CPU time, never more than it."""
    tids, end, write = [71], 3000 * MS, 10 * US
    wall = sweeps(tids, end, 10 * MS, write, 100, 0.5, 0.2, FUTEX)
    win = (1000 * MS, 1100 * MS)
    starts, who = rows_in(win, tids, write)
    io, runq = io_in(win, tids, write, 5 * US, 0)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who), None, GOLDEN,
                       0.0, io, runq)
    c = u["components"]
    assert c["wal_sync_io"] == pytest.approx(5 * US, rel=0.02)
    assert c[untouched.ONCPU_UNSPLIT] == pytest.approx(3 * US, rel=0.03)
    assert u["mean_ns"] == pytest.approx(10 * US, rel=0.02)
    io, runq = io_in(win, tids, write, 9 * US, 0)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who), None, GOLDEN,
                       0.0, io, runq)
    assert u["components"]["wal_sync_io"] == pytest.approx(8 * US, rel=0.02)
    assert u["components"].get(untouched.ONCPU_UNSPLIT, 0) == pytest.approx(0, abs=1)


def test_run_queue_waits_the_sweeps_place_only_in_the_io_go_to_other():
    """Every runnable sweep found a writer woken in its WAL sync, but the
    windows' syscalls say a quarter of the run-queue time is the sync's
    (0.5 us a call of 2 us a write): the quarter is the sync's, and the
    rest, which no sweep placed outside the I/O, is other; the split
    adds up to 1."""
    tids, end, write = [81, 82], 3000 * MS, 10 * US
    fdatasync = syscalls.number("fdatasync", GOLDEN)
    wal = next(k for k, v in GOLDEN.file_kinds().items() if v == "wal")
    wall = sweeps(tids, end, 10 * MS, write, 100, 0.5, 0.2, fdatasync)
    wall["state"] = STATES["WS_WALL_RUNQ"]
    wall["sys_kind"] = wal
    wall["user_symbol"] = ""
    win = (1000 * MS, 1100 * MS)
    starts, who = rows_in(win, tids, write)
    io, runq = io_in(win, tids, write, 2 * US, US // 2)
    u = untouched.lens(wall, "rocksdb", one_window(*win), frame(starts, who), None, GOLDEN,
                       0.0, io, runq)
    assert u["runq_split"] == pytest.approx({"wal_sync_io": 0.25, "other": 0.75}, abs=0.01)
    assert sum(u["runq_split"].values()) == pytest.approx(1.0)


def commit_sweeps(tids: list[int], end_ns: int, every_ns: int, write_ns: int,
                  pages: np.ndarray, syncs_per_write: float) -> pd.DataFrame:
    """sweeps()'s writers, whose writes each pass pages[i] 4 KB pages to
    write syscalls and sync a log syncs_per_write times (cumulative,
    rounded down: 1/3 is a sync every third write)."""
    wall = sweeps(tids, end_ns, every_ns, write_ns, 0, 0.3, 0.1, FUTEX)
    done = (wall["ts_ns"] // write_ns).to_numpy()
    cum = np.concatenate([[0], np.cumsum(pages)]) * 4096
    wall["wchar"] = cum[np.minimum(done, len(pages))]
    wall["log_syncs"] = (done * syncs_per_write).astype(np.int64)
    return wall


def test_writes_are_counted_by_log_syncs_where_they_count_them_better():
    """SQLite's WAL at synchronous=full: a commit syncs the log once, and
    writes 1-12 pages.  Counted by bytes, three windows' writes per byte
    stand for the whole run only as well as those stretches' mix of
    commits; counted by syncs, exactly.  Where a sync serves three writes
    on average but irregularly (a group commit) and every write is the same
    size, bytes count better and stay the unit."""
    tids, end, write = [11, 12], 6000 * MS, 2 * MS
    rng = np.random.default_rng(3)
    pages = rng.integers(1, 13, size=end // write + 1)
    wall = commit_sweeps(tids, end, 10 * MS, write, pages, 1.0)
    wins = [(1000 * MS, 1100 * MS), (3000 * MS, 3100 * MS), (5000 * MS, 5100 * MS)]
    windows = pd.concat([one_window(*w) for w in wins], ignore_index=True)
    starts, who = zip(*(rows_in(w, tids, write) for w in wins))
    rows = frame(np.concatenate(starts), np.concatenate(who))
    u = untouched.lens(wall, "sqlite", windows, rows, None, GOLDEN)
    assert u["available"] and u["unit"] == "syncs", u
    assert u["mean_ns"] == pytest.approx(2 * MS, rel=0.02)
    assert "writes per log sync" in u["derived"]
    by_bytes = untouched.lens(wall.drop(columns="log_syncs"), "sqlite", windows, rows, None,
                              GOLDEN)
    assert by_bytes["unit"] == "bytes"
    assert abs(by_bytes["mean_ns"] / (2 * MS) - 1) > abs(u["mean_ns"] / (2 * MS) - 1)
    # same-size writes, a sync every one to five writes: bytes count better
    grouped = commit_sweeps(tids, end, 10 * MS, write, np.full(end // write + 1, 3), 1.0)
    every = np.cumsum(rng.integers(1, 6, size=end // write + 1))
    done = (grouped["ts_ns"] // write).to_numpy()
    grouped["log_syncs"] = np.searchsorted(every, done, side="right")
    g = untouched.lens(grouped, "sqlite", windows, rows, None, GOLDEN)
    assert g["unit"] == "bytes" and g["mean_ns"] == pytest.approx(2 * MS, rel=0.02)


def test_a_client_asleep_for_its_lock_all_run_is_in_the_mean_but_not_a_sleeper_beside_writers():
    """Two closed-loop clients in their own processes: one writes a
    transaction every 10 us, on a CPU all the time; the other, starved of
    the lock, sleeps in the busy handler (nanosleep) all run and writes
    nothing.  Both are the clients' time: the mean is 2 x 10 us over the
    writer's transactions (a driver's clock of every transaction it began
    reads that too).  A thread asleep beside a writer in its own process
    (a runtime's timer thread) is no client, and adds nothing."""
    nanosleep = syscalls.number("nanosleep", GOLDEN)
    end, write = 3000 * MS, 10 * US
    writer = sweeps([21], end, 10 * MS, write, 100, 1.0, 0.0, FUTEX, thread="python3")
    starved = sweeps([31], end, 10 * MS, 10**15, 100, 0.0, 0.0, nanosleep, thread="python3")
    win = (1000 * MS, 1100 * MS)
    starts, who = rows_in(win, [21], write)
    rows = frame(starts, who)
    both = pd.concat([writer, starved]).sort_values(["tid", "ts_ns"], ignore_index=True)
    u = untouched.lens(both, "sqlite", one_window(*win), rows, None, GOLDEN)
    assert u["available"] and u["asleep_threads"] == 1, u
    assert u["mean_ns"] == pytest.approx(2 * write, rel=0.03), u["derived"]
    assert u["asleep_s"] == pytest.approx(u["untouched_s"] / 2, rel=0.03)
    # the same sleeper in the writer's process: not a client
    beside = starved.assign(pid=21)
    both = pd.concat([writer, beside]).sort_values(["tid", "ts_ns"], ignore_index=True)
    u = untouched.lens(both, "sqlite", one_window(*win), rows, None, GOLDEN)
    assert u["asleep_threads"] == 0 and u["mean_ns"] == pytest.approx(write, rel=0.03), u
    # nor another program's, in its own process (a runner asleep while a
    # server starts): only a writer's name is a client's
    other = starved.assign(thread="runner")
    both = pd.concat([writer, other]).sort_values(["tid", "ts_ns"], ignore_index=True)
    u = untouched.lens(both, "sqlite", one_window(*win), rows, None, GOLDEN)
    assert u["asleep_threads"] == 0 and u["mean_ns"] == pytest.approx(write, rel=0.03), u


def test_writers_that_wait_for_their_clients_are_not_trusted():
    """A server's writers, found waiting for their client (epoll_wait) in
    half of their blocked sweeps: the lens leaves that wait out as idle,
    but a transaction's span holds its client's round trips (pgbench's
    backends: one run's mean read 0.57 of pgbench's own clock, trusted).
    Given, not trusted, and the reason says so."""
    tids, end, write = [41, 42], 3000 * MS, 10 * US
    wall = sweeps(tids, end, 10 * MS, write, 100, 0.3, 0.0, [EPOLL, FUTEX], thread="postgres")
    win = (1000 * MS, 1100 * MS)
    starts, who = rows_in(win, tids, write)
    u = untouched.lens(wall, "postgres", one_window(*win), frame(starts, who), None, GOLDEN)
    assert u["available"] and u["idle_share_of_blocked"] == pytest.approx(0.5, abs=0.05), u
    assert not u["trusted"] and "waited for a client" in u["distrust"], u
    # the same writers waiting on each other (a leader's futex): trusted
    wall = sweeps(tids, end, 10 * MS, write, 100, 0.3, 0.0, FUTEX, thread="postgres")
    u = untouched.lens(wall, "postgres", one_window(*win), frame(starts, who), None, GOLDEN)
    assert u["trusted"], u["distrust"]
