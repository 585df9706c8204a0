"""bench/truth.py's pgbench truth: pgbench's own per-transaction clock less
its BEGIN's round trip, the span a walscope row has; and the rows of a
traced run that began while pgbench ran (the set-up's are not pgbench's)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from bench import truth

REPORT = """number of transactions actually processed: 4/4
latency average = 1.500 ms
statement latencies in milliseconds and failures:
         0.001           0  \\set aid random(1, 100000 * :scale)
         0.050           0  BEGIN;
         0.141           0  UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
         0.231           0  END;
"""


def result(tmp_path: Path, latencies_us: list[int], stdout: str = REPORT) -> Path:
    logs = tmp_path / "pgbench-logs"
    logs.mkdir()
    # client_id transaction_no time(us) script_no epoch us; a skipped
    # transaction's time reads "skipped"
    (logs / "pgbench_log.1").write_text("".join(
        f"0 {i} {v} 0 1795885924 {i}\n" for i, v in enumerate(latencies_us))
        + "1 9 skipped 0 1795885924 9\n")
    r = tmp_path / "pgbench-result.json"
    r.write_text(json.dumps({"pgbench": {"stdout": stdout, "t0_ns": 1000, "t1_ns": 5000},
                             "pgbench_logs": [str(logs / "pgbench_log.1")]}))
    return r


def test_each_transaction_less_its_begin(tmp_path):
    got = truth.pgbench_latencies(result(tmp_path, [1050, 2050, 3050, 4050]))
    assert got["begin_ns"] == pytest.approx(50_000)
    assert got["mean"] == pytest.approx(2_500_000)   # (1+2+3+4 ms) / 4
    assert got["p50"] == pytest.approx(3_000_000)
    assert got["mean_all"] == got["mean"]
    assert not (tmp_path / "pgbench-logs").exists()   # pgbench's folder cleaned


def test_without_statement_latencies_it_says_so(tmp_path):
    r = result(tmp_path, [1000], stdout="latency average = 1.000 ms\n")
    with pytest.raises(SystemExit, match="BEGIN latency"):
        truth.pgbench_latencies(r)


def test_phase_rows_are_those_begun_while_pgbench_ran(tmp_path):
    rd = tmp_path / "run"
    rd.mkdir()
    result(rd, [1050, 1050])
    # two set-up rows before pgbench's t0, three inside, one after t1
    pd.DataFrame({"start_ns": [10, 900, 1000, 3000, 5000, 6000],
                  "dur_adj_ns": [9e5, 9e5, 1e6, 2e6, 3e6, 7e6]}).to_parquet(
        rd / "writes.parquet")
    got = truth.pgbench_phase(rd)
    assert got["phase_rows"] == 3 and got["rows_outside"] == 3
    assert got["phase_mean"] == pytest.approx(2e6)
    assert got["traced_own_mean"] == pytest.approx(1e6)
