"""The matrices' run order and the studies' verdict rule, on constructed
rounds: a difference counts only when the interval of the per-round ratios
lies wholly outside the matrix's A/A band (docs/matrices.md)."""
from __future__ import annotations

from collections import Counter

import pytest

from runners.experiments.run_matrix import AA, BASELINE, TRACED, WARMUP, Unit, schedule
from runners.experiments.scenario import Cell
from runners.experiments.studies.judge import MIN_ROUNDS, compare, median_interval
from runners.experiments.studies.results import Stat

CELLS = [Cell({"sync": s, "pin": p}) for s in (True, False) for p in ("P", "E", "none")]


def test_schedule_runs_every_cell_once_a_round_in_shuffled_order():
    units = schedule(CELLS, 5, seed=1)
    assert units[0] == Unit(CELLS[0], WARMUP, 0)     # cold caches: not counted
    units = units[1:]
    assert Counter(u.kind for u in units) == {BASELINE: 30, AA: 5, TRACED: 6}
    per_round = len(CELLS) + 1
    rounds = []
    pos = 0
    for r in range(5):
        size = per_round + (len(CELLS) if r == 2 else 0)   # traced runs: middle round
        chunk = units[pos:pos + size]
        pos += size
        assert {u.rep for u in chunk if u.kind != TRACED} == {r}
        assert sorted(u.cell.name for u in chunk if u.kind == BASELINE) == \
            sorted(c.name for c in CELLS)
        assert [u.cell for u in chunk if u.kind == AA] == [CELLS[0]]
        assert all(u.kind != TRACED for u in chunk) == (r != 2)
        rounds.append([u.key + u.cell.name for u in chunk if u.kind == BASELINE])
    assert len({tuple(r) for r in rounds}) > 1          # not the same order each round
    assert schedule(CELLS, 5, seed=1)[1:] == units      # but the same for a seed
    assert schedule(CELLS, 5, seed=2)[1:] != units
    assert [u.kind for u in schedule(CELLS, 0, seed=1)] == [TRACED] * 6


def test_two_aa_pairs_per_family_run_every_round(tmp_path):
    from runners.experiments.scenario import load
    f = tmp_path / "s.toml"
    f.write_text('name = "t"\ncommand = "db_bench --sync={sync} --threads={threads}"\n'
                 'repeats = 5\naa_by = "sync"\n[axes]\nsync = [true, false]\n'
                 'threads = [1, 2, 4]\n')
    sc = load(f)
    fams = sc.aa_cells()
    assert {k: [c.name for c in v] for k, v in fams.items()} == {
        "sync-true": ["sync-true_threads-1", "sync-true_threads-2"],
        "sync-false": ["sync-false_threads-1", "sync-false_threads-2"]}
    aa = [c for v in fams.values() for c in v]
    units = schedule(sc.cells(), 5, seed=1, aa=aa)[1:]
    for r in range(5):
        assert sorted(u.cell.name for u in units if u.kind == AA and u.rep == r) == \
            sorted(c.name for c in aa)
    f.write_text(f.read_text().replace('aa_by = "sync"', 'aa_by = "pin"'))
    with pytest.raises(ValueError, match="aa_by: must name an axis"):
        load(f)


def stat(rounds: list[float], aa: tuple[float, float] | None = (0.9, 1.1)) -> Stat:
    return Stat(sorted(rounds)[len(rounds) // 2], min(rounds), max(rounds), len(rounds),
                list(rounds), list(aa) if aa else [])


def test_median_interval_coverage():
    assert median_interval([5, 1, 4, 2, 3]) == (1, 5)      # n = 5: min and max, 94%
    assert median_interval(list(range(8))) == (1, 6)       # n = 8: 2nd, 7th: 93%
    assert median_interval(list(range(12))) == (2, 9)


def test_a_difference_above_the_noise_counts():
    a = stat([130, 125, 140, 128, 135])
    b = stat([100, 101, 99, 100, 102])
    c = compare(a, b)
    assert c.sign == ">" and c.lo > 1.1 and compare(b, a).sign == "<"
    # the band either way: ratios 0.9-1.1 stray from 1 by up to 1/0.9
    assert "over 5 rounds; A/A 0.90-1.11" in c.text()


def test_a_difference_inside_the_aa_band_does_not():
    # every round 8% apart, consistently: real perhaps, but no larger than
    # what two runs of one cell differ by here
    a = stat([108, 108, 108, 108, 108])
    b = stat([100] * 5)
    assert compare(a, b).sign == "~"
    # the same 8% on a quieter machine (A/A within 2%) counts
    assert compare(stat([108] * 5, (0.98, 1.02)), stat([100] * 5, (0.98, 1.02))).sign == ">"


def test_one_bad_round_keeps_the_interval_open():
    a = stat([130, 130, 130, 130, 95])     # drift in one round
    b = stat([100] * 5)
    assert compare(a, b).sign == "~"


def test_rounds_are_paired_not_pooled():
    # the machine drifts 40% over the rounds; a is 20% faster in every round
    drift = [1.0, 1.1, 1.2, 1.3, 1.4]
    a = stat([120 * d for d in drift])
    b = stat([100 * d for d in drift])
    assert a.lo < b.hi                      # the old rule (ranges overlap): no difference
    assert compare(a, b).sign == ">"


def test_the_aa_band_is_taken_either_way():
    # an A/A pair whose second run was always the faster: 0.76-0.96; which
    # run is "A" is arbitrary, so the noise reaches 1/0.76 = 1.32 too
    a, b = stat([99, 100, 101, 98, 102], (0.76, 0.96)), stat([100] * 5, (0.76, 0.96))
    c = compare(a, b)
    assert c.band == pytest.approx((0.76, 1 / 0.76)) and c.sign == "~"
    assert compare(stat([140] * 5, (0.76, 0.96)), stat([100] * 5, (0.76, 0.96))).sign == ">"


def test_too_few_rounds_or_no_aa_cannot_tell():
    c = compare(stat([130] * (MIN_ROUNDS - 1)), stat([100] * (MIN_ROUNDS - 1)))
    assert c.sign == "?" and "needs 5" in c.text()
    c = compare(stat([130] * 5, None), stat([100] * 5, None))
    assert c.sign == "?" and "A/A" in c.text()
    # a round missing from one cell is left out of the pairs
    assert compare(stat([130, 130, 130, 130, 130, float("nan")]),
                   stat([100] * 6)).rounds == 5


def test_the_disks_interrupt_cpus_are_recorded():
    from runners.experiments.run_matrix import block_irq_cpus
    text = ("           CPU0       CPU1       \n"
            " 34:        225          0 PCI-MSIX-0000:00:05.0   1-edge      virtio4-input\n"
            " 36:          0   32401191 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
            " 40:         12          3 PCI-MSIX-0000:00:04.0   0-edge      nvme0q0\n"
            "NMI:          0          0   Non-maskable interrupts\n")
    assert block_irq_cpus(text) == {"virtio1-req.0": [0, 32401191], "nvme0q0": [12, 3]}
    assert block_irq_cpus("") == {}


def test_traced_rounds_from_the_middle_out():
    from runners.experiments.run_matrix import traced_in
    assert traced_in(5, 1) == [2] and traced_in(5, 3) == [1, 2, 3]
    assert traced_in(5, 5) == [0, 1, 2, 3, 4] and traced_in(0, 1) == [0]
    units = schedule(CELLS, 5, seed=1, traced_rounds=5)[1:]
    traced = [u for u in units if u.kind == TRACED]
    assert len(traced) == 5 * len(CELLS)
    # every traced run its own unit (and folder); the middle round's is rep 0
    assert len({(u.cell.name, u.rep) for u in traced}) == len(traced)
    assert {u.rep for u in traced} == {0, 1, 2, 3, 4}


def test_a_cell_traced_in_rounds_takes_their_medians_and_all_their_trust(tmp_path):
    import json

    from runners.experiments.studies.judge import composition
    from runners.experiments.studies.model import HELD, NOT_DISTINGUISHABLE, UNTESTABLE
    from runners.experiments.studies.results import CellResult, traced_rounds
    runs = []
    for i, (mean, sync, trusted) in enumerate([(200, 150, True), (220, 120, True),
                                               (180, 150, True), (210, 100, True),
                                               (190, 140, True)]):
        d = tmp_path / f"traced{i}"
        d.mkdir()
        (d / "summary.json").write_text(json.dumps({"headline": {
            "lens": "rows", "trusted": trusted, "mean_ns": mean * 1e3,
            "components": {"wal_sync_io": sync * 1e3, "memtable": (mean - sync) * 1e3}}}))
        runs.append((d.name, d))
    cr = CellResult("c", {})
    traced_rounds(cr, runs)
    assert cr.lens_mean_us == 200 and cr.lens_mean_range == [180, 220] and cr.trusted
    shares = cr.round_shares(("wal_sync_io",))
    assert len(shares) == 5
    # 100/210 = 0.48 in one round: the interval crosses one half
    part = composition("sync", 0, 0, 0.5, cr.trusted, cr.lens, shares)
    assert part.verdict == NOT_DISTINGUISHABLE and "over 5 traced rounds" in part.evidence
    assert composition("sync", 0, 0, 0.4, cr.trusted, cr.lens, shares).verdict == HELD
    # one round whose lens is not trusted: the cell is not
    d = tmp_path / "traced3" / "summary.json"
    h = json.loads(d.read_text())
    h["headline"]["trusted"] = False
    d.write_text(json.dumps(h))
    traced_rounds(cr, runs)
    assert not cr.trusted
    assert composition("sync", 0, 0, 0.4, cr.trusted, cr.lens, shares).verdict == UNTESTABLE


def test_a_traced_sqlite_run_is_held_to_the_untraced_run_of_its_round():
    from runners.experiments.run_matrix import compare_traced, traced_rep
    rows = [{"kind": BASELINE, "rep": r, "benchmark": "new_order", "mean_us": m,
             "p50_us": m, "ops_sec": 1.0} for r, m in enumerate([100, 100, 130, 100, 100])]
    # round 2 ran slow, untraced and traced alike: its traced run reads 1.0
    rows.append({"kind": TRACED, "rep": traced_rep(2, 5), "benchmark": "new_order",
                 "traced_adj_mean_us": 130.0, "traced_adj_p50_us": 130.0, "ops_sec": 1.0})
    rows.append({"kind": TRACED, "rep": traced_rep(4, 5), "benchmark": "new_order",
                 "traced_adj_mean_us": 100.0, "traced_adj_p50_us": 100.0, "ops_sec": 1.0})
    compare_traced(rows, tpcc=True, repeats=5)
    assert [r["adj_vs_baseline_mean"] for r in rows if r["kind"] == TRACED] == [1.0, 1.0]
