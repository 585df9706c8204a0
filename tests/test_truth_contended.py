"""Contended writes against the workload's own untraced timing.

db_bench unsynced with more threads than this machine's CPUs (4 threads on
2 here): the probes lengthen other writes' waits, which each write's own
compensation cannot see.  The chain compensation (analysis/chain.py) takes
out what the wait-for chain shows; the self-check says where the rest
leaves the latencies.  Untraced runs with db_bench's own --histogram are
interleaved with the traced ones, and the traced latencies are set against
them: the truth is the workload's, not walscope's.
"""
from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from analysis import selfcheck
from tests.conftest import ROOT, run_trace

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

THREADS = max(4, 2 * len(os.sched_getaffinity(0)))   # writers outnumber the CPUs
WORKLOAD = ["db_bench", "--benchmarks=fillrandom", "--sync=false", f"--threads={THREADS}",
            f"--num={200000 // THREADS}", "--histogram"]


def _truth_bench():
    """bench/truth.py, whose reading of db_bench's --histogram this test
    shares."""
    spec = importlib.util.spec_from_file_location("truth", ROOT / "bench" / "truth.py")
    truth = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(truth)
    return truth


def untraced_mean_ns(db: Path) -> float:
    p = subprocess.run([*WORKLOAD, f"--db={db}"], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return _truth_bench().db_bench_histogram(p.stdout)["mean"]


def traced_run(out: Path, db: Path, mode: list[str]) -> tuple[pd.DataFrame, dict]:
    p = run_trace(["-q", *mode, "-o", str(out), "--", *WORKLOAD, f"--db={db}"])
    assert p.returncode == 0, p.stderr[-2000:]
    w = pd.read_parquet(out / "writes.parquet", columns=["dur_ns", "dur_adj_ns", "chain_ns"])
    return w, json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Untraced, the plain command, untraced, full, untraced: the traced
    runs between untraced ones."""
    d = tmp_path_factory.mktemp("truth")
    untraced, traced = [], {}
    untraced.append(untraced_mean_ns(d / "u0"))
    traced["default"] = traced_run(d / "default", d / "d0", [])
    untraced.append(untraced_mean_ns(d / "u1"))
    traced["full"] = traced_run(d / "full", d / "d1", ["--mode", "full"])
    untraced.append(untraced_mean_ns(d / "u2"))
    return statistics.median(untraced), traced


UNTRACED_SPREAD = 1.32   # the untraced runs' highest over their median (truth.json)


@pytest.mark.parametrize("mode", ["default", "full"])
def test_the_chain_takes_the_traced_mean_towards_the_untraced(runs, mode):
    """Each write's own hits are out of dur_adj_ns already; what the chain
    took out too (chain_ns: a few writes' waits, each by many us) brings
    the mean closer to the untraced one, and not past it by more than it
    was above.  (Here, 2026-11-26: raw 3.9-4.2x, own hits only 3.1x, with
    the chain 2.0-2.4x, in either mode.)"""
    untraced_ns, traced = runs
    w, _ = traced[mode]
    chained = w["dur_adj_ns"].mean()
    own_only = (w["dur_adj_ns"] + w["chain_ns"]).mean()
    assert w["chain_ns"].sum() > 0, "the chain charged no write"
    # not far below the untraced mean: the untraced runs spread 0.85-1.32x
    # of their median and the default's mean read 0.80x at its lowest
    # (bench/results/truth.json)
    assert chained >= 0.5 * untraced_ns, (chained, untraced_ns)
    assert w["dur_adj_ns"].min() >= 0
    # closer to the untraced mean, where the gap is wider than the untraced
    # runs' own spread (0.85-1.32x of their median): in a fresh clone's
    # run the untraced runs read slow (own hits only 1.1x, where 3.1x is
    # usual), and which of 22.2 and 28.3 us lies nearer 25.6 us was that
    # run's noise (bench/truth.py holds the error itself)
    if own_only <= UNTRACED_SPREAD * untraced_ns:
        pytest.skip(f"own hits only {own_only / untraced_ns:.2f}x the untraced mean: "
                    "inside its spread, nothing to move towards")
    assert abs(chained - untraced_ns) < abs(own_only - untraced_ns), \
        (chained, own_only, untraced_ns)


@pytest.mark.parametrize("mode", ["default", "full"])
def test_the_self_check_does_not_trust_contended_writes(runs, mode):
    """The plain command first: where the chain leaves the mean 1.1-2.3x
    the untraced (bench/results/truth.json: every such run was at a risk of
    0.45-1.03), the self-check says not to trust it, and says how far such
    runs were off.  A run whose mean came out inside the untraced runs'
    own spread was not wrong, and the self-check may trust it (a fresh
    clone's default run read a risk of 0.088, under HIGH's 0.12: the
    budget's windows had touched few writes)."""
    untraced_ns, traced = runs
    _, s = traced[mode]
    check = s["self_check"]
    ratio = s["writes"]["duration_adj"]["mean_ns"] / untraced_ns
    if not check["high"] and 1 / UNTRACED_SPREAD <= ratio <= UNTRACED_SPREAD:
        pytest.skip(f"the mean read {ratio:.2f}x the untraced, inside its spread, and the "
                    f"self-check trusted it (risk {check['risk']:.3f}): nothing to distrust")
    assert check["high"] and not check["trusted"], check
    assert selfcheck.HIGH_MEAN in selfcheck.line(check)
