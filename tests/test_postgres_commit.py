"""bench/postgres_commit.py's pure parts on made-up numbers: the A/A band,
the verdict rule (it must be able to say "higher", "lower" and "within
A/A"), the rows check and the summary of per-repetition diffs."""
from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import ROOT

_spec = importlib.util.spec_from_file_location("postgres_commit",
                                               ROOT / "bench" / "postgres_commit.py")
pc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pc)


def test_aa_band_takes_each_pair_both_ways():
    lo, hi = pc.aa_band([(100.0, 110.0), (100.0, 95.0)])
    assert lo == pytest.approx(100 / 110) and hi == pytest.approx(1.1)


def test_verdict_counts_only_outside_the_band_in_every_repetition():
    band = (0.9, 1.1)
    assert pc.verdict([1.3, 1.2, 1.15, 1.4, 1.25], band) == "higher"
    assert pc.verdict([0.5, 0.45, 0.6, 0.52, 0.49], band) == "lower"
    # four of five outside: one repetition inside the noise is enough to not count
    assert pc.verdict([1.3, 1.2, 1.05, 1.4, 1.25], band) == "within A/A"
    # outside on both sides is no consistent difference
    assert pc.verdict([1.3, 0.8, 1.2, 1.4, 1.25], band) == "within A/A"
    assert pc.verdict([], band) == "-"


def test_rows_check():
    assert pc.check_rows("full", 4000, 4000, True) is None
    assert "3999 rows for 4000" in pc.check_rows("full", 3999, 4000, True)
    # the default mode in windows: its rows are a window's, not checked
    assert pc.check_rows("default", 300, 4000, False) is None
    # ... but when it says it recorded every write, they must all be there
    assert pc.check_rows("default", 300, 4000, True) is not None


def test_summarise_diffs():
    def d(delta: float, comps: dict[str, float]) -> dict:
        return {"mean": {"delta_ns": delta, "residual_ns": delta - sum(comps.values()),
                         "components": [{"component": k, "delta_ns": v}
                                        for k, v in comps.items()]},
                "p99": {"delta_ns": 2 * delta, "residual_ns": 0.0}}
    s = pc.summarise_diffs([d(-100, {"wal_sync_io": -80, "lock_wait": -20}),
                            d(-200, {"wal_sync_io": -100, "lock_wait": -100}),
                            d(-150, {"wal_sync_io": -90, "lock_wait": -60})])
    w = s["components"]["wal_sync_io"]
    assert (w["median_ns"], w["lo_ns"], w["hi_ns"]) == (-90, -100, -80)
    assert w["share_median"] == pytest.approx(0.6)
    assert s["residual_ns"] == [0, 0, 0]
    assert pc.fmt([1.0, 3.0, 2.0], "{:.1f}") == "2.0 [1.0, 3.0]"
