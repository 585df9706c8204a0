"""Seed 004: SQLite's DELETE and WAL journal modes under a TPC-C-like load."""
from __future__ import annotations

from typing import Any

from runners.experiments.studies.judge import (TRUTH_TOLERANCE, Attribution, Comparison,
                                               attribution_part, compare, direction, distrust,
                                               of, pct, reading, traced_note, trust_note,
                                               truth_note)
from runners.experiments.studies.model import UNTESTABLE, Claim, Metric, Part, Study, Verdict
from runners.experiments.studies.results import CellResult, Results

TXN = "new_order"
# the transaction's file I/O: the journal (DELETE: -journal, WAL: -wal) and
# database files' writes and syncs, the directory sync, the journal's
# create/delete, checkpoints (all of their I/O)
FILE_IO = ("journal_sync_io", "journal_write_io", "db_sync_io", "db_write_io", "dir_sync_io",
           "journal_lifecycle", "checkpoint")
MODES = ("delete", "wal")
# the throughput's name: TPC-C's transaction mix, but not its rules (issue 45)
TPM = "New-Order transactions per minute (TPC-C-like, not comparable to TPC-C)"
TPM_SHORT = "New-Order transactions per minute"


def cell(r: Results, mode: str, clients: int) -> CellResult:
    return r.cell(journal_mode=mode, clients=clients)


def clients(r: Results) -> list[int]:
    return [n for n in (1, 2) if r.has(journal_mode="wal", clients=n)
            and r.has(journal_mode="delete", clients=n)]


def said(c: Comparison) -> str:
    """The rule's comparison (docs/matrices.md), with its reading."""
    if c.sign == "?":
        return f"the rule cannot tell: {c.text()}"
    what = {">": "above the noise", "<": "below, above the noise",
            "~": "not above the noise"}[c.sign]
    return f"{c.text()}: {what}"


def plural(n: int) -> str:
    return f"{n} client{'s' if n != 1 else ''}"


def us(v: float) -> str:
    return f"{v:,.0f} us" if abs(v) >= 100 else f"{v:.1f} us"


def txn(c: CellResult) -> dict[str, Any] | None:
    """The traced run's new_order transactions: mean_us, components_us (and,
    where results.py recorded them, p99_us, tail_components_us, rows,
    checkpoints)."""
    return c.extra.get("by_type", {}).get(TXN)


def one_log(comps: dict[str, float], mode: str) -> tuple[dict[str, float], float]:
    """The components with the journal file's I/O under one name in both
    modes: `journal_*` is the -journal file in DELETE mode and the -wal file
    in WAL mode. In WAL mode SQLite writes the database file only when it
    checkpoints, and walscope charges a checkpoint's I/O to `checkpoint`:
    a `db_*` there is the -wal file's I/O, labelled by a stale file kind
    (an fd whose close fell between windows, its number reused by the -wal
    file). Returns the components and the microseconds moved."""
    out, moved = dict(comps), 0.0
    if mode != "wal":
        return out, moved
    for io in ("write", "sync"):
        v = out.get(f"db_{io}_io", 0.0)
        out[f"journal_{io}_io"] = out.get(f"journal_{io}_io", 0.0) + v
        out[f"db_{io}_io"] = 0.0
        moved += v
    return out, moved


def relabel_note(c: CellResult, moved: float) -> str:
    return (f" (the -wal file's I/O is `journal_*` in both WAL cells; the traced run of "
            f"`{c.name}` labelled {us(moved)} of it `db_*`, a stale file kind: in WAL mode "
            "the database file is written only by checkpoints)") if moved > 0.05 else ""


def no_txn(c: CellResult) -> str:
    if not c.writes:
        return (f"the traced run of `{c.name}` has no rows "
                f"({c.no_rows or 'its results.json predates the recorded reason'})")
    return f"the traced run of `{c.name}` holds no {TXN} transaction"


def txn_trusted(c: CellResult) -> bool:
    """Whether the traced run's per-transaction microseconds may be cited:
    its self-check trusted its rows (judge.distrust) and its compensated
    mean of every transaction type is within judge.TRUTH_TOLERANCE of its
    untraced runs' own (judge.truth_note)."""
    return distrust(c) is None and not truth_note(c)


def distrust_why(c: CellResult) -> str:
    """Why a cell's traced microseconds are not the workload's, short."""
    if distrust(c) is not None:
        return "failed its self-check"
    return (f"reads more than {pct(TRUTH_TOLERANCE)} off its untraced runs' own latency")


class TxnGap(Attribution):
    """A gap between two cells' new_order transactions (DELETE - WAL), in
    SQLite's words: the untraced gap is that of the untraced runs' mean
    new_order latency (medians), and a cell is untrusted where its traced
    run failed its self-check or reads off its untraced runs (txn_trusted)."""

    def __init__(self, d: CellResult, w: CellResult, part: float, traced: float) -> None:
        bad = [c for c in (d, w) if not txn_trusted(c)]
        super().__init__(part, traced, d.value("mean_us", TXN) - w.value("mean_us", TXN),
                         f"{TXN} mean latency", [c.name for c in bad],
                         unit=f"us a {TXN}", digits=0,
                         why={c.name: distrust_why(c) for c in bad})

    def text(self, part: str = "file I/O") -> str:
        return super().text(part)


def wal_faster(r: Results) -> Verdict:
    parts, pairs, said_nums = [], [], []
    for n in clients(r):
        d, w = cell(r, "delete", n), cell(r, "wal", n)
        a, b = w.stat("tpmC", TXN), d.stat("tpmC", TXN)
        parts.append(direction(f"WAL above DELETE, {plural(n)} (WAL/DELETE {TPM_SHORT})",
                               compare(a, b), ">"))
        pairs.append((d.name, w.name))
        if a and b:
            said_nums.append(f"{plural(n)}: WAL {a.median:,.0f}, DELETE {b.median:,.0f}")
    if not parts:
        return Verdict.of([Part("WAL above DELETE", UNTESTABLE,
                                "no client count ran in both journal modes")])
    note = ((f"{TPM} (untraced medians), " + "; ".join(said_nums) + ". ") if said_nums
            else "") + ("The seed quotes no number: its figures of throughput per mode are "
                        "not in its text.")
    return Verdict.of(parts, "throughput.png", pairs, note)


def io_gap(d: CellResult, w: CellResult) -> tuple[float, float, dict[str, float]] | None:
    """new_order's traced mean, DELETE less WAL: (gap us, file I/O's part of
    it us, that part by component), the -wal file's I/O as `journal_*`."""
    td, tw = txn(d), txn(w)
    if not td or not tw:
        return None
    cd, _ = one_log(td["components_us"], "delete")
    cw, _ = one_log(tw["components_us"], "wal")
    by = {k: cd.get(k, 0.0) - cw.get(k, 0.0) for k in FILE_IO}
    return td["mean_us"] - tw["mean_us"], sum(by.values()), by


# the share of new_order's DELETE - WAL gap file I/O must carry to be "the cause"
CAUSE_SHARE = 0.5


def io_part(r: Results, n: int) -> tuple[Part, str]:
    """Claim 2 at one client count: file I/O carries at least CAUSE_SHARE
    of new_order's DELETE - WAL gap (judge.attribution_part: the traced
    share, checked against the untraced gap where a traced run is not
    trusted), and the split in words."""
    d, w = cell(r, "delete", n), cell(r, "wal", n)
    name = f"file I/O carries new_order's DELETE - WAL gap, {plural(n)}"
    g = io_gap(d, w)
    if g is None:
        return Part(name, UNTESTABLE, f"{no_txn(d) if not txn(d) else no_txn(w)}, so the "
                    "gap cannot be split"), ""
    gap, io, by = g
    lat = compare(d.stat("mean_us", TXN), w.stat("mean_us", TXN))
    at = TxnGap(d, w, io, gap)
    td, tw = txn(d), txn(w)
    moved = one_log(tw["components_us"], "wal")[1]
    top = sorted(by.items(), key=lambda kv: -kv[1])[:4]
    split = (f"{plural(n)}, traced {TXN}: {us(td['mean_us'])} in DELETE mode against "
             f"{us(tw['mean_us'])} in WAL mode, file I/O {us(io)} of the {us(gap)} "
             "difference: " + ", ".join(f"`{k}` {v:+,.0f} us" for k, v in top)
             + relabel_note(w, moved))
    part = attribution_part(name, at, CAUSE_SHARE, lat)
    if lat.sign in "<>":   # the rule's call on the untraced gap, beside the traced share
        part.evidence = f"untraced DELETE/WAL {TXN} mean latency {lat.text()}; {part.evidence}"
    return part, split


def io_is_the_cause(r: Results) -> Verdict:
    """At every client count: the untraced runs say whether there is a gap
    (DELETE/WAL new_order mean latency, by the rule), the traced rows where
    it goes."""
    ns = clients(r)
    if not ns:
        return Verdict.of([Part("file I/O carries new_order's gap", UNTESTABLE,
                                "no client count ran in both journal modes")])
    got = [io_part(r, n) for n in ns]
    splits = [s for _, s in got if s]
    note = ((" ".join(f"({s}.)" for s in splits) + " ") if splits else "") + (
        f"File I/O: the journal and database files' writes and syncs, the directory sync, "
        f"the journal's create and delete, checkpoints; the claim needs "
        f"{pct(CAUSE_SHARE)} of the gap. walscope measures the time these I/Os take; "
        "their counts per transaction are in the diffs below.")
    return Verdict.of([p for p, _ in got], "types.png",
                      [(cell(r, "delete", n).name, cell(r, "wal", n).name) for n in ns], note)


def checkpoint_tail(c: CellResult) -> tuple[str, float, float] | None:
    """(which tail, checkpoint us, all components us) of the traced run's
    p99 tail: new_order's own where results.json holds it, else that of all
    the cell's transactions."""
    t = txn(c) or {}
    if t.get("tail_components_us"):
        comps = t["tail_components_us"]
        where = (f"its {TXN} transactions at or above their p99 "
                 f"({us(t.get('p99_us', float('nan')))})")
    elif c.comp_tail_us:
        comps = c.comp_tail_us
        where = f"its transactions of every type at or above their p99 ({us(c.p99_us)})"
    else:
        return None
    return where, comps.get("checkpoint", 0.0), sum(comps.values())


def checkpoint_finding(r: Results, n: int) -> str | None:
    d, w = cell(r, "delete", n), cell(r, "wal", n)
    a, b = w.stat("p99_us", TXN), d.stat("p99_us", TXN)
    head = f"**Checkpoints in WAL's tail ({plural(n)}).** "
    p99 = (f"Untraced {TXN} p99: WAL {us(a.median)}, DELETE {us(b.median)}, WAL/DELETE "
           f"{said(compare(a, b))}. " if a and b else "")
    tail = checkpoint_tail(w)
    if tail is None:
        return head + p99 + f"Not split: {no_txn(w)}." if p99 else None
    where, ck, tot = tail
    out = (head + p99 + f"In WAL's traced run, checkpoints take {us(ck)} of the {us(tot)} "
           f"of {where}: {pct(ck / tot) if tot else 'n/a'} of the tail")
    t = txn(w) or {}
    mean_ck = t.get("components_us", {}).get("checkpoint", 0.0)
    if t:
        out += (f", against {us(mean_ck)} of the mean {TXN} ({us(t['mean_us'])}, "
                f"{pct(mean_ck / t['mean_us']) if t['mean_us'] else 'n/a'})")
    # a count of none beside checkpoint time in the mean is a count that
    # was not taken (results.json of before results.py counted the
    # compensated column): said only where the two agree
    n_ck = t.get("checkpoints", 0)
    if t.get("rows") and (n_ck > 0) == (mean_ck > 0):
        out += (f"; a checkpoint ran inside {n_ck:,} of its {t['rows']:,} traced {TXN} "
                f"transactions")
    out += (". A checkpoint copies the WAL's pages back into the database file and syncs "
            "it, inside the commit that crossed wal_autocheckpoint (1000 pages): the "
            "batched database write the seed describes, paid in full by that one commit, "
            "so it shows at the p99 and hardly in the mean")
    return out + f". ({traced_note(w)}.)"


def lock_wait_finding(r: Results) -> str | None:
    if 1 not in clients(r):
        return None
    vals = []
    for mode in MODES:
        t = txn(cell(r, mode, 1))
        if t:
            vals.append(f"{us(t['components_us'].get('lock_wait', 0.0))} of a "
                        f"{mode.upper()} {TXN}")
    if not vals:
        return None
    return ("**`lock_wait` with one client is not contention.** It is "
            + " and ".join(vals) + ". With one client process nothing else holds a lock, so "
            "this is the time of SQLite's own fcntl() lock calls (it takes and drops POSIX "
            "locks on the database file, and in WAL mode on the -shm index, several times a "
            "transaction), not a wait. "
            + ("Contention is judged below, where two clients ran." if 2 in clients(r) else
               "Contention cannot be judged here: no cell ran two clients."))


def ms(v_us: float) -> str:
    return f"{v_us / 1e3:,.1f} ms" if v_us < 1e6 else f"{v_us / 1e6:,.1f} s"


def lock_wait_change(one: dict[str, Any], two: dict[str, Any]) -> str:
    """lock_wait over all the traced rows of every type, one client against
    two (results.py lock_waits): the mean, the p99, and the long waits
    that only another process's lock makes."""
    out = (f"`lock_wait` over all the traced transactions of every type: mean "
           f"{us(one['mean_us'])} -> {us(two['mean_us'])}, p99 {us(one['p99_us'])} -> "
           f"{us(two['p99_us'])}; ")
    over = ms(two["over_us"])
    if two["long"]:
        return out + (
            f"{two['long']:,} of the {two['rows']:,} with two clients waited over {over} for "
            f"the other process's lock (the longest {ms(two['max_us'])}, a "
            f"{two['max_type'] or 'transaction'}), {pct(two['long_share'])} of all their "
            "lock_wait time: contention, in a few long waits, not in every transaction's")
    # without a long wait, a rise is more lock calls or waits too short to
    # tell from them: not called contention, not called its absence either
    flat = two["mean_us"] <= 1.1 * one["mean_us"] and two["p99_us"] <= 1.1 * one["p99_us"]
    return out + (f"no transaction waited over {over} (the longest {us(two['max_us'])})"
                  + (": the traced rows show no contention" if flat else
                     ", yet the mean or the p99 rose: waits too short to tell from the "
                     "lock calls themselves"))


def contention_finding(r: Results, mode: str) -> str | None:
    """Two clients against one, in one mode: what a second writer costs, by
    the rule, and the traced lock_wait of every transaction type, at the
    mean and at the tail."""
    if not {1, 2} <= set(clients(r)):
        return None
    one, two = cell(r, mode, 1), cell(r, mode, 2)
    tp = compare(two.stat("tpmC", TXN), one.stat("tpmC", TXN))
    lat = compare(two.stat("mean_us", TXN), one.stat("mean_us", TXN))
    out = (f"**Two clients, {mode.upper()}.** {TPM_SHORT}, 2 clients/1: {said(tp)}; untraced "
           f"{TXN} mean latency, 2/1: {said(lat)}")
    t1, t2 = txn(one), txn(two)
    lw1, lw2 = one.extra.get("lock_wait"), two.extra.get("lock_wait")
    if t1 and t2:
        out += f". Traced {TXN}: {us(t1['mean_us'])} -> {us(t2['mean_us'])}"
        if lw1 and lw2 and lw1["rows"] and lw2["rows"]:
            out += ". " + lock_wait_change(lw1, lw2)
        else:
            # results.json without lock_wait's spread: new_order's mean
            # alone cannot rule contention out
            out += (f", its mean `lock_wait` {us(t1['components_us'].get('lock_wait', 0.0))}"
                    f" -> {us(t2['components_us'].get('lock_wait', 0.0))} (contention not "
                    "judged: the rows' lock_wait of every type and its tail were not kept)")
        if lat.sign == ">":
            rise = two.value("mean_us", TXN) - one.value("mean_us", TXN)
            if t2["mean_us"] - t1["mean_us"] < 0.5 * rise:
                out += (f". The untraced {TXN} mean rose {us(rise)}, the traced rows' "
                        f"{us(t2['mean_us'] - t1['mean_us'])}: they do not hold that wait")
                st = two.extra.get("stalls")
                if st and st["stalled"]:
                    out += (f"; the untraced runs' transactions over {st['over_ms']:,.0f} ms "
                            f"(under the table) carry {pct(st['share'])} of that cell's "
                            "transaction time")
    else:
        out += f". Not split: {no_txn(one) if not t1 else no_txn(two)}"
    if tp.sign == "~":
        out += (". A second client adds no throughput above the noise: SQLite lets one "
                "writer at a time hold the database in either mode (every transaction "
                "here begins IMMEDIATE)")
    return out + "."


def mean_above_p99(c: CellResult) -> list[str]:
    """The transaction types whose untraced median mean exceeds their
    median p99."""
    return [b for b, per in c.metrics.items()
            if per.get("mean_us") and per.get("p99_us")
            and per["mean_us"].median > per["p99_us"].median]


def stall_notes(r: Results) -> list[str]:
    """Why a mean in the table can exceed its p99: a few transactions, fewer
    than 1 in 100, kept waiting far longer than any p99 (results.py
    stalls); said where the untraced runs hold any."""
    parts = []
    for c in r.cells:
        st = c.extra.get("stalls")
        if not st or not st["stalled"]:
            continue
        above = mean_above_p99(c)
        parts.append(
            f"`{c.name}`{' (' + ', '.join(above) + ': mean over p99)' if above else ''}: "
            f"{st['stalled']:,} of its {st['transactions']:,} committed transactions over "
            f"{st['runs']} untraced runs ({st['stalled'] / st['transactions']:.2%}) took "
            f"over {st['over_ms']:,.0f} ms, the longest {ms(st['longest_ms'] * 1e3)}, and "
            f"carry {pct(st['share'])} of their summed latency")
    if not parts:
        return []
    return ["(A few transactions with two clients wait far longer than any p99, and they "
            "lift a type's mean above its p99 without moving the p99: " + "; ".join(parts)
            + ". They are one client kept waiting for the other's write lock by SQLite's "
            "busy handler, which sleeps and retries (up to 100 ms a sleep, until the 10 s "
            "busy timeout) rather than queueing, and can miss each moment the lock is "
            "free.)"]


def findings(r: Results) -> list[str]:
    out = []
    for n in clients(r):
        for mode in MODES:
            c = cell(r, mode, n)
            t = txn(c)
            if not t:
                out.append(f"**{mode.upper()}, {plural(n)}:** not split: {no_txn(c)}.")
                continue
            comps, moved = one_log(t["components_us"], mode)
            top = sorted(comps.items(), key=lambda kv: -kv[1])[:4]
            out.append(
                f"**{mode.upper()}, {plural(n)}, {TXN} ({us(t['mean_us'])} mean):** "
                + ", ".join(f"`{k}` {us(v)}" for k, v in top) + relabel_note(c, moved)
                + f". ({traced_note(c)}.)" + (" " + trust_note(c) if trust_note(c) else "")
                + (f" (Its traced microseconds read more than {pct(TRUTH_TOLERANCE)} off its "
                   "untraced runs' own: the note under the table.)" if truth_note(c) else ""))
    for n in clients(r):
        f = checkpoint_finding(r, n)
        if f:
            out.append(f)
    for f in [lock_wait_finding(r)] + [contention_finding(r, m) for m in MODES]:
        if f:
            out.append(f)
    return out


def rounded(v: float) -> str:
    """A figure to two significant digits, as the noise here supports
    (the A/A band is +-15-20%): 72,531 -> 73,000, 713 -> 710."""
    return f"{float(f'{v:.2g}'):,.0f}" if abs(v) >= 10 else f"{v:.2g}"


def ms_or_us(v_us: float) -> str:
    return f"{v_us / 1e3:.1f} ms" if v_us >= 1000 else f"{rounded(v_us)} us"


def throughput_sentence(r: Results, ns: list[int]) -> str:
    """WAL against DELETE on New-Order transactions per minute, by the rule,
    at each client count."""
    cs = []
    for n in ns:
        d, w = cell(r, "delete", n), cell(r, "wal", n)
        cs.append((n, w.stat("tpmC", TXN), d.stat("tpmC", TXN),
                   compare(w.stat("tpmC", TXN), d.stat("tpmC", TXN))))
    if any(c.sign == "?" for *_, c in cs):
        why = next(c.why for *_, c in cs if c.sign == "?")
        return f"Whether WAL commits more {TPM} than DELETE, these runs cannot tell: {why}."
    called = [(n, a, b, c) for n, a, b, c in cs if c.sign in "<>"]
    quiet = [n for n, *_, c in cs if c.sign == "~"]
    out = ""
    for i, (n, a, b, c) in enumerate(called):
        out += (f"WAL committed {c.ratio:.1f} times DELETE's {TPM} with {plural(n)} (about "
                f"{rounded(a.median)} against {rounded(b.median)})" if i == 0 else
                f" and {c.ratio:.1f} times with {plural(n)}")
    out += ", above this machine's noise." if called else ""
    if quiet:
        out += (" " if out else "") + (
            f"With {' and '.join(plural(n) for n in quiet)}, WAL's "
            + (TPM if not out else TPM_SHORT)
            + " were not distinguishable from DELETE's here.")
    return out


def answer(r: Results) -> str:
    """The question answered in at most ~120 words: throughput by the rule,
    where new_order's time goes from traced runs that can be trusted, the
    tail, and what a second client does."""
    ns = clients(r)
    if not ns:
        return "Not answerable: no client count ran in both journal modes."
    out = [throughput_sentence(r, ns)]
    n = ns[0]
    d, w = cell(r, "delete", n), cell(r, "wal", n)
    g = io_gap(d, w)
    if g and txn_trusted(d) and txn_trusted(w) and g[0] > 0:
        gap, io, by = g
        out.append(
            f"In the traced runs with {plural(n)}, a new_order took about {ms_or_us(gap)} "
            f"longer in DELETE mode, {pct(io / gap)} of it file I/O: the rollback journal's "
            "writes, syncs, creation and deletion, the directory sync and the database "
            "file's syncs, where WAL appends to one file and syncs it.")
    elif g and not (txn_trusted(d) and txn_trusted(w)):
        out.append(f"Where new_order's time goes, the traced runs with {plural(n)} cannot "
                   "say: " + "; ".join(f"the traced run of {c.values['journal_mode'].upper()} "
                                      f"{distrust_why(c)}" for c in (d, w)
                                      if not txn_trusted(c)) + ".")
    elif g:
        out.append("The traced runs do not show DELETE's new_order as the slower one.")
    else:
        out.append(f"Where new_order's time goes is not split: "
                   f"{no_txn(d) if not txn(d) else no_txn(w)}.")
    a, b = w.stat("p99_us", TXN), d.stat("p99_us", TXN)
    if a and b:
        p = compare(a, b)
        if p.sign == ">":
            s = (f"WAL pays at the tail: its new_order p99 is {ms_or_us(a.median)} against "
                 f"DELETE's {ms_or_us(b.median)}")
        elif p.sign == "?":
            s = (f"Whether WAL's new_order p99 ({ms_or_us(a.median)}) differs from DELETE's "
                 f"({ms_or_us(b.median)}), the rule cannot tell")
        else:
            s = (f"WAL's new_order p99 ({ms_or_us(a.median)}) is "
                 + ("below DELETE's" if p.sign == "<" else "not distinguishable from "
                    "DELETE's") + f" ({ms_or_us(b.median)})")
        tail = checkpoint_tail(w)
        if tail and tail[2] and txn_trusted(w):
            s += (f", and checkpoints are {pct(tail[1] / tail[2])} of the traced WAL run's "
                  "p99 tail")
        out.append(s + ".")
    if {1, 2} <= set(ns):
        tps = [compare(cell(r, m, 2).stat("tpmC", TXN), cell(r, m, 1).stat("tpmC", TXN))
               for m in MODES]
        if all(c.sign == "~" for c in tps):
            out.append("A second client added no throughput above the noise in either "
                       "mode.")
        else:
            out.append("A second client, 2 clients over 1: " + "; ".join(
                f"{m.upper()} {c.ratio:.1f}x ({reading(c, 'more', 'less')})"
                if c.sign != "?" else f"{m.upper()}: {c.why}" for m, c in zip(MODES, tps))
                + ".")
    return " ".join(out)


STUDY = Study(
    id="004", slug="sqlite-journal",
    title="SQLite journal_mode DELETE vs WAL under a TPC-C-like load",
    seed="004_0e58bdea1df13d9d.txt",
    question="Why is SQLite faster with journal_mode=WAL than with the default DELETE under "
             "a TPC-C workload, and where does each transaction's time go?",
    scenario="sqlite_tpcc.toml",
    setup="runners/workloads/sqlite_tpcc: the TPC-C transaction mix (new_order 45%, payment 43%, "
          "order_status, delivery, stock_level 4% each) in Python's sqlite3, every "
          "transaction BEGIN IMMEDIATE ... COMMIT, synchronous=FULL, wal_autocheckpoint=1000 "
          "pages (SQLite's default), a 10 s busy timeout; 1 warehouse at 2% of the standard "
          "cardinalities, 1 and 2 client processes, 10 s per run: the seed's load scaled "
          "down to this 2-core VM and to 5 rounds of every cell. The throughput is "
          f"{TPM}: new_order transactions committed per minute by all the clients together, "
          "on 1 warehouse for 10 s, with none of TPC-C's keying and think times, its scale "
          "rules or its hours-long run, so it is not TPC-C's tpmC; the latencies are the "
          "driver's own clock per transaction type.",
    seed_says="A course lab report (week 14, \"Logging & Recovery in SQLite\") ran py-tpcc "
              "against SQLite in journal_mode DELETE and WAL: 10 warehouses, 1800 s per run, "
              "on Ubuntu 18.04.5, Linux 4.19.108, a Xeon Gold 5125 (10 cores, 40 threads), "
              "64 GB of memory and a Samsung 860 PRO 512 GB SATA SSD. It describes one run "
              "per mode and states no repeat count. Its results are two figures "
              "(throughput per journal mode, and the average per mode) that are not in its "
              "text, so it quotes no number. Its finding: WAL's throughput is higher than "
              "DELETE's across the board. Its explanation is the lab's hypothesis (\"the "
              "root cause of the performance gap between delete mode and wal is number of "
              "I/O occurs\"), argued, not measured: DELETE copies the old pages into a "
              "journal it creates and deletes every transaction and writes the new pages "
              "into the database, two I/Os per update; WAL appends the new pages once to "
              "the WAL file and writes the database later in one batch (the seed says at "
              "commit; in SQLite that is the checkpoint), so it makes far fewer open, "
              "close, create and delete system calls. It counted no I/O and no system call, "
              "and did not look at latency or its tail.",
    metrics=[Metric("tpmC", TPM, "{:,.0f}"), Metric("mean_us", "mean us", "{:,.0f}"),
             Metric("p99_us", "p99 us", "{:,.0f}"), Metric("count", "transactions", "{:,.0f}")],
    claims=[
        Claim("WAL journal mode gives higher transaction throughput than DELETE.", wal_faster),
        Claim("The cause is the number of I/Os: DELETE creates and deletes a journal per "
              "transaction and writes data twice; WAL appends once.", io_is_the_cause),
    ],
    findings=findings,
    answer=answer,
    table_notes=stall_notes,
    full={"fixed": {"duration": 10}, "repeats": 5},
    quick={"fixed": {"duration": 2}, "repeats": 1, "axes": {"clients": [1]}},
    flames=lambda r: [cell(r, "delete", 1).name, cell(r, "wal", 1).name],
)
