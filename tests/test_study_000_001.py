"""Studies 000 (WAL sync x P/E pinning) and 001 (manual_wal_flush): each
claim decided on constructed results that make it hold and not hold (a
verdict that cannot fail checks nothing), a comparison the rule cannot make
gives "cannot be tested here", and figures that were not measured are not
printed."""
from __future__ import annotations

from runners.experiments.studies import STUDIES, s000, s001
from runners.experiments.studies.model import (HELD, NOT_DISTINGUISHABLE, NOT_HELD, PARTLY,
                                               UNTESTABLE)
from runners.experiments.studies.results import CellResult, Results, Stat

DECLARED = {"cpu_types": "PE", "cpu_types_source": "declared"}
HYBRID = {"cpu_types": "PPEE", "cpu_types_source": "intel-hybrid-pmu"}


def stat(v: float, rounds: int = 5) -> Stat:
    """rounds within +-2% (the same drift in every cell), an A/A band of +-5%."""
    rs = [v * (1 + 0.02 * k) for k in (-1, -0.5, 0, 0.5, 1)][:rounds]
    return Stat(v, min(rs), max(rs), len(rs), rs, [0.95, 1.05])


def pe_results(ops: dict[tuple[bool, str], float], env: dict = DECLARED, rounds: int = 5,
               sync_share: float = 0.8, cpu_share: float = 0.9, writes: int = 1000,
               distrust: tuple[tuple[bool, str], ...] = ()) -> Results:
    """Study 000's six cells; ops: (sync, pin) -> fillrandom and overwrite ops/s.
    A synced write is sync_share the WAL sync and its queue, an unsynced one
    cpu_share on-CPU work and waiting for a CPU; the cells in distrust have a
    traced run whose lens is not trusted."""
    cells = []
    for (sync, pin), v in ops.items():
        if sync:
            wait = 100.0 * sync_share
            comps = {"wal_sync_io": wait / 2, "queue": wait / 2, "memtable": 10.0,
                     "sched_runq": 90.0 - wait}
        else:
            comps = {"memtable": 10.0, "sched_runq": 100.0 * cpu_share - 10.0,
                     "wal_write_io": 100.0 - 100.0 * cpu_share}
        cells.append(CellResult(
            name=f"sync-{str(sync).lower()}_pin-{pin}",
            values={"sync": str(sync).lower(), "pin": pin},
            metrics={b: {"ops_sec": stat(v, rounds)} for b in ("fillrandom", "overwrite")},
            writes=writes, mean_us=100.0, p99_us=300.0, comp_mean_us=dict(comps),
            comp_tail_us={"queue": 200.0, "memtable": 20.0, "sched_runq": 80.0},
            lens="rows", trusted=(sync, pin) not in distrust, lens_mean_us=100.0,
            lens_comp_us=dict(comps)))
    return Results("000", False, dict(env), cells)


def pe_ops(on: float = 9_000, off: float = 200_000, p_e_sync: float = 1.0,
           p_e_async: float = 1.0, free_over_p: float = 1.3) -> dict:
    """Unpinned sync=true `on`, sync=false `off`; P = unpinned / free_over_p;
    E = P / p_e."""
    out = {}
    for sync, base, pe in ((True, on, p_e_sync), (False, off, p_e_async)):
        p = base / free_over_p
        out |= {(sync, "none"): base, (sync, "P"): p, (sync, "E"): p / pe}
    return out


def claim(sid: str, i: int):
    return STUDIES[sid].claims[i].decide


def parts(v) -> list[str]:
    return [p.verdict for p in v.parts]


def test_000_sync_collapse_holds_and_fails():
    decide = claim("000", 0)
    v = decide(pe_results(pe_ops()))
    assert v.outcome == HELD and parts(v) == [HELD] * 3
    assert "over 5 rounds; A/A 0.95-1.05" in v.evidence and "a collapse" in v.evidence
    assert v.pairs == [("sync-false_pin-none", "sync-true_pin-none")]
    # faster without sync, and the sync dominates, but not 2x: the magnitude
    # is a note, not a part (the rule tests directions)
    v = decide(pe_results(pe_ops(on=150_000)))
    assert v.outcome == HELD and "Not a collapse" in v.evidence
    # sync=true as fast as sync=false (not distinguishable), the sync a small
    # part of the write (did not hold): no part for the claim
    v = decide(pe_results(pe_ops(on=200_000), sync_share=0.1))
    assert parts(v) == [NOT_DISTINGUISHABLE, NOT_DISTINGUISHABLE, NOT_HELD]
    assert v.outcome == NOT_HELD and "not above the noise" in v.evidence
    # sync=true faster, though the sync dominates its write: partly
    v = decide(pe_results(pe_ops(on=260_000)))
    assert parts(v) == [NOT_HELD, NOT_HELD, HELD] and v.outcome == PARTLY
    # three rounds: the rule cannot tell, and says why
    v = decide(pe_results(pe_ops(), rounds=3))
    assert v.outcome == UNTESTABLE and "3 paired rounds" in v.evidence
    # a synced traced run whose lens is not trusted: the share cannot be tested
    v = decide(pe_results(pe_ops(), distrust=((True, "none"),)))
    assert v.outcome == UNTESTABLE and "neither lens" in v.evidence


def test_000_declared_cores_are_untestable_with_the_measured_gap():
    r = pe_results(pe_ops(p_e_sync=1.0, p_e_async=1.3))
    for i in (1, 2):
        v = claim("000", i)(r)
        assert v.outcome == UNTESTABLE and "declared" in v.evidence
        assert parts(v)[-1] == UNTESTABLE       # the core type, named with why
        assert "over 5 rounds; A/A" in v.evidence and len(v.pairs) == 1
    # the sync still dominates: that part is judged, the claim still untestable
    assert parts(claim("000", 1)(r)) == [HELD, UNTESTABLE]
    # the same runs on identical cores: the rule's false-positive check
    assert "as it should" in claim("000", 1)(r).evidence
    assert "false positive" in claim("000", 2)(r).evidence


def test_000_kernel_named_cores_are_judged():
    sync_hides, async_shows = claim("000", 1), claim("000", 2)
    alike = pe_results(pe_ops(), env=HYBRID)
    # no P/E difference above the noise is not evidence of none
    v = sync_hides(alike)
    assert parts(v) == [HELD, NOT_DISTINGUISHABLE] and v.outcome == PARTLY
    assert "which does not show that there is none" in v.evidence
    v = async_shows(alike)
    assert parts(v) == [HELD, NOT_DISTINGUISHABLE] and v.outcome == PARTLY
    differ = pe_results(pe_ops(p_e_sync=1.3, p_e_async=1.6), env=HYBRID)
    assert async_shows(differ).outcome == HELD
    v = sync_hides(differ)                          # the types differ with sync too
    assert parts(v) == [HELD, NOT_HELD] and v.outcome == PARTLY
    v = sync_hides(pe_results(pe_ops(p_e_sync=1.3), env=HYBRID, sync_share=0.1))
    assert v.outcome == NOT_HELD
    # E faster unsynced is a difference too ("P/E differences show")
    assert async_shows(pe_results(pe_ops(p_e_async=1 / 1.6), env=HYBRID)).outcome == HELD
    # the CPU a small part of the unsynced write, no difference: did not hold
    v = async_shows(pe_results(pe_ops(), env=HYBRID, cpu_share=0.2))
    assert parts(v) == [NOT_HELD, NOT_DISTINGUISHABLE] and v.outcome == NOT_HELD
    # an untrusted unsynced lens: the CPU's share cannot be tested
    v = async_shows(pe_results(pe_ops(p_e_async=1.6), env=HYBRID,
                               distrust=((False, "none"),)))
    assert parts(v) == [UNTESTABLE, HELD] and v.outcome == UNTESTABLE
    assert s000.types_untestable(pe_results(pe_ops(), env={
        "cpu_types": "PE", "cpu_types_source": "cpufreq-max"})) is not None


def test_000_pinning_claim():
    decide = claim("000", 3)
    # declared: unpinned beats "P" in all four, but P > E cannot be tested,
    # and a claim with an untestable part is untestable
    v = decide(pe_results(pe_ops()))
    assert parts(v) == [HELD] * 4 + [UNTESTABLE] and v.outcome == UNTESTABLE
    assert "P faster than E: **cannot be tested here**" in v.evidence
    assert "four threads on 1 of this machine's 2 CPUs" in v.evidence
    assert len(v.pairs) == 2
    hybrid = dict(env=HYBRID)
    assert decide(pe_results(pe_ops(p_e_sync=1.3, p_e_async=1.3), **hybrid)).outcome == HELD
    v = decide(pe_results(pe_ops(), **hybrid))       # P and E alike
    assert parts(v) == [HELD] * 4 + [NOT_DISTINGUISHABLE] * 2 and v.outcome == PARTLY
    v = decide(pe_results(pe_ops(free_over_p=1.0), **hybrid))
    assert v.outcome == NOT_DISTINGUISHABLE
    v = decide(pe_results(pe_ops(free_over_p=1 / 1.3, p_e_sync=1 / 1.3, p_e_async=1 / 1.3),
                          **hybrid))
    assert v.outcome == NOT_HELD
    assert decide(pe_results(pe_ops(), rounds=1, **hybrid)).outcome == UNTESTABLE


def test_000_never_prints_unmeasured_migrations():
    r = pe_results(pe_ops())
    text = " ".join(STUDIES["000"].findings(r))
    assert "per 1000 writes" not in text and "not recorded" in text
    for c in r.cells:
        c.extra["migrations_per_1000"] = 2.5
    assert "2.5 per 1000 writes unpinned" in " ".join(STUDIES["000"].findings(r))


def test_000_findings_cite_no_untrusted_components():
    r = pe_results(pe_ops(), distrust=((False, "none"), (False, "P"), (True, "none")))
    text = " ".join(STUDIES["000"].findings(r))
    assert "failed their self-check" in text and "failed its self-check" in text
    assert "sched_runq" not in text and "grows most" not in text


def test_000_a_cell_without_rows_says_why():
    r = pe_results(pe_ops())
    on = r.cell(sync=True, pin="none")
    on.writes, on.comp_mean_us, on.no_rows = 0, {}, "none of its 2 windows held a write"
    assert "none of its 2 windows held a write" in " ".join(STUDIES["000"].findings(r))
    v = claim("000", 0)(r)
    assert v.outcome == UNTESTABLE and "none of its 2 windows" in v.evidence
    assert "%" not in STUDIES["000"].answer(r)


def test_000_answer_reads_the_rule_in_rounded_sentences():
    answer = STUDIES["000"].answer
    a = answer(pe_results(pe_ops()))
    # the direct answer first, ratios to two figures, no intervals
    assert a.startswith("Syncing every write costs most of the throughput")
    assert "from about 200,000 writes/s to 9,000, 22x" in a
    assert "[" not in a and "over 5 rounds" not in a
    assert "80% of a 100 us synced write" in a
    assert "cannot be tested" in a and "1.3x slower" in a
    h = answer(pe_results(pe_ops(p_e_sync=1.3), env=HYBRID))
    assert "cannot be tested" not in h and "from the P cores to the E cores made writes 1.3x " \
        "slower" in h
    # untrusted lenses: no component figure, and it says so
    u = answer(pe_results(pe_ops(), distrust=((True, "none"), (False, "none"))))
    assert "%" not in u and "failed its self-check" in u and "failed their self-check" in u
    # no difference: said as such, not as a cost
    n = answer(pe_results(pe_ops(on=200_000)))
    assert n.startswith("Syncing every write cost no throughput above this machine's noise")
    # --quick: no E cells
    q = pe_results({k: v for k, v in pe_ops().items() if k[1] != "E"})
    assert "The E cells were not run" in answer(q)
    for r in (pe_results(pe_ops()), pe_results(pe_ops(), env=HYBRID), q):
        assert len(answer(r).split()) <= 120


def test_000_a_traced_run_far_off_its_untraced_runs_is_noted():
    r = pe_results(pe_ops())
    assert STUDIES["000"].table_notes(r) == []
    free = r.cell(sync=False, pin="none")
    free.traced_ops = {"overwrite": 396_000.0, "fillrandom": 210_000.0}
    free.trusted = False
    notes = STUDIES["000"].table_notes(r)
    assert len(notes) == 1 and "ran overwrite at 396,000 ops/s, 1.98x its untraced median" \
        in notes[0] and "outside all 5 untraced runs" in notes[0]
    assert "no claim rests on its components" in notes[0]


def flush_results(ops: dict[tuple[bool, str, bool], float], rounds: int = 5,
                  comps: dict[tuple[bool, str, bool], dict[str, float]] | None = None,
                  trusted: bool = True) -> Results:
    """Study 001's eight cells; ops: (manual_wal_flush, benchmark, sync) -> ops/s."""
    cells = []
    for (flush, bench, sync), v in ops.items():
        c = (comps or {}).get((flush, bench, sync)) or (
            {"wal_sync_io": 100.0, "queue": 100.0, "wal_write_io": 4.0, "memtable": 6.0}
            if sync else {"wal_write_io": 0.0 if flush else 1.5, "queue": 1.0,
                          "memtable": 2.0})
        cells.append(CellResult(
            name=f"f{flush}_{bench}_s{sync}",
            values={"manual_wal_flush": str(flush).lower(), "benchmarks": bench,
                    "sync": str(sync).lower()},
            metrics={bench: {"ops_sec": stat(v, rounds), "micros_op": stat(2e6 / v, rounds)}},
            writes=1000, mean_us=sum(c.values()), comp_mean_us=dict(c),
            extra={"wal_writes": 0 if flush and not sync else 900},
            lens="rows", trusted=trusted, lens_mean_us=sum(c.values()), lens_comp_us=dict(c)))
    return Results("001", False, {}, cells)


def flush_ops(seq_t: float = 600_000, seq_f: float = 340_000, rnd_t: float = 360_000,
              rnd_f: float = 360_000, sync_t: float = 7_000, sync_f: float = 7_000) -> dict:
    return {(True, "fillseq", False): seq_t, (False, "fillseq", False): seq_f,
            (True, "fillrandom", False): rnd_t, (False, "fillrandom", False): rnd_f,
            (True, "fillseq", True): sync_t, (False, "fillseq", True): sync_f,
            (True, "fillrandom", True): sync_t, (False, "fillrandom", True): sync_f}


def test_001_true_worse_async():
    decide = claim("001", 0)
    assert decide(flush_results(flush_ops(seq_t=200_000, rnd_t=200_000))).outcome == HELD
    # slower on fillseq, nothing above the noise on fillrandom
    assert decide(flush_results(flush_ops(seq_t=200_000))).outcome == PARTLY
    v = decide(flush_results(flush_ops()))           # true faster on fillseq
    assert v.outcome == NOT_HELD and "fillseq (true/false throughput): **did not hold** (1.76x" \
        in v.evidence
    v = decide(flush_results(flush_ops(seq_t=340_000)))
    assert v.outcome == NOT_DISTINGUISHABLE and "not above the noise" in v.evidence
    assert decide(flush_results(flush_ops(), rounds=4)).outcome == UNTESTABLE
    assert v.pairs == [("fFalse_fillseq_sFalse", "fTrue_fillseq_sFalse"),
                       ("fFalse_fillrandom_sFalse", "fTrue_fillrandom_sFalse")]


def test_001_fillseq_faster_and_alike():
    decide = claim("001", 1)
    # fillseq faster under both settings, the option moving both the same way
    alike = flush_ops(seq_t=600_000, seq_f=400_000, rnd_t=450_000, rnd_f=300_000)
    assert decide(flush_results(alike)).outcome == HELD
    # the option faster on fillseq, nothing on fillrandom: not distinguishable
    assert decide(flush_results(flush_ops())).outcome == PARTLY
    slower = flush_ops(seq_t=300_000, seq_f=300_000, rnd_t=500_000, rnd_f=500_000)
    assert decide(flush_results(slower)).outcome == NOT_HELD
    assert decide(flush_results(alike, rounds=2)).outcome == UNTESTABLE


def test_001_no_effect_under_sync():
    decide = claim("001", 2)
    v = decide(flush_results(flush_ops()))
    # the sync dominates (held), no effect above the noise (not distinguishable)
    assert v.outcome == PARTLY and "WSL" not in v.evidence and "~3000 us/op" in v.evidence
    assert "no difference above the noise, which does not show that there is none" \
        in v.evidence
    v = decide(flush_results(flush_ops(sync_t=8_400)))   # true 1.2x faster, every round
    assert v.outcome == PARTLY and "a difference" in v.evidence
    spread = {k: {"wal_sync_io": 5.0, "queue": 5.0, "memtable": 90.0}
              for k in flush_ops() if k[2]}
    assert decide(flush_results(flush_ops(sync_t=8_400), comps=spread)).outcome == NOT_HELD
    assert decide(flush_results(flush_ops(), rounds=3)).outcome == UNTESTABLE
    # a share of an untrusted write cannot be tested: no lens splits it
    v = decide(flush_results(flush_ops(), trusted=False))
    assert v.outcome == UNTESTABLE and "neither lens" in v.evidence


def test_001_gap_explained_or_not():
    r = flush_results(flush_ops())          # fillseq: the write(2) and its queue go
    r.cell(manual_wal_flush=True, benchmarks="fillseq", sync=False).comp_mean_us["queue"] = 0.2
    r.cell(manual_wal_flush=True, benchmarks="fillseq", sync=False).mean_us = 2.2
    assert "that is the gap" in s001.explain_gap(r, "fillseq")
    t = r.cell(manual_wal_flush=True, benchmarks="fillseq", sync=False)
    t.comp_mean_us = {"wal_write_io": 1.4, "queue": 1.0, "memtable": 0.5}
    t.mean_us = 2.9
    assert "not explained by the option's mechanism" in s001.explain_gap(r, "fillseq")
    t.comp_mean_us, t.mean_us = {"wal_write_io": 1.5, "queue": 1.0, "memtable": 3.0}, 5.5
    assert "do not show the untraced gap's direction" in s001.explain_gap(r, "fillseq")
    t.writes, t.no_rows = 0, "the traced run ended before its first window opened"
    assert "ended before its first window opened" in s001.explain_gap(r, "fillseq")
    assert "ended before its first window opened" in " ".join(STUDIES["001"].findings(r))


def test_both_studies_quote_their_seed_and_answer():
    for sid, r in (("000", pe_results(pe_ops())), ("001", flush_results(flush_ops()))):
        s = STUDIES[sid]
        assert s.seed_says and s.answer is not None
        assert len(s.answer(r).split()) <= 120
    assert "five times" in STUDIES["001"].seed_says
    assert "WSL" not in STUDIES["001"].setup + STUDIES["001"].seed_says


def test_000_identical_cores_whose_median_gap_the_rule_does_not_call():
    r = pe_results(pe_ops())
    e = r.cell(sync=True, pin="E").metrics["fillrandom"]["ops_sec"]
    p = r.cell(sync=True, pin="P").metrics["fillrandom"]["ops_sec"]
    e.rounds = [x / y for x, y in zip(p.rounds, [0.7, 0.7, 0.72, 0.7, 0.98])]
    v = claim("000", 1)(r)
    assert v.outcome == UNTESTABLE and "0.70x [0.70-0.98]" in v.evidence
    assert "median ratio lies outside the A/A band" in v.evidence


def test_001_a_gap_the_traced_pair_loses_is_unexplained():
    r = flush_results(flush_ops())          # untraced: true 1.76x faster on fillseq
    t = r.cell(manual_wal_flush=True, benchmarks="fillseq", sync=False)
    f = r.cell(manual_wal_flush=False, benchmarks="fillseq", sync=False)
    t.traced_ops, f.traced_ops = {"fillseq": 270_000.0}, {"fillseq": 300_000.0}
    text = s001.explain_gap(r, "fillseq")
    assert "does not reproduce the gap" in text and "unexplained here" in text
    assert "0.45 of its untraced median" in text


def test_001_two_effects_are_alike_only_when_both_are_called_the_same_way():
    decide = claim("001", 1)
    # 1.50x against 1.43x, every round: both called faster, so alike
    r = flush_results(flush_ops(seq_t=600_000, seq_f=400_000, rnd_t=570_000, rnd_f=400_000))
    assert "moves both benchmarks alike (true/false on fillseq; on fillrandom): **held**" \
        in decide(r).evidence
    # faster on one, slower on the other: not alike
    r = flush_results(flush_ops(seq_t=600_000, seq_f=400_000, rnd_t=300_000, rnd_f=400_000))
    assert "alike (true/false on fillseq; on fillrandom): **did not hold**" in decide(r).evidence
