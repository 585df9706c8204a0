"""analysis/windows.py on windows and writes made here: parsing a torn
windows.tsv, placing writes in windows, and intervals across windows that
widen with the windows' spread and contain the truth."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import windows as W
from runfolder.files import RunFolder


def test_a_torn_last_window_is_not_one(tmp_path):
    RunFolder(tmp_path).windows_tsv.write_text(
        "open\t1000\t50\t21\nclose\t2000\t2100\t30\t0\nopen\t5000\t40\t21\n")
    win = W.read_windows(tmp_path)
    assert len(win) == 1 and win.loc[0, "close_ns"] == 2000 and win.loc[0, "late"] == 0
    assert W.read_windows(tmp_path / "none").empty


def test_rows_let_go_ran_at_least_their_drain(tmp_path):
    """Two windows whose drains gave up (60 ms with 2 writes in flight,
    40 ms with 1), one that drained in time, and the last one closed by
    the stop (its write in flight may be a thread gone with the workload:
    counted, but no time)."""
    ms = 1_000_000
    RunFolder(tmp_path).windows_tsv.write_text(
        f"open\t0\t50\t21\nclose\t{100 * ms}\t{160 * ms}\t30\t2\n"
        f"open\t{1000 * ms}\t50\t21\nclose\t{1100 * ms}\t{1101 * ms}\t30\t0\n"
        f"open\t{2000 * ms}\t50\t21\nclose\t{2100 * ms}\t{2140 * ms}\t30\t1\n"
        f"open\t{3000 * ms}\t50\t21\nstop\t{3050 * ms}\n"
        f"close\t{3050 * ms}\t{3150 * ms}\t30\t1\nend\t{3151 * ms}\n")
    win = W.read_windows(tmp_path)
    stop = W.read_stop(tmp_path)
    assert stop == 3050 * ms and len(win) == 4
    got = W.rows_cut(win, 0, stop)
    assert got == {"rows_cut": 4, "drain_max_ns": 100 * ms,
                   "rows_cut_ns": 2 * 60 * ms + 40 * ms}
    assert W.rows_cut(win, 7, stop)["rows_cut"] == 7      # the BPF side met more
    assert W.rows_cut(win.iloc[[1]], 0, stop) == {"rows_cut": 0, "drain_max_ns": 0,
                                                  "rows_cut_ns": 0}
    assert W.rows_cut(win.iloc[:0], 0, None)["rows_cut_ns"] == 0
    assert W.rows_cut(win, 0, None)["rows_cut_ns"] == 2 * 60 * ms + 40 * ms + 100 * ms


def test_writes_fall_in_the_window_they_began_in():
    win = pd.DataFrame({"open_ns": [100, 500], "close_ns": [200, 600]})
    starts = np.array([50, 100, 199, 200, 300, 550, 700])
    assert W.window_of(starts, win).tolist() == [-1, 0, 0, -1, -1, 1, -1]


def _run(per_window_means: list[float], n: int = 50):
    rng = np.random.default_rng(7)
    opens = np.arange(len(per_window_means)) * 1_000_000
    win = pd.DataFrame({"open_ns": opens, "close_ns": opens + 100_000,
                        "detached_ns": opens + 101_000, "attach_us": 5, "detach_us": 1,
                        "uprobes": 21, "late": 0})
    rows = [(o + i, rng.normal(m, 1.0)) for o, m in zip(opens, per_window_means)
            for i in range(n)]
    writes = pd.DataFrame({"start_ns": [r[0] for r in rows],
                           "queue_adj_ns": [r[1] for r in rows]})
    writes["dur_adj_ns"] = writes["queue_adj_ns"]
    return W.summarize(win, writes, ["queue"], elapsed_s=None)


def test_intervals_come_from_the_windows_not_the_writes():
    steady = _run([100.0] * 20)["estimates"]["queue"]
    swinging = _run([50.0, 150.0] * 10)["estimates"]["queue"]
    for e in (steady, swinging):   # the truth, within the writes' own noise
        assert e["lo_ns"] - 0.5 <= 100 <= e["hi_ns"] + 0.5
        assert abs(e["mean_ns"] - 100) < 5
    # writes within a window are alike; windows differ: the interval says so
    assert (swinging["hi_ns"] - swinging["lo_ns"]) > 10 * (steady["hi_ns"] - steady["lo_ns"])
    s = _run([100.0] * 20)
    assert s["count"] == 20 and s["windows_with_writes"] == 20 and s["writes_outside"] == 0
    assert abs(s["duty"] - 0.1) < 0.01


def test_samples_that_disagree_are_flagged():
    win = pd.DataFrame({"open_ns": [0, 10], "close_ns": [5, 15]})
    writes = pd.DataFrame({"start_ns": [1, 2, 11, 12],
                           "memtable_adj_ns": [90.0, 90, 90, 90],
                           "wal_append_adj_ns": [10.0, 10, 10, 10]})
    rng = np.random.default_rng(1)
    w = W.window_of(writes["start_ns"].to_numpy(), win)
    agree = W.compare_with_samples(writes, w, 2, {"memtable": {"samples": 900},
                                                  "wal_append": {"samples": 100}}, rng)
    assert not agree["memtable"]["disagree"] and abs(agree["memtable"]["windows"] - 0.9) < 1e-9
    off = W.compare_with_samples(writes, w, 2, {"memtable": {"samples": 500},
                                                "wal_append": {"samples": 500}}, rng)
    assert off["memtable"]["disagree"] and off["wal_append+crc"]["disagree"]


def test_no_interval_from_fewer_than_ten_windows():
    """Honest small samples: nine windows give means but no interval, ten
    give one (analysis/windows.py MIN_WINDOWS)."""
    nine, ten = _run([10.0] * 9), _run([10.0] * 10)
    assert not nine["interval"] and ten["interval"]
    assert nine["estimates"]["queue"]["lo_ns"] != nine["estimates"]["queue"]["lo_ns"]  # NaN
    assert nine["estimates"]["queue"]["mean_ns"] > 0
    est = ten["estimates"]["queue"]
    assert est["lo_ns"] < est["mean_ns"] < est["hi_ns"]


def test_the_budget_lines_are_read(tmp_path):
    RunFolder(tmp_path).windows_tsv.write_text(
        "budget\t0.020000\t25000000\t10000000\t2\n"
        "open\t1000\t50\t21\n"
        "cost\t60000000\t2.500000\t0.020000\t640\t1\t6000000\t8000000\t0\t-1000\t7\n"
        "close\t60000000\t60001000\t30\t0\n"
        "end\t1060000000\n")
    assert W.read_budget(tmp_path) == {"budget": 0.02, "burst_ns": 25e6,
                                       "window_loss_ns": 10e6, "ncpu": 2}
    costs, end = W.read_costs(tmp_path)
    assert end == 1_060_000_000 and len(costs) == 1
    assert costs.loc[0, "cost"] == 2.5 and costs.loc[0, "every_write"] == 0
    assert costs.loc[0, "sleeps"] == 7
    # a run folder written before the sleeps column: its lines still read
    text = RunFolder(tmp_path).windows_tsv.read_text()
    RunFolder(tmp_path).windows_tsv.write_text(text.replace("\t-1000\t7\n", "\t-1000\n"))
    costs, _ = W.read_costs(tmp_path)
    assert len(costs) == 1 and costs.loc[0, "tokens_ns"] == -1000
    assert costs["sleeps"].isna().all()


def test_writes_between_windows_are_estimated_at_the_untraced_rate():
    """A gap after a window counts that window's traced rate times 1 +
    its cost: a writer at 80 writes/ms traced, cost 1.5, runs at 200
    writes/ms untraced; a 1 s gap holds ~200,000 writes."""
    win = pd.DataFrame({"open_ns": [0], "close_ns": [10_000_000]})
    costs = pd.DataFrame([{"ts_ns": 10_000_000, "cost": 1.5, "duty": 0.02, "writes": 800,
                           "threads": 1, "probe_ns": 0, "period_ns": 10_000_000,
                           "every_write": 0, "tokens_ns": 0}])
    got = W.recorded_share(win, costs, end_ns=1_010_000_000, recorded=800)
    assert got["estimated_total"] == 800 + 200_000
    assert got["share"] == 800 / 200_800
    # every write: one window, never closed by the budget
    every = W.summarize_budget(costs.assign(every_write=1), win, 10_000_000, 0.02, 800)
    assert every["every_write"] and every["share"] == 1.0
    windowed = W.summarize_budget(costs, win, 1_010_000_000, 0.02, 800)
    assert not windowed["every_write"] and windowed["share"] < 0.01


def test_the_table_names_the_budget_that_records_every_write():
    """A synced run priced over the budget says which --budget records
    every write; a cost past a quarter points at --mode full instead."""
    from analysis.table import budget_lines
    w = {"count": 2, "mean_ms": 182, "duty": 0.25}
    b = {"budget": 0.02, "recorded": 1862, "estimated_total": 5912, "share": 0.315,
         "estimated_from": "write syscalls", "every_write": False}
    synced = budget_lines({**b, "cost_median": 0.07}, w)[1]
    assert "every write would cost ~7.0% of throughput (--budget 9 records every write);" \
        in synced
    assert "--mode full records every write" in budget_lines({**b, "cost_median": 2.03}, w)[1]
    assert "records every write" not in budget_lines({**b, "cost_median": 0.015}, w)[1]


def windows_tsv(windows: list[tuple[int, int, int, int]], gaps_syscw: list[int],
                end: tuple[int, int] | None) -> list[str]:
    """windows.tsv's lines as the collector writes them: each window's
    (open_ns, close_ns, syscw at open, syscw at close), a syscw line as the
    gap before it ends (gaps_syscw), the open line, its syscw, the close's
    syscw, then its close line; the end's syscw."""
    lines = []
    for (o, c, n_open, n_close), gap_n in zip(windows, gaps_syscw):
        lines += [f"syscw\t{o - 1000}\t{gap_n}", f"open\t{o}\t400\t20", f"syscw\t{o}\t{n_open}",
                  f"cost\t{o + 5}\t0.1\t0.5\t3\t2\t1000\t1000000\t0\t0\t0",
                  f"syscw\t{c}\t{n_close}", f"close\t{c}\t{c + 50}\t30\t0"]
    if end is not None:
        lines += [f"syscw\t{end[0]}\t{end[1]}", f"end\t{end[0]}"]
    return lines


def test_the_live_estimate_is_the_analysis_one(tmp_path):
    """serve's running sums over windows.tsv's lines (LiveWriteSyscalls),
    fed a few lines at a time, give the analysis' by_write_syscalls on the
    same folder: 30 rows in windows that held 60 write syscalls, 200 write
    syscalls between them: 30 + 30 / 60 x 200 = 130."""
    wins = [(1_000_000, 2_000_000, 100, 120), (5_000_000, 6_000_000, 200, 220),
            (9_000_000, 10_000_000, 300, 320)]
    lines = windows_tsv(wins, [100, 200, 300], (12_000_000, 360))
    (tmp_path / "windows.tsv").write_text("\n".join(lines) + "\n")
    offline = W.by_write_syscalls(W.read_windows(tmp_path), np.array([10, 10, 10]),
                                  W.read_write_syscalls(tmp_path), 12_000_000, 30)
    live = W.LiveWriteSyscalls()
    rows = [np.linspace(o, c - 1, 10).astype(np.int64) for o, c, _, _ in wins]
    for i in range(0, len(lines), 4):
        live.add(lines[i:i + 4])
        if i % 8 == 0 and i // 8 < len(rows):   # rows read before or after their close
            live.add_rows(rows[i // 8])
    live.add_rows(np.zeros(0, np.int64))
    assert live.rows_closed == 30
    assert offline["estimated_total"] == pytest.approx(30 + 30 / 60 * 200)
    assert live.estimate(30) == pytest.approx(offline["estimated_total"])


def test_the_live_estimate_waits_for_what_it_can_say():
    live = W.LiveWriteSyscalls()
    assert live.estimate(5) is None                          # no count yet
    live.add(["syscw\t10\t0", "open\t20\t400\t20", "syscw\t20\t0"])
    live.add_rows(np.arange(21, 28))
    assert live.estimate(7) == 7.0                           # one window, every write
    live.add(["syscw\t30\t50"])                              # its writes are not gaps'
    assert live.estimate(7) == 7.0
    live.add(["close\t30\t40\t10\t0", "syscw\t100\t80", "open\t110\t1\t1",
              "syscw\t110\t80"])
    # a window open again: its rows (and syscalls) wait for its close
    live.add_rows(np.arange(111, 1111))
    assert live.estimate(1007) == pytest.approx(1007 + 7 / 50 * 30)
    none = W.LiveWriteSyscalls()
    none.add(["syscw\t10\t5", "open\t20\t1\t1", "syscw\t20\t5", "syscw\t30\t5",
              "close\t30\t31\t1\t0", "syscw\t90\t40"])
    assert none.estimate(3) is None      # its windows made no write syscall to scale by
