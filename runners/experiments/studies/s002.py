"""Seed 002: disable_wal on/off for fillseq, fillrandom and readrandom."""
from __future__ import annotations

from typing import Callable

from analysis import components as K
from runners.experiments.studies.judge import (Comparison, attributed, attribution,
                                               beside_untraced, called, compare, ops, pct, tally,
                                               traced_note, x)
from runners.experiments.studies.model import (HELD, NOT_HELD, PARTLY, UNTESTABLE, Claim, Metric,
                                               Study, Verdict)
from runners.experiments.studies.results import WAL_PARTS, CellResult, Results

WRITE_BENCHES = ("fillseq", "fillrandom")
WAL_IO = ("wal_write_io", "wal_sync_io")      # the WAL's write(2)s and syncs
WAL_BUILD = ("wal_append", "crc")             # building the record, on the CPU
# "equal" in the seed's table: a difference the rule calls, but under 3%,
# would not show in its one-decimal WAF (1.7 stands for 1.65-1.75)
EQUAL = 0.03
# the share of the gap the WAL's syscalls must carry for claim 4 to hold
IO_SHARE = 0.5
# a part of the traced gap worth a word on what caused it
RUNQ_PART = 0.10
# the seed's table: benchmark -> (WAL off, WAL on)
SEED_MBS = {"fillseq": (180.22, 51.73), "fillrandom": (77.33, 36.17)}
SEED_SAF = {"fillseq": (2.667, 2.06667), "fillrandom": (1.625, 1.625)}
SEED_WAF = {"fillseq": (2.0, 2.0), "fillrandom": (1.7, 1.7)}


def cell(r: Results, disable: bool, bench: str) -> CellResult:
    return r.cell(disable_wal=disable, benchmarks=bench)


def benches(r: Results) -> list[str]:
    """The write benchmarks run both with the WAL and without."""
    return [b for b in WRITE_BENCHES
            if r.has(disable_wal=True, benchmarks=b) and r.has(disable_wal=False, benchmarks=b)]


def pairs_of(r: Results) -> list[tuple[str, str]]:
    """(WAL off, WAL on) per write benchmark: diff B - A is what the WAL adds."""
    return [(cell(r, True, b).name, cell(r, False, b).name) for b in benches(r)]


def same(c: Comparison) -> str:
    """HELD where two values are equal by the rule (no difference above the
    noise) or within EQUAL; '?' -> UNTESTABLE."""
    if c.sign == "?":
        return UNTESTABLE
    return HELD if c.sign == "~" or abs(c.ratio - 1) < EQUAL else NOT_HELD


def said(c: Comparison) -> str:
    """The rule's comparison, with its reading."""
    if c.sign == "?":
        return f"the rule cannot tell: {c.text()}"
    return f"{c.text()}: {'not ' if c.sign == '~' else ''}above the noise"


Gap = tuple[list[tuple[str, float]], float, float]


def gap(r: Results, a: CellResult, b: CellResult) -> Gap:
    """B - A of the mean write (us): by component, largest first, the total
    and the residual (the total less the components' sum). walscope diff's
    own where the results hold it, else from the cells' component means."""
    df = r.diff(a.name, b.name) or {}
    if "components_ns" in df:
        d = [(c, v / 1e3) for c, v in df["components_ns"].items()]
        total, res = df["delta_mean_ns"] / 1e3, df["residual_ns"] / 1e3
    else:
        names = list(dict.fromkeys([*b.comp_mean_us, *a.comp_mean_us]))
        d = [(c, b.comp_mean_us.get(c, 0.0) - a.comp_mean_us.get(c, 0.0)) for c in names]
        total = b.mean_us - a.mean_us
        res = total - sum(v for _, v in d)
    d.sort(key=lambda kv: -abs(kv[1]))
    return d, total, res


def gap_text(r: Results, a: CellResult, b: CellResult, top: int | None = None) -> str:
    """'+4.27 us (sched_runq +2.24, wal_write_io +1.42, ...; residual +0.00
    us)': the first `top` components, then the rest together."""
    d, total, res = gap(r, a, b)
    d = [(c, v) for c, v in d if abs(v) >= 0.005]
    shown = [f"{c} {v:+.2f}" for c, v in d[:top]]
    if top is not None and len(d) > top:
        shown.append(f"the rest {sum(v for _, v in d[top:]):+.2f}")
    return (f"{total:+.2f} us (" + (", ".join(shown) or "no component moved")
            + f"; residual {res:+.2f} us)")


def each(r: Results, part: Callable[[Results, str], tuple[str, str]]) -> tuple[str, str]:
    """A claim judged per write benchmark: (outcome, the parts' evidence)."""
    judged = [part(r, b) for b in benches(r)]
    return tally([o for o, _ in judged]), "; ".join(t for _, t in judged)


def no_rows(c: CellResult) -> str:
    return (f"the traced run of `{c.name}` has no rows "
            f"({c.no_rows or 'its results.json predates the recorded reason'})")


def wal_costs(r: Results) -> Verdict:
    parts, outs = [], []
    for b in benches(r):
        off, on = cell(r, True, b), cell(r, False, b)
        t = compare(off.stat("ops_sec"), on.stat("ops_sec"))
        lat = compare(on.stat("micros_op"), off.stat("micros_op"))
        outs.append(tally([called(t, ">"), called(lat, ">")]))
        mbs = SEED_MBS[b]
        parts.append(f"{b}: WAL off {ops(off)}, on {ops(on)}, off/on {said(t)}; avg "
                     f"{off.value('micros_op'):.2f} vs {on.value('micros_op'):.2f} us/op, "
                     f"on/off {said(lat)} (the seed: {mbs[0]} vs {mbs[1]} MB/s, "
                     f"{x(*mbs)})")
    return Verdict(tally(outs), "; ".join(parts) + ".", "throughput.png", pairs_of(r))


def alike(a: float, b: float) -> bool:
    """Equal within EQUAL; unknown (NaN) counts as alike."""
    return a != a or b != b or abs(a - b) <= EQUAL * max(abs(a), abs(b))


def waf_cells(r: Results, b: str) -> tuple[CellResult | None, CellResult | None, str]:
    """The cells whose WAF can be compared: off, on and a note, or None,
    None and why not. The same data flushes to the same bytes with the WAL
    or without; where the two runs' flush bytes differ, db_bench read its
    statistics while a flush was still running in one of them (the run
    without the WAL ends sooner), and the cells followed by readrandom,
    whose statistics are read after the reads, stand in."""
    off, on = cell(r, True, b), cell(r, False, b)
    f0, f1 = off.value("flush_bytes", b), on.value("flush_bytes", b)
    if alike(f0, f1):
        return off, on, ""
    later = f"{b},readrandom"
    if r.has(disable_wal=True, benchmarks=later) and r.has(disable_wal=False, benchmarks=later):
        o2, n2 = cell(r, True, later), cell(r, False, later)
        if alike(o2.value("flush_bytes", b), n2.value("flush_bytes", b)):
            return o2, n2, (f" (from the {later} cells: on {b} alone the WAL-off run had "
                            f"flushed {f0 / 1e6:.1f} MB when db_bench read its statistics, "
                            f"the WAL-on run {f1 / 1e6:.1f} MB)")
    return None, None, (f"the WAL-off run had flushed {f0 / 1e6:.1f} MB, the WAL-on run "
                        f"{f1 / 1e6:.1f} MB of the same data when db_bench read its "
                        "statistics: a flush was still running in one of them, so their WAF "
                        "count different amounts of finished work")


def waf_text(r: Results, b: str) -> tuple[str, str]:
    """The SST-only WAF off against on (the claim's part), and the
    WAL-inclusive one beside it."""
    off, on, note = waf_cells(r, b)
    if off is None or on is None:
        return UNTESTABLE, f"{b}: {note}"
    s0, s1 = off.stat("sst_write_amplification", b), on.stat("sst_write_amplification", b)
    if s0 is None or s1 is None or not (s0.median or s1.median):
        return UNTESTABLE, f"{b}: no flush or compaction happened, so no SST bytes to compare"
    cmp = compare(s0, s1)
    w0, w1 = off.value("write_amplification", b), on.value("write_amplification", b)
    return same(cmp), (
        f"{b}{note}: without the WAL's bytes (the seed's sense) {s0.median:.2f} with the WAL "
        f"off, {s1.median:.2f} on, off/on {said(cmp)}; counting them (seed 003's "
        f"definition) {w0:.2f} -> {w1:.2f}, the WAL's {on.value('wal_bytes', b) / 1e6:.1f} "
        f"MB over {on.value('bytes_written', b) / 1e6:.1f} MB written (the seed: "
        f"{SEED_WAF[b][0]:g} either way)")


def waf_unchanged(r: Results) -> Verdict:
    out, ev = each(r, waf_text)
    return Verdict(out, ev + f". Equal: no difference above the noise, or under "
                   f"{pct(EQUAL)}.", None, pairs_of(r))


def saf_text(r: Results, b: str) -> tuple[str, str]:
    off, on = cell(r, True, b), cell(r, False, b)
    s0, s1 = off.stat("space_amplification"), on.stat("space_amplification")
    if s0 is None or s1 is None:
        return UNTESTABLE, f"{b}: the folder's size was not recorded in these runs"
    cmp = compare(s0, s1)
    seed = SEED_SAF[b]
    out = same(cmp) if seed[0] == seed[1] else called(cmp, ">")
    sst = [c.value("db_sst_bytes") / c.value("bytes_written") for c in (off, on)]
    return out, (f"{b}: {s0.median:.2f} with the WAL off, {s1.median:.2f} on (SST files "
                 f"alone {sst[0]:.2f} and {sst[1]:.2f}), off/on {said(cmp)} (the seed: "
                 f"{seed[0]:g} and {seed[1]:g})")


def saf_as_seed(r: Results) -> Verdict:
    out, ev = each(r, saf_text)
    return Verdict(out, "SAF here is the bytes the DB folder held when db_bench exited "
                   "(SST, WAL, MANIFEST, info log) over the bytes written; the seed does not "
                   "define its SAF, so compare directions, not levels (db_bench's values "
                   "compress to about half here). " + ev + ".", None, pairs_of(r))


def io_part(r: Results, b: str) -> tuple[str, str]:
    """What of the traced gap (WAL on - off) is the WAL's syscalls."""
    off, on = cell(r, True, b), cell(r, False, b)
    if not on.writes or not off.writes:
        return UNTESTABLE, f"{b}: {no_rows(on if not on.writes else off)}"
    d, _, _ = gap(r, off, on)
    moved = sum(v for _, v in d)
    io = sum(v for c, v in d if c in WAL_IO)
    build = sum(v for c, v in d if c in WAL_BUILD)
    if moved <= 0:
        return NOT_HELD, (f"{b}: the traced write is not slower with the WAL "
                          f"({gap_text(r, off, on)})")
    out = HELD if io >= IO_SHARE * moved else PARTLY if io > build else NOT_HELD
    at = attribution(off, on, io, moved, b)
    out, why = attributed(out, at, IO_SHARE, "the syscalls")
    return out, (f"{b}: the write gains {gap_text(r, off, on)}; the WAL's write(2)s and "
                 f"syncs are {io:.2f} us ({pct(io / moved)} of it), building the record "
                 f"{build:.2f} us; {at.text('the syscalls')}{why}")


def wal_is_io(r: Results) -> Verdict:
    out, ev = each(r, io_part)
    return Verdict(out, "WAL on - off, mean traced write: " + ev
                   + ". Held where the syscalls carry half the gap or more, partly where "
                   "they outweigh building the record; where a traced run failed its "
                   "self-check, held only if they carry half the untraced gap too "
                   "(judge.attributed).", "breakdown.png", pairs_of(r))


def runq_note(off: CellResult, on: CellResult) -> str:
    """sched_runq with and without the WAL: the mean traced write, the p99
    tail, its sum over the traced rows, and beside it the foreground
    threads' runnable time over the whole traced run (kernel accounting:
    inside writes or not, inside the windows or not), which is a different
    measure and need not move the same way."""
    m0, m1 = off.comp_mean_us.get("sched_runq", 0.0), on.comp_mean_us.get("sched_runq", 0.0)
    t0, t1 = off.comp_tail_us.get("sched_runq", 0.0), on.comp_tail_us.get("sched_runq", 0.0)
    # the rows' sum, ms: the mean over the rows read times the writes traced
    rows_ms = (m1 * on.writes / 1e3, m0 * off.writes / 1e3)
    run = ""
    if "fg_runq_s" in on.extra and "fg_runq_s" in off.extra:
        run_ms = (1e3 * on.extra["fg_runq_s"], 1e3 * off.extra["fg_runq_s"])
        rest = all(t >= w for t, w in zip(run_ms, rows_ms))
        run = (f". A different measure: over the whole traced run the kernel's accounting "
               f"has the foreground threads runnable {run_ms[0]:.1f} ms with the WAL against "
               f"{run_ms[1]:.1f} ms without, of which the traced writes hold {rows_ms[0]:.2f} "
               f"and {rows_ms[1]:.2f} ms (their mean times their count)"
               + (": the rest waited outside the traced writes (between writes, in writes "
                  "outside the windows, or in other foreground threads), which the per-write "
                  "figures do not count" if rest else ""))
    gap_us = on.mean_us - off.mean_us
    why = ("What took the CPU meanwhile is not recorded here"
           if abs(m1 - m0) >= RUNQ_PART * abs(gap_us) else
           f"At the mean the run queue is under {pct(RUNQ_PART)} of the traced gap")
    return (f"sched_runq ({K.meaning('sched_runq', 'rocksdb').split(' (')[0]}) is {m1:.2f} us "
            f"of the mean traced write with the WAL and {m0:.2f} without, {t1:.1f} and "
            f"{t0:.1f} us in the p99 tail{run}. {why}")


def findings(r: Results) -> list[str]:
    out = []
    for b in benches(r):
        off, on = cell(r, True, b), cell(r, False, b)
        if not on.writes or not off.writes:
            out.append(f"**What the WAL adds to a write ({b}).** Not measured: "
                       f"{no_rows(on if not on.writes else off)}.")
            continue
        wal = sum(on.comp_mean_us.get(c, 0) for c in WAL_PARTS)
        out.append(
            f"**What the WAL adds to a write ({b}).** The traced write takes "
            f"{on.mean_us:.2f} us with the WAL and {off.mean_us:.2f} us without: "
            f"{gap_text(r, off, on)} ({beside_untraced(off, on, gap(r, off, on)[1], b)}). "
            f"The WAL's own components are {wal:.2f} us "
            f"({pct(on.share(WAL_PARTS))} of the mean write, "
            f"{pct(on.share(WAL_PARTS, tail=True))} of the p99 tail); {runq_note(off, on)}. "
            f"({traced_note(on)}; without the WAL {traced_note(off)}.)")
    out.append(waf_finding(r))
    rr = readrandom(r)
    if rr:
        out.append(rr)
    return out


def waf_finding(r: Results) -> str:
    parts = []
    for b in benches(r):
        on = cell(r, False, b)
        parts.append(f"{b} {on.value('sst_write_amplification'):.2f} + "
                     f"{on.value('wal_bytes') / on.value('bytes_written'):.2f}")
    return ("**Write amplification with and without the WAL's bytes.** The seed's WAF is "
            "equal with the WAL on and off (2 and 1.7), so it cannot have counted the WAL; "
            "seed 003 defines WAF as (flush + compaction + WAL bytes) / bytes written. "
            "With the WAL on, that WAF is the SST part plus the WAL's: "
            + ", ".join(parts) + ": the WAL writes every byte once more, before the "
            "memtable's flush writes it again.")


def readrandom(r: Results) -> str | None:
    """The seed's design lists readrandom but its table has no figure."""
    key = "fillseq,readrandom"
    if not (r.has(disable_wal=True, benchmarks=key) and r.has(disable_wal=False, benchmarks=key)):
        return None
    off, on = cell(r, True, key), cell(r, False, key)
    a, c = off.stat("ops_sec", "readrandom"), on.stat("ops_sec", "readrandom")
    if a is None or c is None:
        return None
    return (f"**readrandom** (after a fillseq; the seed lists it but reports no figure): "
            f"{ops(off, 'readrandom')} with the WAL off, {ops(on, 'readrandom')} on; off/on "
            f"{said(compare(a, c))}. Reads do not touch the WAL.")


def waf_both(r: Results, b: str) -> str:
    """WAF off and on, without the WAL's bytes and with them, from the
    cells that can be compared; where those are not the benchmark's own
    (waf_cells), which they are, and the benchmark's own beside them, so
    the figures match the table's rows."""
    off, on, note = waf_cells(r, b)
    if off is None or on is None:
        return f"{b} not comparable ({note})"
    src = off.values["benchmarks"]
    own = ""
    if src != b:
        o, n = cell(r, True, b), cell(r, False, b)
        own = (f" (from the {src} cells, whose statistics db_bench read after every flush "
               f"had finished; the {b} cells' own: {o.value('sst_write_amplification', b):.2f} "
               f"and {n.value('sst_write_amplification', b):.2f}, read while a flush was "
               "still running in one of them)")
    return (f"{b} {off.value('sst_write_amplification', b):.2f} and "
            f"{on.value('sst_write_amplification', b):.2f} without its bytes, "
            f"{off.value('write_amplification', b):.2f} and "
            f"{on.value('write_amplification', b):.2f} with them{own}")


def largest(r: Results) -> str:
    """The component that makes most of the traced gap, per benchmark."""
    tops: dict[str, list[str]] = {}
    for b in benches(r):
        off, on = cell(r, True, b), cell(r, False, b)
        d = gap(r, off, on)[0] if on.writes and off.writes else []
        if d:
            c, v = d[0]
            tops.setdefault(c, []).append(
                f"{b} {v:+.2f} us: {on.comp_mean_us.get(c, 0):.2f} with the WAL, "
                f"{off.comp_mean_us.get(c, 0):.2f} without")
    return "; ".join(f"{c} ({K.meaning(c, 'rocksdb').split(' (')[0]}), on {', '.join(v)}"
                     for c, v in tops.items())


def untraced_gap(off: CellResult, on: CellResult, b: str) -> str:
    """The untraced gap a traced one stands for, in a clause, and whether
    the traced runs could be trusted."""
    at = attribution(off, on, 0.0, 0.0, b)
    return (f"an untraced gap of {at.untraced:+.2f} us/op ({at.source})"
            + (" (the traced runs failed their self-check: their microseconds are not "
               "the workload's)" if at.untrusted else ""))


def answer(r: Results) -> str:
    bs = benches(r)
    if not bs:
        return "These runs have no write benchmark with the WAL both on and off."
    out = []
    for b in bs:
        off, on = cell(r, True, b), cell(r, False, b)
        t = compare(off.stat("ops_sec"), on.stat("ops_sec"))
        traced = (f"the traced write gains {gap_text(r, off, on, top=4)}, against "
                  f"{untraced_gap(off, on, b)}"
                  if on.writes and off.writes else no_rows(on if not on.writes else off))
        out.append(f"On {b} RocksDB writes {ops(on)} with the WAL against {ops(off)} "
                   f"without (off/on {said(t)}); {traced}.")
    top = largest(r)
    waf = ", ".join(waf_both(r, b) for b in bs)
    saf = [f"{b} {cell(r, True, b).value('space_amplification'):.2f} and "
           f"{cell(r, False, b).value('space_amplification'):.2f}" for b in bs
           if cell(r, True, b).stat("space_amplification")]
    return (" ".join(out) + (f" The largest part of the gap is {top}." if top else "")
            + f" Write amplification, WAL off and on: {waf}"
            + (f". Space amplification (the DB folder over the bytes written), off and on: "
               f"{', '.join(saf)}." if saf else "."))


STUDY = Study(
    id="002", slug="disable-wal",
    title="disable_wal on/off: fillseq, fillrandom, readrandom",
    seed="002_0f83ef2c81bb6d43.txt",
    question="What does the WAL cost RocksDB's writes (throughput, latency, write "
             "amplification), and where in the write does that cost sit?",
    scenario="disable_wal.toml",
    seed_says="The seed ran RocksDB's db_bench with `disable_wal` on and off on an Intel "
              "Core i9-7940X, Ubuntu 22.04 (not a VM) and a Samsung SSD 860 2TB; its "
              "design lists fillseq, fillrandom and readrandom, and it gives no key count, "
              "value size or RocksDB version. Each figure is the average of 10 db_bench "
              "runs. Its hypothesis: enabling the WAL hurts latency and throughput. Its "
              "table (throughput in MB/s, SAF, WAF, and average latency without a unit, "
              "whose ratios match the throughput's as db_bench's micros/op would): WAL "
              "disabled, fillseq 180.22 MB/s, SAF 2.667, WAF 2, 0.61416; fillrandom "
              "77.33, 1.625, 1.7, 1.43117. WAL enabled, fillseq 51.73, 2.06667, 2, "
              "2.13972; fillrandom 36.17, 1.625, 1.7, 3.06011. "
              "So the WAL cost 3.5x the throughput on fillseq and 2.1x on fillrandom, WAF "
              "did not move (the seed defines neither WAF nor SAF; a WAF equal with and "
              "without the WAL cannot count the WAL's bytes), SAF was equal on fillrandom "
              "and lower with the WAL on fillseq. It reports no readrandom figure. It "
              "explains the cost from a diagram of `DBImpl::WriteToWAL`, which ends in "
              "write/pwrite, and a graph of the time spent writing the WAL: the WAL is I/O, "
              "and I/O is expensive.",
    setup="db_bench 7.8, 1 thread, 400,000 operations per benchmark: fillseq, fillrandom, "
          "and fillseq followed by readrandom, each with the WAL on and off. A 4 MiB write "
          "buffer (RocksDB's default is 64 MiB) makes this many writes flush and compact, "
          "as the seed's runs did (its WAF is 1.7-2). From --statistics: WAF without the "
          "WAL (flush + compaction bytes over the bytes written, what the seed's figures "
          "behave like) and with it (plus the WAL's bytes, seed 003's definition); SAF is "
          "the size of the DB folder when db_bench exited over the bytes written.",
    metrics=[Metric("ops_sec", "ops/s", "{:,.0f}"), Metric("micros_op", "avg us/op", "{:.2f}"),
             Metric("p99_us", "p99 us", "{:.1f}"),
             Metric("sst_write_amplification", "WAF w/o WAL", "{:.2f}"),
             Metric("write_amplification", "WAF with WAL", "{:.2f}"),
             Metric("space_amplification", "SAF", "{:.2f}")],
    claims=[
        Claim("Enabling the WAL lowers throughput and raises latency.", wal_costs),
        Claim("The WAL does not change write amplification (the seed: WAF 2 on fillseq, "
              "1.7 on fillrandom, on and off).", waf_unchanged),
        Claim("Space amplification is the same on fillrandom (1.625) and lower with the WAL "
              "on fillseq (2.067 against 2.667).", saf_as_seed),
        Claim("The WAL's cost is its I/O: WriteToWAL ends in write/pwrite calls.", wal_is_io),
    ],
    findings=findings,
    answer=answer,
    full={"fixed": {"num": 400000, "write_buffer_size": 4 << 20}, "repeats": 5},
    quick={"fixed": {"num": 50000}, "repeats": 1,
           "axes": {"disable_wal": [True, False], "benchmarks": ["fillrandom"]}},
    flames=lambda r: [cell(r, False, "fillrandom").name, cell(r, True, "fillrandom").name],
)
