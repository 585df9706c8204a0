"""A windowed run's rows are a sample (analysis/rows_sample.py): the
self-check trusts their mean only as far as the sample allows.  Constructed
rows: a census, one long steady window, one short window with a slow
stretch, too few rows, and many windows one of which is slow."""
from __future__ import annotations

import numpy as np

from analysis import answer, phases, rows_sample, selfcheck

MS = 1_000_000


def steady(n: int, mean_ms: float, rng: np.random.Generator) -> np.ndarray:
    return rng.normal(mean_ms, 0.1 * mean_ms, n) * MS


def one_window(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(n, dtype=np.int64) * MS, np.zeros(n, dtype=np.int64)


def test_a_census_has_no_sampling_error():
    rng = np.random.default_rng(1)
    starts, window = one_window(40)
    s = rows_sample.interval(starts, steady(40, 3, rng), window, 0.95)
    assert s["census"] and s["half_share"] == 0.0 and s["rows"] == 40


def test_one_long_steady_window_is_good_to_a_few_percent():
    rng = np.random.default_rng(2)
    starts, window = one_window(450)
    s = rows_sample.interval(starts, steady(450, 3, rng), window, 0.3)
    assert not s["census"] and s["windows"] == 1 and "batches" in s["method"]
    assert s["half_share"] < 0.05
    assert s["lo_ns"] < 3 * MS < s["hi_ns"]


def test_a_short_window_with_a_slow_stretch_is_not_trusted():
    # 68 rows, the first 12 during a checkpoint at 12 ms, the rest 3 ms:
    # their mean says what the window happened to hold, not the phase
    rng = np.random.default_rng(3)
    adj = np.concatenate([steady(12, 12, rng), steady(56, 3, rng)])
    starts, window = one_window(68)
    s = rows_sample.interval(starts, adj, window, 0.13)
    assert s["half_share"] > selfcheck.TOLERANCE
    check = selfcheck.self_check(summary_of(adj, s))
    assert not check["trusted"] and not check["sampled_ok"]
    assert "good to +-" in selfcheck.line(check)
    # the same rows spread evenly in time would be steadier batches, but a
    # run of them together is what a window sees: shuffled, it passes
    shuffled = rows_sample.interval(starts, rng.permutation(adj), window, 0.13)
    assert shuffled["half_share"] < s["half_share"]


def test_too_few_rows_give_no_interval():
    rng = np.random.default_rng(4)
    n = rows_sample.BATCHES * rows_sample.MIN_BATCH_ROWS - 1
    starts, window = one_window(n)
    adj = steady(n, 3, rng)
    s = rows_sample.interval(starts, adj, window, 0.1)
    assert s["half_share"] is None
    check = selfcheck.self_check(summary_of(adj, s))
    assert not check["trusted"]
    assert "too few to say how typical" in selfcheck.line(check)
    assert max(len(x) for x in selfcheck.line(check).splitlines()) <= 80


def test_many_windows_bootstrap_across_them():
    rng = np.random.default_rng(5)
    k, per = 12, 50
    window = np.repeat(np.arange(k), per)
    starts = np.arange(k * per, dtype=np.int64) * MS
    adj = steady(k * per, 3, rng)
    s = rows_sample.interval(starts, adj, window, 0.2)
    assert s["method"] == "across windows" and s["windows"] == k
    assert s["half_share"] < 0.05 and selfcheck.self_check(summary_of(adj, s))["trusted"]
    adj[window == 3] *= 8       # one window caught a stall
    s = rows_sample.interval(starts, adj, window, 0.2)
    assert s["half_share"] > selfcheck.TOLERANCE


def test_the_headline_does_not_trust_a_phase_too_small_to_tell():
    rng = np.random.default_rng(6)
    adj = np.concatenate([steady(12, 12, rng), steady(56, 3, rng)])
    starts, window = one_window(68)
    main = {"phase": 1, "opened_s": 2.0, "rows": 68, "writes_estimated": 500.0,
            **summary_of(adj, rows_sample.interval(starts, adj, window, 0.13))}
    main["self_check"] = selfcheck.self_check(main)
    summary = {"engine": "postgres", "calibration": {"band": 0.05},
               **summary_of(adj, None), "phases": [{"phase": 0}, {"phase": 1}],
               "main_phase": main}
    summary["self_check"] = selfcheck.self_check(summary)
    assert summary["self_check"]["trusted"]      # no sample said: as before
    h = answer.headline(summary)
    assert h["lens"] == "rows" and not h["trusted"] and h["p99_ns"] is None


def summary_of(adj: np.ndarray, sample: dict | None) -> dict:
    import pandas as pd
    rows = pd.DataFrame({"dur_ns": adj * 1.02, "dur_adj_ns": adj, "other_adj_ns": adj})
    out = {"engine": "postgres", "calibration": {"band": 0.05},
           **phases.rows_summary(rows, ["other"])}
    if sample is not None:
        out["rows_sample"] = sample
    return out


def test_rare_long_waits_are_named():
    # a SQLite client's busy-handler waits: 5 of 500 transactions wait
    # 300 ms (each under the longest write's 15%), the rest take 3 ms; the
    # mean is how many the window caught
    rng = np.random.default_rng(7)
    adj = steady(500, 3, rng)
    adj[[60, 100, 250, 400, 480]] = 300 * MS
    starts, window = one_window(500)
    s = rows_sample.interval(starts, adj, window, 0.2)
    assert s["tail_share"] > rows_sample.RARE_TAIL_SHARE
    line = selfcheck.line(selfcheck.self_check(summary_of(adj, s)))
    assert "rare waits the windows caught" in line and "good to +-" in line
    assert max(len(x) for x in line.splitlines()) <= 80
    quiet = rows_sample.interval(starts, steady(500, 3, rng), window, 0.2)
    assert quiet["tail_share"] < 0.05


def test_few_windows_that_saw_a_sliver_of_their_span_stand_for_that_sliver():
    # 300 steady rows in 150 ms of one window, standing for a 2.5 s phase
    # (6%): their interval is narrow, but one window says nothing of the
    # rest of the phase (a phase's first 0.15 s: new backends' cold caches)
    rng = np.random.default_rng(8)
    adj = steady(300, 4, rng)
    starts = (np.linspace(0, 150, 300) * MS).astype(np.int64)
    window = np.zeros(300, dtype=np.int64)
    s = rows_sample.interval(starts, adj, window, 0.2, 2500 * MS)
    assert s["half_share"] < 0.05 and s["active_share"] < rows_sample.MIN_ACTIVE_SHARE
    check = selfcheck.self_check(summary_of(adj, s))
    assert not check["trusted"] and "those stretches, not the span" in selfcheck.line(check)
    assert max(len(x) for x in selfcheck.line(check).splitlines()) <= 80
    # the same rows standing for 1 s of phase (15%): trusted
    s = rows_sample.interval(starts, adj, window, 0.2, 1000 * MS)
    assert selfcheck.self_check(summary_of(adj, s))["trusted"]
    # two such windows: still two slivers
    two = np.repeat([0, 1], 150)
    assert rows_sample.narrow(rows_sample.interval(starts, adj, two, 0.2, 2500 * MS))
    # as many windows as an interval across windows needs: that interval
    many = np.repeat(np.arange(12), 25)
    s = rows_sample.interval(starts, adj, many, 0.2, 2500 * MS)
    assert s["method"] == "across windows" and not rows_sample.narrow(s)


def test_a_phases_windows_are_its_own_and_its_mean_the_windows_rows():
    # the phase's rows sit in windows 5-16 of the run (0-4 were an earlier
    # phase's), and three rows fell outside every window: the interval is
    # over the phase's twelve windows and centred on their rows' mean
    rng = np.random.default_rng(9)
    k, per = 12, 40
    window = np.concatenate([np.repeat(np.arange(5, 5 + k), per), [-1, -1, -1]])
    starts = np.arange(len(window), dtype=np.int64) * MS
    adj = np.concatenate([steady(k * per, 3, rng), [30 * MS] * 3])
    s = rows_sample.interval(starts, adj, window, 0.2, 10_000 * MS)
    assert s["windows"] == k and s["method"] == "across windows"
    assert abs(s["mean_ns"] - adj[:-3].mean()) < 1
    assert s["lo_ns"] < s["mean_ns"] < s["hi_ns"] and s["half_share"] < 0.05
