"""A windowed run's phases (analysis/phases.py) and the headline's rows:
a set-up's few long transactions, then the run's many short ones; the
headline takes the phase with the most writes, with its own self-check."""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import answer, phases, selfcheck

MS = 1_000_000


def schedule(*spans: tuple[int, int]) -> pd.DataFrame:
    return pd.DataFrame({"open_ns": [a * MS for a, _ in spans],
                         "close_ns": [b * MS for _, b in spans]})


def test_phases_split_at_new_writers_and_estimate_their_writes():
    # a set-up window 0-1000 ms (10 rows), the run's 2000-2100 ms and
    # 3000-3100 ms (100 rows each), the run's writers new at 2000 ms; the
    # run ends at 4000 ms
    sched = schedule((0, 1000), (2000, 2100), (3000, 3100))
    by_window = [{"phase": False}, {"phase": True}, {"phase": False}]
    starts = np.concatenate([np.linspace(0, 990, 10), np.linspace(2000, 2099, 100),
                             np.linspace(3000, 3099, 100), [1500]]) * MS
    got = phases.phases(sched, by_window, starts.astype(np.int64), 4000 * MS)
    assert [(p["phase"], p["rows"], p["windows"]) for p in got] == [(0, 10, 1), (1, 200, 2)]
    assert got[0]["writes_estimated"] == 10 * 2000 / 1000     # its span over its window
    assert got[1]["writes_estimated"] == 200 * 2000 / 200
    assert phases.main_phase(got)["phase"] == 1
    assert phases.main_phase(got[:1]) is None               # one phase: the run's rows
    ph = phases.row_phases(sched, by_window, starts.astype(np.int64))
    assert list(ph[:10]) == [0] * 10 and set(ph[10:210]) == {1} and ph[-1] == -1


def test_the_headline_takes_the_main_phases_rows_and_its_self_check():
    comps = ["other", "wal_sync_io"]
    setup = pd.DataFrame({"dur_ns": [700 * MS] + [2 * MS] * 9,
                          "dur_adj_ns": [690 * MS] + [2 * MS] * 9,
                          "other_adj_ns": [690 * MS] + [1 * MS] * 9,
                          "wal_sync_io_adj_ns": [0] + [1 * MS] * 9})
    run = pd.DataFrame({"dur_ns": [3.1 * MS] * 200, "dur_adj_ns": [3.0 * MS] * 200,
                        "other_adj_ns": [1.0 * MS] * 200,
                        "wal_sync_io_adj_ns": [2.0 * MS] * 200})
    every = pd.concat([setup, run])
    whole = phases.rows_summary(every, comps)
    summary = {"engine": "postgres", "calibration": {"band": 0.05}, **whole}
    summary["self_check"] = selfcheck.self_check(summary)
    assert not summary["self_check"]["trusted"]    # one write is most of the sum
    main = {"phase": 1, "opened_s": 2.0, "rows": 200, "writes_estimated": 2000.0,
            **phases.rows_summary(run, comps)}
    main["self_check"] = selfcheck.self_check({**main, "engine": "postgres",
                                               "calibration": {"band": 0.05}})
    summary.update(phases=[{"phase": 0}, {"phase": 1}], main_phase=main)
    h = answer.headline(summary)
    assert h["lens"] == "rows" and h["trusted"]
    assert h["mean_ns"] == 3.0 * MS and h["p99_ns"] == 3.0 * MS
    assert h["components"] == {"other": 1.0 * MS, "wal_sync_io": 2.0 * MS}
    assert h["phase"]["rows"] == 200 and h["phase"]["of_rows"] == 210
    assert "the phase's with the most writes (opened at 2.0s" in h["why"]
    # without phases the same summary answers with every row, distrusted
    del summary["main_phase"]
    h = answer.headline(summary)
    assert not h["trusted"] and h["mean_ns"] > 6 * MS


def test_a_phase_begins_where_its_new_writers_were_seen():
    # the schedule saw the run's writers at 1800 ms and its window opened
    # at 2000 ms (an attach between them takes ms; 200 here to tell them
    # apart): the phase's span, and so its estimated writes, count from
    # 1800 ms; the set-up's ends there
    sched = schedule((0, 1000), (2000, 2100), (3000, 3100))
    by_window = [{"phase": False}, {"phase": True}, {"phase": False}]
    starts = (np.concatenate([np.linspace(0, 990, 10), np.linspace(2000, 2099, 100),
                              np.linspace(3000, 3099, 100)]) * MS).astype(np.int64)
    got = phases.phases(sched, by_window, starts, 4000 * MS, [1800 * MS])
    assert got[0]["span_s"] == 1.8 and got[1]["span_s"] == 2.2
    assert got[1]["writes_estimated"] == 200 * 2200 / 200
    assert got[1]["opened_s"] == 2.0           # where its first window opened
    # a phase line before an earlier window is not this phase's
    assert phases.phases(sched, by_window, starts, 4000 * MS, [500 * MS])[1]["span_s"] == 2.0
