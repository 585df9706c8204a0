"""Study 004's verdicts on constructed results (5 rounds, an A/A band of
+-5%): each claim held, not held, and untestable where the rule cannot
tell; its findings (checkpoints in WAL's tail, lock_wait with one client
and with two); and the studies' figures: leaders beside followers, cell
labels whole at 1000 px, New-Order transactions a minute for a TPC-C-like
matrix; axes set by what can be read, queues per write, distrusted runs
marked (issue 45)."""
from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from runners.experiments.studies import results, s004
from runners.experiments.studies.model import (HELD, NOT_DISTINGUISHABLE, NOT_HELD, PARTLY,
                                               UNTESTABLE)
from runners.experiments.studies.results import CellResult, Results, Stat
from viz import figures, matrix

ROOT = Path(__file__).resolve().parent.parent
AA = "over 5 rounds; A/A 0.95-1.05"     # what every ruled comparison quotes here


def stat(v: float, spread: float = 0.02, rounds: int = 5) -> Stat:
    """Rounds within +-spread, an A/A band of +-5%."""
    ks = np.linspace(-1, 1, rounds)
    rs = [v * (1 + spread * k) for k in ks]
    return Stat(v, min(rs), max(rs), rounds, rs, [0.95, 1.05])


def comps(**kw: float) -> dict[str, float]:
    base = dict.fromkeys(s004.FILE_IO + ("lock_wait", "sql_exec", "sched_runq", "other"), 0.0)
    base.update(kw)
    return base


DELETE_TXN = comps(journal_sync_io=380, journal_write_io=140, db_sync_io=260, db_write_io=50,
                   dir_sync_io=85, journal_lifecycle=155, lock_wait=11, sql_exec=180, other=130)
# the -wal file's I/O, labelled db_* (the stale fd kind of the old run)
WAL_TXN = comps(db_sync_io=185, db_write_io=70, checkpoint=36, lock_wait=7, sql_exec=140,
                other=120)


def tpcc(wal_tpmc: float = 65_000, delete_tpmc: float = 25_000, rounds: int = 5,
         two_tpmc: float | None = None, delete_mean: float = 1300, wal_mean: float = 540,
         traced: bool = True, tail_by_type: bool = False) -> Results:
    """Four cells, DELETE and WAL at 1 and 2 clients; the 2-client cells'
    tpmC as the 1-client's unless two_tpmc scales WAL's."""
    cells = []
    for mode in ("delete", "wal"):
        for n in (1, 2):
            tp = wal_tpmc if mode == "wal" else delete_tpmc
            if n == 2 and two_tpmc is not None and mode == "wal":
                tp = two_tpmc
            mean = wal_mean if mode == "wal" else delete_mean
            p99 = 3548.0 if mode == "wal" else 2041.0
            txn = DELETE_TXN if mode == "delete" else WAL_TXN
            c = CellResult(
                name=f"journal_mode-{mode}_clients-{n}",
                values={"journal_mode": mode, "clients": str(n)},
                metrics={"new_order": {"tpmC": stat(tp, rounds=rounds),
                                       "mean_us": stat(mean, rounds=rounds),
                                       "p99_us": stat(p99, rounds=rounds)}})
            if traced:
                c.writes, c.mode = 1000, "budget"
                c.p99_us = 2906.0
                c.comp_tail_us = ({"checkpoint": 2732.0, "journal_sync_io": 266.0,
                                   "sql_exec": 207.0, "other": 727.0}
                                  if mode == "wal" else {"journal_sync_io": 609.0,
                                                         "sql_exec": 614.0})
                t = {"mean_us": sum(txn.values()), "components_us": dict(txn)}
                if tail_by_type and mode == "wal":
                    t.update(p99_us=3400.0, rows=450, checkpoints=5,
                             tail_components_us={"checkpoint": 2400.0, "sql_exec": 300.0,
                                                 "journal_sync_io": 300.0})
                c.extra = {"by_type": {"new_order": t}}
            else:
                c.no_rows = "the traced run ended before its first window opened"
            cells.append(c)
    return Results("004", False, {}, cells)


# --- claim 1: WAL's throughput -------------------------------------------
# a part per client count (tests/study_rule.py c004_1), the claim's verdict
# from its parts (model.claim_verdict)

PAIRS = [("journal_mode-delete_clients-1", "journal_mode-wal_clients-1"),
         ("journal_mode-delete_clients-2", "journal_mode-wal_clients-2")]


def test_wal_faster_holds_quoting_the_rule():
    v = s004.wal_faster(tpcc())
    assert v.outcome == HELD
    assert [p.verdict for p in v.parts] == [HELD, HELD]
    assert [p.name for p in v.parts] == [
        f"WAL above DELETE, {n} (WAL/DELETE New-Order transactions per minute)"
        for n in ("1 client", "2 clients")]
    assert AA in v.evidence and "2.60x" in v.evidence
    assert "1 client: WAL 65,000, DELETE 25,000" in v.evidence
    assert "tpmC" not in v.evidence and "not comparable to TPC-C" in v.evidence
    assert v.pairs == PAIRS


def test_wal_faster_inside_the_noise_is_not_distinguishable():
    # 3% apart every round: inside the A/A band, which is no evidence either way
    v = s004.wal_faster(tpcc(wal_tpmc=25_750))
    assert v.outcome == NOT_DISTINGUISHABLE and "not above the noise" in v.evidence
    # DELETE above WAL, called: the claim did not hold
    assert s004.wal_faster(tpcc(wal_tpmc=20_000)).outcome == NOT_HELD


def test_wal_faster_partly_when_one_client_count_differs():
    v = s004.wal_faster(tpcc(two_tpmc=25_100))
    assert v.outcome == PARTLY
    assert [p.verdict for p in v.parts] == [HELD, NOT_DISTINGUISHABLE]


def test_wal_faster_untestable_with_too_few_rounds():
    v = s004.wal_faster(tpcc(rounds=3))
    assert v.outcome == UNTESTABLE
    assert "3 paired rounds (the rule needs 5)" in v.evidence


# --- claim 2: the gap is I/O -------------------------------------------------
# an attribution per client count (tests/study_rule.py c004_2): file I/O's
# part of the traced DELETE - WAL gap, against the untraced gap where a
# traced run is not trusted

def test_io_cause_holds_and_names_the_wal_file_once():
    v = s004.io_is_the_cause(tpcc())
    assert v.outcome == HELD, v.evidence
    assert [p.verdict for p in v.parts] == [HELD, HELD]
    assert AA in v.evidence
    assert v.pairs == PAIRS
    # WAL's db_* went to the -wal file's journal_*: the note says how much
    assert "labelled 255 us of it `db_*`" in v.evidence
    # file I/O 779 us of the 833 us traced gap (1,391 - 558); untraced gap 1300 - 540
    assert "94% of the traced gap" in v.evidence and "+760 us a new_order" in v.evidence
    assert "not the workload's" not in v.evidence


def test_io_cause_does_not_hold_when_the_gap_is_sql():
    r = tpcc()
    for c in r.cells:
        if c.values["journal_mode"] == "delete":
            t = c.extra["by_type"]["new_order"]
            t["components_us"] = comps(**{**{k: v for k, v in WAL_TXN.items()
                                             if k not in ("checkpoint",)},
                                          "sql_exec": 900.0})
            t["mean_us"] = sum(t["components_us"].values())
    v = s004.io_is_the_cause(r)
    assert v.outcome == NOT_HELD and [p.verdict for p in v.parts] == [NOT_HELD, NOT_HELD]


def test_io_cause_without_a_gap_above_the_noise_is_not_distinguishable():
    v = s004.io_is_the_cause(tpcc(wal_mean=1290))
    assert v.outcome == NOT_DISTINGUISHABLE and "no gap above the noise" in v.evidence


def test_io_cause_untestable_without_traced_rows():
    v = s004.io_is_the_cause(tpcc(traced=False))
    assert v.outcome == UNTESTABLE
    assert "ended before its first window opened" in v.evidence


def test_io_cause_on_a_traced_run_off_its_untraced_runs_needs_the_untraced_gap():
    """A traced run whose mean reads >15% off its untraced runs' (the truth
    note) is not trusted for its microseconds: the traced share stands only
    where the untraced gap gives the same answer."""
    r = tpcc(delete_mean=5000)     # untraced gap 4,460 us: file I/O's 779 us is 17% of it
    w = r.cell(journal_mode="wal", clients=1)
    assert s004.io_is_the_cause(r).outcome == HELD          # every traced run trusted
    w.extra["traced_vs_untraced_mean"] = {"new_order": 0.73, "payment": 1.02}
    assert not s004.txn_trusted(w)
    v = s004.io_is_the_cause(r)
    assert [p.verdict for p in v.parts] == [PARTLY, HELD] and v.outcome == PARTLY
    assert ("the traced run of `journal_mode-wal_clients-1` reads more than 15% off its "
            "untraced runs' own latency") in v.evidence
    # where the untraced gap agrees, the traced share stands
    assert s004.io_is_the_cause(tpcc()).outcome == HELD
    r2 = tpcc()
    r2.cell(journal_mode="wal", clients=1).extra["traced_vs_untraced_mean"] = {"new_order": 0.7}
    assert s004.io_is_the_cause(r2).outcome == HELD


# --- findings and the answer ----------------------------------------------------

def test_checkpoints_are_measured_in_the_tail():
    f = s004.checkpoint_finding(tpcc(), 1)
    assert "2,732 us of the 3,932 us" in f and "69% of the tail" in f
    assert "every type" in f and AA in f
    g = s004.checkpoint_finding(tpcc(tail_by_type=True), 1)
    assert "its new_order transactions at or above their p99 (3,400 us)" in g
    assert "2,400 us of the 3,000 us" in g and "inside 5 of its 450" in g


def test_lock_wait_is_not_contention_with_one_client():
    f = s004.lock_wait_finding(tpcc())
    assert "not contention" in f and "11.0 us of a DELETE" in f and "7.0 us of a WAL" in f


def lock_wait(mean: float, p99: float, long: int = 0, share: float = 0.0,
              longest: float = 40.0) -> dict:
    """results.py lock_waits of a cell's traced rows, every type."""
    return {"rows": 1000, "mean_us": mean, "p99_us": p99, "over_us": 1000.0, "long": long,
            "max_us": longest, "max_type": "payment" if long else "new_order",
            "long_share": share}


def test_contention_judged_with_two_clients_only():
    r = tpcc()
    f = s004.contention_finding(r, "delete")
    assert "2 clients/1" in f and "no throughput above the noise" in f
    # new_order's mean lock_wait alone does not rule contention out
    assert "contention not judged" in f and "no contention" not in f
    one, two = (r.cell(journal_mode="delete", clients=n) for n in (1, 2))
    one.extra["lock_wait"] = lock_wait(8.1, 11.1)
    two.extra["lock_wait"] = lock_wait(8.3, 11.8, longest=60.0)
    f = s004.contention_finding(r, "delete")
    assert "mean 8.1 us -> 8.3 us, p99 11.1 us -> 11.8 us" in f
    assert "show no contention" in f
    # one long wait, a payment's: contention, though new_order's mean and
    # the p99 stayed where they were
    two.extra["lock_wait"] = lock_wait(181.4, 11.8, long=1, share=0.95, longest=458_777.0)
    f = s004.contention_finding(r, "delete")
    assert "no contention" not in f
    assert ("1 of the 1,000 with two clients waited over 1.0 ms for the other process's "
            "lock (the longest 458.8 ms, a payment), 95% of all their lock_wait time") in f
    one_client = Results("004", False, {}, [c for c in r.cells if c.values["clients"] == "1"])
    assert s004.contention_finding(one_client, "delete") is None


def test_lock_waits_count_the_long_ones_over_every_type():
    w = pd.DataFrame({"txn_type": ["new_order"] * 998 + ["payment", "stock_level"],
                      "lock_wait_adj_ns": [8_000] * 998 + [450_000_000, 1_050_000]})
    lw = results.lock_waits(w)
    assert lw["rows"] == 1000 and lw["long"] == 2 and lw["max_type"] == "payment"
    assert lw["p99_us"] == 8.0 and lw["mean_us"] > 400      # the mean moves, not the p99
    assert abs(lw["long_share"] - 451_050 / (451_050 + 998 * 8)) < 1e-9


def test_checkpoints_are_counted_from_the_compensated_column():
    """A Run loads checkpoint_adj_ns, not checkpoint_ns: the count of rows
    with a checkpoint comes from whichever the rows hold."""
    w = pd.DataFrame({"txn_type": ["new_order"] * 4 + ["payment"] * 2,
                      "dur_adj_ns": [300_000, 3_000_000, 400_000, 2_900_000, 200_000, 210_000],
                      "checkpoint_adj_ns": [0, 2_500_000, 0, 2_400_000, 0, 0]})
    by_type = {"new_order": {"components_us": {"checkpoint": 1225.0}},
               "payment": {"components_us": {"checkpoint": 0.0}}}
    results.by_type_tails(w, by_type)
    assert by_type["new_order"]["checkpoints"] == 2 and by_type["new_order"]["rows"] == 4
    assert by_type["payment"]["checkpoints"] == 0


def test_checkpoint_count_left_out_where_it_contradicts_the_time():
    r = tpcc(tail_by_type=True)
    t = r.cell(journal_mode="wal", clients=1).extra["by_type"]["new_order"]
    t["checkpoints"] = 0        # not counted, beside 36 us of checkpoint a transaction
    f = s004.checkpoint_finding(r, 1)
    assert "a checkpoint ran inside" not in f and "2,400 us of the 3,000 us" in f


def test_stalls_say_why_a_mean_exceeds_its_p99(tmp_path):
    cell_dir = tmp_path / "journal_mode-wal_clients-2"
    for rep, lat_ms in enumerate(([0.2] * 996 + [1932.0, 180.0, 330.0], [0.3] * 999)):
        d = cell_dir / f"baseline{rep}"
        d.mkdir(parents=True)
        pd.DataFrame({"type": ["payment"] * len(lat_ms),
                      "latency_ns": [int(x * 1e6) for x in lat_ms],
                      "ok": 1}).to_csv(d / "txlog.csv", index=False)
    # a failed transaction (the busy timeout) is not in the workload's means
    with open(cell_dir / "baseline1" / "txlog.csv", "a") as f:
        f.write("payment,10000000000,0\n")
    st = results.stalls(cell_dir)
    assert st["runs"] == 2 and st["transactions"] == 1998 and st["stalled"] == 3
    assert abs(st["longest_ms"] - 1932.0) < 1e-6
    lat = [0.2] * 996 + [1932.0, 180.0, 330.0] + [0.3] * 999
    assert abs(st["share"] - 2442.0 / sum(lat)) < 1e-9
    r = tpcc()
    c = r.cell(journal_mode="wal", clients=2)
    c.extra["stalls"] = st
    c.metrics["payment"] = {"mean_us": stat(1467.0), "p99_us": stat(92.0)}
    [note] = s004.stall_notes(r)
    assert "`journal_mode-wal_clients-2` (payment: mean over p99): 3 of its 1,998" in note
    assert "over 100 ms, the longest 1.9 s" in note and "busy handler" in note
    c.extra["stalls"] = {**st, "stalled": 0}
    assert s004.stall_notes(r) == []


def test_answer_is_one_paragraph_from_the_results():
    a = s004.answer(tpcc())
    assert "\n" not in a and len(a.split()) <= 120
    assert a.startswith("WAL committed 2.6 times DELETE's New-Order transactions per minute "
                        "(TPC-C-like, not comparable to TPC-C) with 1 client (about 65,000 "
                        "against 25,000) and 2.6 times with 2 clients")
    assert "tpmC" not in a and "[" not in a          # no intervals: rounded figures
    assert "about 830 us longer in DELETE mode, 94% of it file I/O" in a
    assert "checkpoints are 69% of the traced WAL run's p99 tail" in a
    assert "its new_order p99 is 3.5 ms against DELETE's 2.0 ms" in a
    assert "A second client added no throughput above the noise" in a
    assert "cannot tell" in s004.answer(tpcc(rounds=3))


def test_answer_cites_no_microseconds_of_an_untrusted_traced_run():
    r = tpcc()
    r.cell(journal_mode="wal", clients=1).extra["traced_vs_untraced_mean"] = {"new_order": 0.7}
    a = s004.answer(r)
    assert "file I/O" not in a and "checkpoints" not in a
    assert ("the traced runs with 1 client cannot say: the traced run of WAL reads more than "
            "15% off its untraced runs' own latency") in a
    assert "p99 is 3.5 ms" in a and len(a.split()) <= 120


def test_setup_and_table_name_the_throughput_as_tpcc_like():
    s = s004.STUDY
    tpm = "New-Order transactions per minute (TPC-C-like, not comparable to TPC-C)"
    assert s.metrics[0].column == "tpmC" and s.metrics[0].label == tpm
    assert tpm in s.setup and "1 warehouse" in s.setup
    assert "1 and 2 client processes" in s.setup and "10 s per run" in s.setup


def test_study_quotes_its_seed():
    s = s004.STUDY
    assert "1800 s" in s.seed_says and "10 warehouses" in s.seed_says
    assert "no repeat count" in s.seed_says and "quotes no number" in s.seed_says
    assert s.answer is s004.answer


# --- figures ---------------------------------------------------------------------

LONG = [f"alpha-{a}_preclude_last_level_data_seconds-{p}_preserve_internal_time_seconds-{q}"
        for a in ("0.5", "0.9", "1.2") for p in (0, 2, 5) for q in (0, 5)]


def fake_run(name: str, leader_us: float, follower_us: float) -> SimpleNamespace:
    """What groups_figure reads of a Run: writes with roles and queue parts."""
    n = 10
    w = pd.DataFrame({"leader": [True] * n + [False] * n,
                      "dur_adj_ns": [leader_us * 1e3] * n + [follower_us * 1e3] * n,
                      "queue_ns": [0] * n + [5000] * n,
                      "queue_behind_sync_ns": [0] * n + [3000] * n,
                      "queue_behind_wal_write_ns": [0] * n + [1000] * n,
                      "queue_other_ns": [0] * n + [1000] * n})
    return SimpleNamespace(name=name, writes=w, step=1,
                           summary={"groups": {"leaders": n, "followers": n}})


def test_groups_figure_puts_leaders_beside_followers():
    fig = figures.groups_figure([fake_run("sync-true", 400, 300),
                                 fake_run("sync-false", 20, 40)])
    roles = [t for t in fig.data if t.name in ("leader", "follower")]
    assert [t.name for t in roles] == ["leader", "follower"]      # one trace per role
    assert fig.layout.barmode == "group"
    assert roles[0].offsetgroup != roles[1].offsetgroup and roles[0].base is None
    assert list(roles[0].x) == [400, 20] and list(roles[1].x) == [300, 40]
    # the queue's parts do add up: stacked by hand, each on the last's end
    q = [t for t in fig.data if t.name.startswith("queue_")]
    assert list(q[1].base) == list(q[0].x) and q[0].offsetgroup == q[1].offsetgroup


def test_groups_figure_labels_long_cells_whole():
    fig = figures.groups_figure([fake_run(n, 100, 80) for n in LONG])
    labels = list(fig.data[0].y)
    assert len(set(labels)) == 18 and max(len(x) for x in labels) <= 40
    for name, label in zip(LONG, labels):
        a, p, q = name.split("-")[1].split("_")[0], name.split("-")[2][0], name.split("-")[3]
        assert label == f"alpha={a} preclude={p} preserve={q}"
    note = [a.text for a in fig.layout.annotations if "=" in a.text]
    assert note == ["preclude = preclude_last_level_data_seconds; "
                    "preserve = preserve_internal_time_seconds"]


def test_cell_labels_never_cut_a_name():
    labels, note = matrix.cell_labels(["journal_mode-delete_clients-1",
                                       "journal_mode-wal_clients-1"])
    assert labels == ["journal_mode=delete", "journal_mode=wal"] and note == ""
    assert matrix.cell_labels(["sync-on", "run 2"]) == (["sync-on", "run 2"], "")
    odd = "a run whose name is long and not a cell's name at all"
    assert matrix.cell_labels([odd])[0][0].replace("<br>", "") == odd
    # two cells that would read alike keep their whole names
    same = ["x-1_a_long_axis_name_here-1", "x-1_a_long_axis_name_here-1"]
    assert [x.replace("<br>", "") for x in matrix.cell_labels(same)[0]] == same


def matrix_frame(tpcc_cols: bool) -> pd.DataFrame:
    rows = []
    for cell, ops in (("journal_mode-delete_clients-1", 900.0),
                      ("journal_mode-wal_clients-1", 2400.0)):
        for kind, rep in (("baseline", 0), ("baseline", 1), ("baseline", 2), ("traced", 1)):
            for bench in (("new_order", "payment") if tpcc_cols else ("fillrandom",)):
                r = {"cell": cell, "kind": kind, "rep": rep, "benchmark": bench,
                     "ops_sec": ops + rep, "mean_us": 1e6 / ops, "p99_us": 3e6 / ops}
                if tpcc_cols:
                    r["tpmC"] = ops * 27 + rep
                rows.append(r)
    return pd.DataFrame(rows)


def test_throughput_figure_uses_new_orders_a_minute_for_a_tpcc_matrix():
    """The tpmC column, named as issue 45 asks: TPC-C-like, not TPC-C's."""
    fig = matrix.comparison_figure(matrix_frame(True))
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 1 and bars[0].name == "New-Order txns/min untraced"   # one bar a cell
    assert list(bars[0].x) == [900 * 27 + 1, 2400 * 27 + 1]      # the untraced medians
    title = fig.layout.annotations[0].text
    assert "New-Order txns/min (TPC-C-like)" in title and "tpmC" not in title
    assert "ops/s" not in title
    plain = matrix.comparison_figure(matrix_frame(False))
    assert "ops/s" in plain.layout.annotations[0].text
    assert list([t for t in plain.data if t.type == "bar"][0].x) == [901, 2401]


def test_throughput_figure_labels_eighteen_cells_whole():
    rows = [{"cell": n, "kind": "baseline", "rep": 0, "benchmark": "fillzipf",
             "ops_sec": 1000.0 + i, "micros_op": 5.0, "p99_us": 20.0}
            for i, n in enumerate(LONG)]
    fig = matrix.comparison_figure(pd.DataFrame(rows))
    ys = list(fig.data[0].y)
    assert len(set(ys)) == 18 and all(len(y) <= 40 for y in ys)
    assert fig.data[0].orientation == "h"


def test_the_old_004_results_read_whole():
    """The committed results.json (before the rule): every verdict says why
    it cannot be told, none says 'did not hold'."""
    path = ROOT / "studies" / "004-sqlite-journal" / "results.json"
    if not path.exists():
        return
    r = Results.load(path)
    if any(s.rounds for c in r.cells for per in c.metrics.values() for s in per.values()):
        return   # rerun under the rule: test_study_readmes checks it
    assert s004.wal_faster(r).outcome == UNTESTABLE
    assert all(f for f in s004.findings(r))
    assert json.dumps(s004.answer(r))


# --- the diff's words for SQLite's rows ------------------------------------------

def io_of(log_kind: str | None) -> dict:
    return {"syscalls": 35.0, "syncs": 0.95, "wal_bytes": 50_000.0, "log_kind": log_kind,
            "io_parquet": True,
            "by_kind": [{"kind": log_kind or "wal", "in_write": True, "calls": 25.0,
                         "syncs": 0.9, "bytes": 50_000.0}]}


def test_diff_names_the_log_file_and_the_rows():
    from viz import diff as VD
    lines = "\n".join(VD.io_lines(io_of("journal"), io_of("wal"), "transaction"))
    assert "journal / WAL bytes" in lines and "WAL bytes " not in lines.replace("/ WAL", "")
    assert "I/O per transaction" in lines and "journal (in txns)" in lines
    assert "in writes" not in lines
    assert "journal bytes" in "\n".join(VD.io_lines(io_of("journal"), io_of("journal"),
                                                   "transaction"))
    # RocksDB's table as it was
    rocks = "\n".join(VD.io_lines(io_of("wal"), io_of(None)))
    assert "WAL bytes" in rocks and "I/O per write" in rocks and "wal (in writes)" in rocks
    assert VD.rows_of("sqlite") == "transaction" and VD.rows_of("rocksdb") == "write"


def test_throughput_figure_keeps_axis_values_whole_and_rows_on_their_bars():
    """A cell's name strips its values' commas ('fillseqreadrandom'): the
    label reads the axis column's value; a cell of two benchmarks gets a row
    for each, so every bar sits on its own label; the ratio text starts past
    the whisker's end."""
    rows = []
    for cell, benches, value in (("disable_wal-true_benchmarks-fillseq", ("fillseq",), "fillseq"),
                                 ("disable_wal-true_benchmarks-fillseqreadrandom",
                                  ("fillseq", "readrandom"), "fillseq,readrandom")):
        for kind, rep in (("baseline", 0), ("baseline", 1), ("traced", 1)):
            for b in benches:
                rows.append({"cell": cell, "axis_disable_wal": "true", "axis_benchmarks": value,
                             "kind": kind, "rep": rep, "benchmark": b, "ops_sec": 1000.0 + rep,
                             "micros_op": 5.0, "p99_us": 20.0})
    fig = matrix.comparison_figure(pd.DataFrame(rows))
    bars = [t for t in fig.data if t.type == "bar"]
    ys = [y for t in bars for y in t.y]
    assert "benchmarks=fillseq,readrandom · readrandom" in ys and len(set(ys)) == 3
    assert fig.layout.barmode == "overlay" and all(t.offsetgroup is None for t in bars)
    text = next(t for t in fig.data if t.type == "scatter" and t.mode == "text")
    assert list(text.text) == ["1.00x"] * 3 and min(text.x) > 1001


# --- the figures of issue 45: axes set by what can be read, per write, the
# distrusted marked ---------------------------------------------------------

def txn_run(name: str, own_us: dict[str, float], trusted: bool = True) -> SimpleNamespace:
    """What types_figure reads of a SQLite Run: transactions by type with
    their components (sql_exec 600 us, journal_sync_io 400 us: 1 ms each)
    and the workload's own latency; its self-check's word on its rows."""
    rows = []
    for typ, own in own_us.items():
        rows += [{"txn_type": typ, "sql_exec_adj_ns": 600_000, "journal_sync_io_adj_ns": 400_000,
                  "app_latency_ns": own * 1e3}] * 4
    return SimpleNamespace(name=name, writes=pd.DataFrame(rows), step=1,
                           summary={"self_check": {"trusted": trusted}})


def test_types_figure_axis_is_set_by_the_bars_not_a_stalled_mean():
    """004's types.png ran to 100 ms for a traced own mean of 91 ms beside
    bars of about 1 ms: such a mark is left out, listed, and the axis
    follows the bars."""
    runs = [txn_run("journal_mode-delete_clients-1", {"new_order": 1100, "payment": 1050}),
            txn_run("journal_mode-delete_clients-2", {"new_order": 1150, "payment": 91_000})]
    fig = figures.types_figure(runs)
    mark = next(t for t in fig.data if t.name == "workload's own mean latency")
    assert sorted(mark.y) == [1050, 1100, 1150]            # the 91 ms mark is not drawn
    top = fig.layout.yaxis.range[1]
    assert 1150 <= top < 1.5 * 1150                       # the bars fill the plot
    [note] = [a.text for a in fig.layout.annotations if "not drawn" in a.text]
    assert "payment of journal_mode-delete_clients-2 91 ms" in note
    assert "under 10% of it" in note


def test_types_figure_leaves_out_an_untrusted_run_beside_trusted_ones():
    """004's two-client runs (untrusted) drew a lock wait of 0.8 s that
    flattened every trusted bar: beside a trusted run they are not drawn,
    and named; with no trusted run at all, every run is drawn, labelled."""
    runs = [txn_run("journal_mode-wal_clients-1", {"new_order": 1100}),
            txn_run("journal_mode-wal_clients-2", {"new_order": 900_000}, trusted=False)]
    fig = figures.types_figure(runs)
    assert list(fig.data[0].x[0]) == ["journal_mode-wal_clients-1"]
    mark = next(t for t in fig.data if t.name == "workload's own mean latency")
    assert list(mark.y) == [1100]
    assert fig.layout.yaxis.range[1] < 2000
    assert "not trusted: journal_mode-wal_clients-2" in next(
        a.text for a in fig.layout.annotations if "not drawn" in a.text)
    fig = figures.types_figure(runs[1:])
    assert "(untrusted)" in " ".join(map(str, fig.data[0].x[0]))
    # all trusted, every mark within its bars: nothing is listed
    fig = figures.types_figure(runs[:1])
    assert not [a for a in fig.layout.annotations if "not drawn" in a.text]


def test_groups_figure_queue_is_per_follower_write():
    """The right panel was ms in total over the run; now the mean follower
    write's queue (us), its parts adding up to that mean (5 us here)."""
    r = fake_run("sync-true", 400, 300)
    r.step = 7                      # a long run read 1 row in 7: a mean does not scale
    fig = figures.groups_figure([r])
    q = [t for t in fig.data if t.name.startswith("queue_")]
    assert [list(t.x) for t in q] == [[3.0], [1.0], [1.0]]
    assert "us per follower write" in fig.layout.xaxis2.title.text
    assert "ms total" not in fig.layout.xaxis2.title.text


def test_groups_and_breakdown_mark_an_untrusted_run():
    good, bad = fake_run("sync-true", 400, 300), fake_run("sync-false", 20, 40)
    bad.summary["self_check"] = {"trusted": False}
    fig = figures.groups_figure([good, bad])
    assert list(fig.data[0].y) == ["sync-true", "sync-false (untrusted)"]
    for r in (good, bad):
        r.sampled = False
        r.tail = SimpleNamespace(mean=lambda c: 1000.0)
    b, _ = figures.breakdown_figure([good, bad])
    assert list(b.data[0].y) == ["sync-true", "sync-false (untrusted)"]


def test_throughput_figure_marks_traced_runs_off_their_untraced_ones():
    df = matrix_frame(True)
    df["adj_vs_baseline_mean"] = [0.73 if (c.endswith("wal_clients-1") and k == "traced")
                                  else 1.0 for c, k in zip(df["cell"], df["kind"])]
    fig = matrix.comparison_figure(df)
    bar = next(t for t in fig.data if t.type == "bar")
    assert list(bar.y) == ["journal_mode=delete", "journal_mode=wal (untrusted)"]
    fig = matrix.comparison_figure(matrix_frame(True),
                                   untrusted=["journal_mode-delete_clients-1"])
    assert list(next(t for t in fig.data if t.type == "bar").y) == [
        "journal_mode=delete (untrusted)", "journal_mode=wal"]


def test_log_axes_label_whole_values_not_minor_digits():
    """Plotly's own log ticks print '2' and '5' between the powers of ten:
    every log axis here takes its tickvals and ticktext from viz/axes.py."""
    rows = [{"cell": f"c{i}", "kind": "baseline", "rep": 0, "benchmark": "fillrandom",
             "ops_sec": ops, "micros_op": 1e6 / ops, "p99_us": 5e6 / ops}
            for i, ops in enumerate((1_000.0, 40_000.0, 300_000.0))]
    fig = matrix.comparison_figure(pd.DataFrame(rows))
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis2.type == "log"
    for ax in (fig.layout.xaxis, fig.layout.xaxis2):
        assert ax.tickvals and len(ax.ticktext) == len(ax.tickvals)
        assert not any(re.fullmatch(r"\d", t) for t in ax.ticktext)
    assert "1,000" in fig.layout.xaxis.ticktext
    assert any(t.endswith(" us") or t.endswith(" ms") for t in fig.layout.xaxis2.ticktext)
    runs = [SimpleNamespace(name=f"r{i}", summary={
        "throughput": {"ops_per_s": ops},
        "writes": {"count": 10, "duration_adj": {"mean_ns": 1e9 / ops, "p99_ns": 5e9 / ops}}})
        for i, ops in enumerate((1_000.0, 40_000.0, 300_000.0))]
    t = figures.throughput_figure(runs)
    for ax in (t.layout.xaxis, t.layout.yaxis):
        assert ax.type == "log" and ax.tickvals
        assert not any(re.fullmatch(r"\d", x) for x in ax.ticktext)


def test_the_throughput_sentence_names_an_indistinguishable_client_count():
    """One client count called, one inside the noise: the second sentence
    says the metric again, shortly (it once raised a NameError there)."""
    said = s004.throughput_sentence(tpcc(two_tpmc=25_100), [1, 2])
    assert said.startswith("WAL committed 2.6 times DELETE's " + s004.TPM)
    assert said.endswith(f"With 2 clients, WAL's {s004.TPM_SHORT} were not "
                         "distinguishable from DELETE's here.")
    alone = s004.throughput_sentence(tpcc(wal_tpmc=25_750), [1, 2])
    assert alone.startswith("With 1 client and 2 clients, WAL's " + s004.TPM + " were")
