"""Studies 002 (disable_wal) and 003 (tiered storage, Zipf): each claim on
results made up to hold, not to hold, and to be beyond the rule (fewer
than five rounds: "cannot be tested here", never "did not hold"), and the
write-up's texts on them."""
from __future__ import annotations

from typing import Callable

import pytest

from runners.experiments.studies import STUDIES, s002, s003
from runners.experiments.studies.model import HELD, NOT_HELD, PARTLY, UNTESTABLE
from runners.experiments.studies.results import CellResult, Results, Stat

AA = [0.95, 1.05]


def stat(v: float, rounds: int = 5, aa: list[float] | None = None) -> Stat:
    """`rounds` rounds within +-2% (the same drift in every cell), an A/A
    band of +-5% unless given."""
    rs = [v * (1 + 0.02 * k) for k in (-1, -0.5, 0, 0.5, 1)][:rounds]
    return Stat(v, min(rs), max(rs), rounds, rs, list(AA if aa is None else aa))


# --- 002 -------------------------------------------------------------------

OFF_COMPS = {"memtable": 2.0, "other": 0.5, "sched_runq": 0.05}


def wal(on_ops: float = 100_000, off_ops: float = 200_000, waf: tuple[float, float] = (1.1, 1.1),
        saf: tuple[float, float] | None = (2.6, 2.0), on_comps: dict[str, float] | None = None,
        rounds: int = 5, aa: list[float] | None = None) -> Results:
    """Both write benchmarks with the WAL off (disable_wal=true) and on;
    waf and saf: (off, on)."""
    on_comps = on_comps or {"wal_write_io": 1.4, "wal_append": 0.6, "sched_runq": 2.3,
                            "memtable": 2.0, "other": 0.5}
    cells = []
    for disable, ops, w, sa, comps in ((True, off_ops, waf[0], saf and saf[0], OFF_COMPS),
                                       (False, on_ops, waf[1], saf and saf[1], on_comps)):
        for bench in ("fillseq", "fillrandom"):
            sf = sa if bench == "fillseq" else 1.6     # the seed: equal on fillrandom
            m = {"ops_sec": stat(ops, rounds), "micros_op": stat(1e6 / ops, rounds),
                 "sst_write_amplification": stat(w, rounds, aa),
                 "write_amplification": stat(w + (0 if disable else 1.0), rounds, aa),
                 "wal_bytes": stat(0 if disable else 52.4e6, rounds),
                 "bytes_written": stat(52.4e6, rounds), "db_sst_bytes": stat(50e6, rounds)}
            if saf:
                m["space_amplification"] = stat(sf, rounds, aa)
            cells.append(CellResult(
                name=f"wal-{'off' if disable else 'on'}-{bench}",
                values={"disable_wal": str(disable).lower(), "benchmarks": bench},
                metrics={bench: m}, writes=1000, mean_us=sum(comps.values()),
                comp_mean_us=dict(comps), comp_tail_us={c: 10 * v for c, v in comps.items()}))
    return Results("002", False, {}, cells)


def test_002_wal_cost():
    def decide(r: Results) -> str:
        return s002.wal_costs(r).outcome

    assert decide(wal(100_000, 200_000)) == HELD
    assert decide(wal(200_000, 100_000)) == NOT_HELD
    assert decide(wal(100_000, 103_000)) == NOT_HELD      # 3%: inside the A/A band
    assert decide(wal(100_000, 200_000, rounds=3)) == UNTESTABLE
    v = s002.wal_costs(wal())
    assert "2.00x [2.00-2.00] over 5 rounds; A/A 0.95-1.05" in v.evidence
    assert v.pairs == [("wal-off-fillseq", "wal-on-fillseq"),
                       ("wal-off-fillrandom", "wal-on-fillrandom")]


def test_002_waf_with_and_without_the_wal():
    assert s002.waf_unchanged(wal(waf=(1.1, 1.1))).outcome == HELD
    assert s002.waf_unchanged(wal(waf=(1.1, 1.5))).outcome == NOT_HELD
    # 1% apart, above a tight A/A band: called, but under the seed's rounding
    assert s002.waf_unchanged(wal(waf=(1.1, 1.111), aa=[0.999, 1.001])).outcome == HELD
    assert s002.waf_unchanged(wal(waf=(1.1, 1.1), rounds=3)).outcome == UNTESTABLE
    ev = s002.waf_unchanged(wal(waf=(0.47, 0.51))).evidence
    assert "0.47 -> 1.51" in ev and "seed 003" in ev     # the WAL-inclusive WAF beside


def test_002_waf_only_of_finished_flushes():
    # the WAL-off runs ended with a flush running: fewer bytes flushed
    r = wal(waf=(0.47, 0.51))
    for c in r.cells:
        per = next(iter(c.metrics.values()))
        per["flush_bytes"] = stat(24.6e6 if c.values["disable_wal"] == "true" else 26.5e6)
    v = s002.waf_unchanged(r)
    assert v.outcome == UNTESTABLE and "flush was still running" in v.evidence
    # fillseq followed by readrandom: its statistics come after the flush
    for disable in (True, False):
        r.cells.append(CellResult(
            name=f"wal-{disable}-fsrr", values={"disable_wal": str(disable).lower(),
                                                "benchmarks": "fillseq,readrandom"},
            metrics={b: {"flush_bytes": stat(26.5e6), "sst_write_amplification": stat(0.51),
                         "write_amplification": stat(0.51 + (0 if disable else 1)),
                         "wal_bytes": stat(0 if disable else 52.4e6),
                         "bytes_written": stat(52.4e6), "ops_sec": stat(200_000.0)}
                     for b in ("fillseq", "readrandom")}))
    ok, text = s002.waf_text(r, "fillseq")
    assert ok == HELD and "from the fillseq,readrandom cells" in text and "0.51 -> 1.51" in text
    assert s002.waf_text(r, "fillrandom")[0] == UNTESTABLE
    # the answer's WAF names the cells it reads, and the fillseq cells' own
    both = s002.waf_both(r, "fillseq")
    assert "from the fillseq,readrandom cells" in both and "own: 0.47 and 0.51" in both
    assert "readrandom" in s002.findings(r)[-1]


def test_002_saf_as_the_seed_saw_it():
    # the seed: fillseq lower with the WAL, fillrandom equal
    assert s002.saf_as_seed(wal(saf=(2.6, 2.0))).outcome == HELD
    assert s002.saf_as_seed(wal(saf=(2.0, 2.6))).outcome == PARTLY   # fillrandom equal still
    assert s002.saf_as_seed(wal(saf=None)).outcome == UNTESTABLE
    assert s002.saf_as_seed(wal(rounds=3)).outcome == UNTESTABLE
    assert "does not define its SAF" in s002.saf_as_seed(wal()).evidence


def test_002_io_claim_splits_the_whole_gap():
    v = s002.wal_is_io(wal())
    # gap 4.25 us: the syscall 1.4 (33%), the record 0.6, the run queue 2.25
    assert v.outcome == PARTLY
    assert "sched_runq +2.25" in v.evidence and "residual +0.00 us" in v.evidence
    io = {"wal_write_io": 3.0, "wal_append": 0.6, "memtable": 2.0, "other": 0.5,
          "sched_runq": 0.05}
    assert s002.wal_is_io(wal(on_comps=io)).outcome == HELD
    # no slower with the WAL: nothing for the I/O to explain
    assert s002.wal_is_io(wal(on_comps=dict(OFF_COMPS))).outcome == NOT_HELD


def test_002_texts():
    r = wal()
    fs = s002.findings(r)
    assert all("sched_runq" in f for f in fs[:2])
    assert any("seed 003 defines WAF" in f for f in fs)
    a = s002.STUDY.answer(r)
    assert "over 5 rounds" in a and "sched_runq" in a and "Space amplification" in a
    assert "10 db_bench runs" in s002.STUDY.seed_says
    # walscope diff's own residual where the results hold it
    r.diffs["wal-off-fillrandom vs wal-on-fillrandom"] = {
        "text": "", "delta_mean_ns": 4370.0, "residual_ns": 120.0, "delta_p99_ns": 0.0,
        "components_ns": {"wal_write_io": 3000.0, "sched_runq": 1250.0}}
    assert s002.gap_text(r, r.cells[1], r.cells[3]) == \
        "+4.37 us (wal_write_io +3.00, sched_runq +1.25; residual +0.12 us)"
    assert s002.wal_is_io(r).outcome == PARTLY     # fillseq from the components: 33%
    # a diff that failed: the components' means stand
    r.diffs["wal-off-fillrandom vs wal-on-fillrandom"] = {"error": "no rows"}
    assert "residual +0.00 us" in s002.gap_text(r, r.cells[1], r.cells[3])


def test_002_metrics_as_the_seed_and_seed_003_define_them():
    cols = [m.column for m in s002.STUDY.metrics]
    assert {"sst_write_amplification", "write_amplification", "space_amplification"} <= set(cols)


# --- 003 -------------------------------------------------------------------

Vals = Callable[[str, str, str], float]


def zipf(ops: Vals = lambda a, p, s: 200_000.0, waf: Vals = lambda a, p, s: 1.3,
         stored: Vals = lambda a, p, s: 0.5 if p == "0" else 0.0,
         reads: Vals = lambda a, p, s: 0.2, saf: Vals = lambda a, p, s: 0.1,
         rounds: int = 5) -> Results:
    cells = []
    for a in s003.ALPHAS:
        for p in s003.PRECLUDES:
            for s in ("0", "5"):
                m = {"ops_sec": stat(ops(a, p, s), rounds),
                     "write_amplification": stat(waf(a, p, s), rounds),
                     "sst_write_amplification": stat(waf(a, p, s) - 1, rounds),
                     "last_level_stored_ratio": stat(stored(a, p, s), rounds),
                     "last_level_byte_ratio": stat(reads(a, p, s), rounds),
                     "space_amplification": stat(saf(a, p, s), rounds)}
                cells.append(CellResult(
                    name=f"a{a}-p{p}-s{s}",
                    values={"alpha": a, "preclude_last_level_data_seconds": p,
                            "preserve_internal_time_seconds": s},
                    metrics={"fillzipf": m}, writes=1000, mean_us=4.0,
                    comp_mean_us={"wal_write_io": 1.4, "memtable": 2.0, "other": 0.6}))
    return Results("003", False, {}, cells)


def test_003_skew():
    # 4% a step, inside the A/A band; 8% over the range, above it
    rising = {"0.5": 200_000.0, "0.9": 208_000.0, "1.2": 216_000.0}
    assert s003.skew_faster(zipf(ops=lambda a, p, s: rising[a])).outcome == HELD
    assert s003.skew_faster(zipf()).outcome == NOT_HELD
    dip = {"0.5": 200_000.0, "0.9": 150_000.0, "1.2": 230_000.0}     # down, then up
    assert s003.skew_faster(zipf(ops=lambda a, p, s: dip[a])).outcome == NOT_HELD
    assert s003.skew_faster(zipf(ops=lambda a, p, s: rising[a], rounds=3)).outcome == UNTESTABLE
    assert s003.skew_faster(zipf()).pairs == [("a0.5-p0-s0", "a1.2-p0-s0")]


def test_003_skew_shrinks_the_db():
    saf = {"0.5": 0.15, "0.9": 0.09, "1.2": 0.04}
    waf = {"0.5": 1.46, "0.9": 1.28, "1.2": 1.10}

    def decide(s_: Vals, w_: Vals, rounds: int = 5) -> str:
        return s003.skew_smaller(zipf(saf=s_, waf=w_, rounds=rounds)).outcome

    assert decide(lambda a, p, s: saf[a], lambda a, p, s: waf[a]) == HELD
    assert decide(lambda a, p, s: saf[a], lambda a, p, s: 1.3) == PARTLY
    assert decide(lambda a, p, s: 0.1, lambda a, p, s: 1.3) == NOT_HELD
    assert decide(lambda a, p, s: saf[a], lambda a, p, s: waf[a], 3) == UNTESTABLE


def test_003_tiering():
    assert s003.tiering_costs_nothing(zipf()).outcome == HELD
    slow = zipf(ops=lambda a, p, s: 150_000.0 if (p, s) == ("5", "5") else 200_000.0)
    assert s003.tiering_costs_nothing(slow).outcome == NOT_HELD
    assert s003.tiering_costs_nothing(zipf(rounds=3)).outcome == UNTESTABLE


def test_003_last_level():
    v = s003.preclude_empties_last_level(zipf())
    assert v.outcome == HELD and "0 in every run either way" in v.evidence
    assert "the seed's read ratio" in v.evidence
    assert s003.preclude_empties_last_level(zipf(stored=lambda a, p, s: 0.5)).outcome == NOT_HELD
    # emptied at 2 s, back at 5 s: a rise from 0 is a rise
    back = zipf(stored=lambda a, p, s: 0.0 if p == "2" else 0.5)
    assert s003.preclude_empties_last_level(back).outcome == NOT_HELD
    assert s003.preclude_empties_last_level(zipf(stored=lambda a, p, s: 0.0)).outcome \
        == UNTESTABLE
    assert s003.preclude_empties_last_level(zipf(rounds=3)).outcome == UNTESTABLE


def test_003_waf_finding():
    hump = {"0": 1.40, "2": 1.50, "5": 1.40}

    def seedlike(a: str, p: str, s: str) -> float:
        return hump[p] if a == "0.5" else 1.3 if a == "0.9" else 1.1

    v = s003.waf_rises_then_falls(zipf(waf=seedlike))
    assert v.outcome == HELD, v.evidence
    assert v.pairs == [("a0.5-p0-s5", "a0.5-p2-s5"), ("a0.5-p2-s5", "a0.5-p5-s5")]

    def falling(a: str, p: str, s: str) -> float:   # more at high alpha, no hump, large
        step = 0.1 if a == "0.5" else 0.2
        return 1.4 - step * s003.PRECLUDES.index(p)

    assert s003.waf_rises_then_falls(zipf(waf=falling)).outcome == NOT_HELD
    # flat everywhere: small, but no rise and fall; "less at high alpha" says nothing
    flat = s003.waf_rises_then_falls(zipf())
    assert flat.outcome == PARTLY and "says nothing here" in flat.evidence
    assert s003.waf_rises_then_falls(zipf(waf=seedlike, rounds=3)).outcome == UNTESTABLE


def test_003_throughput_and_the_hypothesis():
    seed = {"0.5": 1.2, "0.9": 0.8, "1.2": 1.2}
    tp = zipf(ops=lambda a, p, s: 200_000.0 * (seed[a] if p == "5" else 1.0))
    assert s003.preclude_throughput(tp).outcome == HELD
    assert s003.preclude_throughput(zipf()).outcome == NOT_HELD
    hyp = zipf(ops=lambda a, p, s: 240_000.0 if p == "5" else 200_000.0,
               waf=lambda a, p, s: 1.1 if p == "5" else 1.4)
    assert s003.preclude_lowers_waf(hyp).outcome == HELD
    assert s003.preclude_lowers_waf(tp).outcome == PARTLY    # faster at two alphas, WAF flat
    assert s003.preclude_lowers_waf(zipf()).outcome == NOT_HELD
    assert s003.preclude_lowers_waf(zipf(rounds=3)).outcome == UNTESTABLE


@pytest.mark.parametrize("sid", ["002", "003"])
def test_every_claim_is_untestable_without_rounds_and_names_its_pairs(sid: str):
    short = wal(rounds=3) if sid == "002" else zipf(rounds=3)
    full = wal() if sid == "002" else zipf()
    names = {c.name for c in full.cells}
    for cl in STUDIES[sid].claims:
        if cl.decide is not s002.wal_is_io:       # read from the traced components
            assert cl.decide(short).outcome == UNTESTABLE, cl.text
        v = cl.decide(full)
        assert v.pairs and all(a in names and b in names for a, b in v.pairs), cl.text
        if v.outcome != UNTESTABLE and cl.decide is not s002.wal_is_io:
            assert "over 5 rounds" in v.evidence, cl.text
    assert STUDIES[sid].seed_says and STUDIES[sid].answer(full)


def test_003_texts():
    r = zipf()
    fs = s003.findings(r)
    assert any("does not tell where the data ended up" in f for f in fs)
    assert any("What moves the traced write" in f for f in fs)
    a = s003.STUDY.answer(r)
    assert "the seed's read ratio" in a and "over 5 rounds" in a
    cols = [m.column for m in s003.STUDY.metrics]
    assert cols.index("last_level_byte_ratio") < cols.index("last_level_stored_ratio")
