"""The run's self-check (analysis/selfcheck.py) on constructed summaries:
contention (waits the probes lengthened) and a compensation that removed
most of the raw latency both keep a run from being trusted; a synced write
whose probes are a few percent of it is trusted."""
from __future__ import annotations

from analysis import selfcheck


def summary(raw_us: float, adj_us: float, queue_us: float = 0.0, runq_us: float = 0.0,
            band: float = 0.18, longest_us: float | None = None,
            cut_us: float = 0.0) -> dict:
    return {"windows": {"rows_cut_ns": cut_us * 1e3},
            "writes": {"count": 1000, "duration": {"mean_ns": raw_us * 1e3},
                       "duration_adj": {"mean_ns": adj_us * 1e3, "sum_ns": adj_us * 1e6,
                                        "max_ns": (longest_us or 3 * adj_us) * 1e3}},
            "components": {"queue": {"mean_ns": queue_us * 1e3},
                           "sched_runq": {"mean_ns": runq_us * 1e3}},
            "calibration": {"band": band}}


def test_contention_is_not_trusted():
    # 4 unsynced writers on 2 CPUs: waits 80% of the latency, probes +60%
    c = selfcheck.self_check(summary(22.4, 14.0, queue_us=9.0, runq_us=2.2))
    assert c["high"] and not c["trusted"]
    assert "not to be trusted" in selfcheck.line(c)


def test_a_compensation_that_removed_most_of_the_latency_is_not_trusted():
    # an unsynced 1-thread write: 5 us under 10 us of probes; +-18% a hit
    c = selfcheck.self_check(summary(15.0, 5.0))
    assert not c["high"]
    assert c["uncertainty"] == 2.0 * 0.18
    assert not c["trusted"]
    text = selfcheck.line(c)
    assert "+-36% only" in text and "not to 15%" in text


def test_a_synced_write_is_trusted():
    # 150 us synced, 10 us of probes, a little queue
    c = selfcheck.self_check(summary(160.0, 150.0, queue_us=15.0))
    assert c["trusted"] and not c["high"]
    assert "no sign" in selfcheck.line(c)


def test_no_band_no_uncertainty_claimed():
    # an uncalibrated run (--no-calibrate): nothing was removed
    c = selfcheck.self_check(summary(15.0, 15.0, band=0.0))
    assert c["uncertainty"] == 0 and c["trusted"]


def test_a_mean_one_write_makes_is_not_trusted():
    # 1000 transactions of 0.7 ms and one lock wait of 1 s among them
    c = selfcheck.self_check(summary(1710.0, 1700.0, longest_us=1_000_000.0))
    assert c["longest_share"] == 1_000_000 / 1_700_000
    assert not c["trusted"] and not c["high"]
    assert "the mean is that write's" in selfcheck.line(c)
    assert max(len(x) for x in selfcheck.line(c).splitlines()) <= 80


def test_a_mean_that_leaves_out_the_writes_let_go_is_not_trusted():
    # 1000 transactions of 0.7 ms kept; two let go, each still running 100
    # ms and 200 ms past its window's close (at least 300 ms left out)
    c = selfcheck.self_check(summary(710.0, 700.0, cut_us=300_000.0))
    assert c["left_out_share"] == 300_000 / 1_000_000
    assert not c["trusted"] and not c["high"]
    assert "reads low" in selfcheck.line(c)
    # one let go 20 ms past its close: 3% of the time, trusted
    c = selfcheck.self_check(summary(710.0, 700.0, cut_us=20_000.0))
    assert c["left_out_share"] < selfcheck.TOLERANCE and c["trusted"]


def test_the_factors_quoted_at_high_risk_are_the_truth_benchs():
    """The line a high-risk run prints quotes how far such runs were from
    the untraced workload: those figures are bench/results/truth.json's, so
    a rerun of bench/truth.py that moves them fails here until
    analysis/selfcheck.py says the same."""
    import json
    from pathlib import Path
    truth = json.loads((Path(__file__).resolve().parent.parent / "bench" / "results"
                        / "truth.json").read_text())
    assert selfcheck.high_risk_factors(truth) == (selfcheck.HIGH_MEAN, selfcheck.HIGH_P99)
