"""The studies' verdicts on results made up to hold and not to hold (a verdict
that cannot say "did not hold" checks nothing), results.json round trips,
and the workload's own throughput as the analysis reads it."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from analysis import workload_output
from runners.experiments.studies import STUDIES
from runners.experiments.studies.model import (HELD, NOT_DISTINGUISHABLE, NOT_HELD, PARTLY,
                                               UNTESTABLE)
from runners.experiments.studies.results import CellResult, Results, Stat
from runners.experiments.studies import judge, s002, s004
from viz import matrix


def stat(v: float, spread: float = 0.02) -> Stat:
    """Five rounds within +-spread, an A/A band of +-5%."""
    rounds = [v * (1 + spread * k) for k in (-1, -0.5, 0, 0.5, 1)]
    return Stat(v, v * (1 - spread), v * (1 + spread), 5, rounds, [0.95, 1.05])


def disable_wal(on_ops: float, off_ops: float) -> Results:
    """The traced mean write is its components' sum: 3.3 us with the WAL
    (the syscall 1.0, the record 0.3), 2.0 without."""
    cells = []
    for disable, ops in ((True, off_ops), (False, on_ops)):
        for bench in ("fillseq", "fillrandom"):
            comps = {"wal_write_io": 1.0, "wal_append": 0.3,
                     "memtable": 2.0} if not disable else {"memtable": 2.0}
            c = CellResult(name=f"{disable}-{bench}",
                           values={"disable_wal": str(disable).lower(), "benchmarks": bench},
                           metrics={bench: {"ops_sec": stat(ops), "micros_op": stat(1e6 / ops),
                                            "sst_write_amplification": stat(1.7)}},
                           writes=1000, mean_us=sum(comps.values()), comp_mean_us=comps)
            cells.append(c)
    return Results("002", False, {}, cells)


def test_wal_cost_claim_holds_and_fails():
    claim = STUDIES["002"].claims[0]
    assert claim.decide(disable_wal(on_ops=100_000, off_ops=200_000)).outcome == HELD
    assert claim.decide(disable_wal(on_ops=200_000, off_ops=100_000)).outcome == NOT_HELD
    # within the repeats' spread: no difference above the noise, which is neither
    assert claim.decide(disable_wal(on_ops=100_000, off_ops=101_000)).outcome == \
        NOT_DISTINGUISHABLE


def test_io_claim_reads_the_components():
    r = disable_wal(100_000, 200_000)
    assert s002.wal_is_io(r).outcome == HELD
    # both write benchmarks: the record's building outweighs the syscalls
    for bench in ("fillseq", "fillrandom"):
        c = r.cell(disable_wal=False, benchmarks=bench)
        c.comp_mean_us["wal_append"] = 5.0
        c.mean_us = sum(c.comp_mean_us.values())
    assert s002.wal_is_io(r).outcome == NOT_HELD
    # the untraced runs not apart above the noise: the traced gap is no evidence
    assert s002.wal_is_io(disable_wal(100_000, 101_000)).outcome == NOT_DISTINGUISHABLE
    r.cell(disable_wal=False, benchmarks="fillrandom").writes = 0
    assert s002.wal_is_io(r).outcome == UNTESTABLE


def test_sqlite_cause_needs_the_gap_in_io():
    def res(delete_io: float, delete_exec: float) -> Results:
        cells = []
        for mode, io, ex in (("delete", delete_io, delete_exec), ("wal", 100.0, 100.0)):
            cells.append(CellResult(
                name=mode, values={"journal_mode": mode, "clients": "1"},
                metrics={"new_order": {"tpmC": stat(1000), "mean_us": stat(io + ex)}},
                extra={"by_type": {"new_order": {
                    "mean_us": io + ex, "components_us": {"journal_sync_io": io,
                                                          "sql_exec": ex}}}}))
        return Results("004", False, {}, cells)
    assert s004.io_is_the_cause(res(900.0, 100.0)).outcome == HELD
    assert s004.io_is_the_cause(res(100.0, 900.0)).outcome == NOT_HELD
    # the same traced split with no untraced gap above the noise: nothing to carry
    r = res(900.0, 100.0)
    r.cell(journal_mode="delete").metrics["new_order"]["mean_us"] = stat(200.0)
    assert s004.io_is_the_cause(r).outcome == NOT_DISTINGUISHABLE


def test_results_round_trip(tmp_path: Path):
    r = disable_wal(100_000, 200_000)
    r.save(tmp_path / "results.json")
    back = Results.load(tmp_path / "results.json")
    assert back == r


def test_every_study_names_its_seed_and_claims():
    seeds = Path(__file__).resolve().parent.parent.parent / "shared" / "seeds"
    for s in STUDIES.values():
        assert s.claims and s.metrics and s.question
        if seeds.exists():
            assert (seeds / s.seed).exists(), s.seed


def test_matrix_cells_use_the_untraced_medians():
    df = pd.DataFrame({
        "cell": ["a"] * 4, "benchmark": ["fillrandom"] * 4,
        "kind": ["baseline", "baseline", "baseline", "traced"],
        "ops_sec": [100.0, 300.0, 200.0, 50.0], "micros_op": [10.0, 30.0, 20.0, 5.0],
        "p99_us": [1.0, 3.0, 2.0, 9.0]})
    t = matrix.per_cell(df).iloc[0]
    assert (t["ops"], t["ops_lo"], t["ops_hi"], t["traced_ops"]) == (200.0, 100.0, 300.0, 50.0)
    assert (t["mean_us"], t["p99_us"], t["repeats"]) == (20.0, 2.0, 3)


def test_throughput_is_the_workloads_own(tmp_path: Path):
    (tmp_path / "command.log").write_text(
        "fillrandom   :       5.000 micros/op 200000 ops/sec 2.000 seconds 400000 operations;\n"
        "overwrite    :      10.000 micros/op 100000 ops/sec 2.000 seconds 200000 operations;\n"
        "readrandom   :       1.000 micros/op 999999 ops/sec 1.000 seconds 999999 operations;\n")
    t = workload_output.throughput(tmp_path, writes=10, span_ns=10**9, windowed=True)
    assert t["ops_per_s"] == 600000 / 4.0      # the writes' benchmarks, reads left out
    (tmp_path / "command.log").write_text("no report\n")
    assert workload_output.throughput(tmp_path, 10, 10**9, windowed=True) is None
    assert workload_output.throughput(tmp_path, 10, 10**9, windowed=False)["ops_per_s"] == 10
    # a workload's transaction log, named by the workload
    (tmp_path / "txlog.json").write_text(json.dumps({
        "workload": "sqlite_tpcc", "summary": {"transactions": 300, "elapsed_s": 2.0,
                                               "tpmC": 4000.0}}))
    t = workload_output.throughput(tmp_path, 10, 10**9, windowed=False)
    assert t["ops_per_s"] == 150 and t["tpmC"] == 4000
    assert t["source"] == "sqlite_tpcc: 300 transactions in 2.0 s, tpmC 4000"


# --- the self-check and the attribution rule (judge.trust_note, attributed) -

UNSURE = {"inflation": 2.1, "wait_share": 0.01, "risk": 0.02, "risk_high": 0.2, "high": False,
          "band": 0.18, "uncertainty": 0.38, "longest_share": 0.0, "left_out_share": 0.0,
          "tolerance": 0.15, "trusted": False}


def test_trust_note_for_every_reason_the_self_check_gives():
    c = CellResult(name="c", values={}, extra={"self_check": dict(UNSURE)})
    note = judge.trust_note(c)
    assert "good to +-38% only" in note and "not the workload's" in note
    c.extra["self_check"] = dict(UNSURE, uncertainty=0.05, longest_share=0.4)
    assert "one write is 40% of the sum" in judge.trust_note(c)
    c.extra["self_check"] = dict(UNSURE, high=True, risk=0.5)   # the wording kept
    assert "probes lengthened its writes 210%" in judge.trust_note(c)
    c.extra["self_check"] = dict(UNSURE, uncertainty=0.05, trusted=True)
    assert judge.trust_note(c) == ""


def untrusted_wal(on_us_op: float) -> Results:
    """disable_wal() with every traced run failing its self-check, the
    untraced WAL-on runs taking on_us_op us/op (off: 5 us/op)."""
    r = disable_wal(on_ops=100_000, off_ops=200_000)
    for c in r.cells:
        c.extra["self_check"] = dict(UNSURE)
        if c.values["disable_wal"] == "false":
            bench = c.values["benchmarks"]
            c.metrics[bench]["micros_op"] = stat(on_us_op)
    return r


def test_attribution_rule_on_untrusted_runs():
    # the traced gap: wal_write_io 1.0 + wal_append 0.3 (the syscalls 77%)
    assert s002.wal_is_io(disable_wal(100_000, 200_000)).outcome == HELD   # trusted: stands
    v = s002.wal_is_io(untrusted_wal(on_us_op=6.5))       # untraced gap 1.5: 67%
    assert v.outcome == HELD and "these components 67% of it" in v.evidence
    v = s002.wal_is_io(untrusted_wal(on_us_op=8.0))       # untraced gap 3.0: 33%
    assert v.outcome == PARTLY and "these components 33% of it" in v.evidence
    assert "failed their self-check" in v.evidence and "+3.00 us/op" in v.evidence


def test_a_traced_delta_beside_no_untraced_difference_is_no_evidence():
    r = disable_wal(on_ops=100_000, off_ops=101_000)
    a, b = r.cells[0], r.cells[2]
    within = judge.beside_untraced(a, b, 1.0)
    # no share of a gap within the noise (it read 6681% of -0.01 us/op)
    assert "is not evidence of a difference" in within and "% of it" not in within
    r = disable_wal(on_ops=100_000, off_ops=200_000)
    above = judge.beside_untraced(r.cells[0], r.cells[2], 1.0)
    assert "not evidence" not in above and "% of it" in above


def test_traced_note_says_which_rows_were_read():
    c = CellResult(name="c", values={}, mode="full", writes=600_000, extra={"row_step": 2})
    assert judge.traced_note(c) == ("600,000 writes traced in full mode; the per-write "
                                    "figures here read every 2nd row, 300,000")
