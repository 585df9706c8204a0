"""Seed 002: disable_wal on/off for fillseq, fillrandom and readrandom."""
from __future__ import annotations

from typing import Callable

from analysis import components as K
from runners.experiments.studies.judge import (Comparison, alike, attribution,
                                               attribution_part, beside_untraced, compare,
                                               direction, ops, pct, per_op_us, traced_note, x)
from runners.experiments.studies.model import (UNTESTABLE, Claim, Metric, Part, Study, Verdict)
from runners.experiments.studies.results import WAL_PARTS, CellResult, Results

WRITE_BENCHES = ("fillseq", "fillrandom")
WAL_IO = ("wal_write_io", "wal_sync_io")      # the WAL's write(2)s and syncs
WAL_BUILD = ("wal_append", "crc")             # building the record, on the CPU
# two runs' flush bytes this close count as the same finished work (the
# same data flushes to the same bytes with the WAL or without)
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


def each(r: Results, part: Callable[[Results, str], list[Part]], figure: str | None = None,
         note: str = "") -> Verdict:
    """A claim judged per write benchmark: its parts on each, the claim's
    verdict from them (none ran: cannot be tested)."""
    parts = [p for b in benches(r) for p in part(r, b)]
    if not parts:
        return Verdict(UNTESTABLE, "no write benchmark ran with the WAL both on and off",
                       figure, pairs_of(r))
    return Verdict.of(parts, figure, pairs_of(r), note)


def no_rows(c: CellResult) -> str:
    return (f"the traced run of `{c.name}` has no rows "
            f"({c.no_rows or 'its results.json predates the recorded reason'})")


def throughput_parts(r: Results, b: str) -> list[Part]:
    off, on = cell(r, True, b), cell(r, False, b)
    t = direction(f"lower throughput with the WAL, {b} (off/on ops/s)",
                  compare(off.stat("ops_sec", b), on.stat("ops_sec", b)), ">")
    lat = direction(f"higher latency with the WAL, {b} (off/on avg us/op)",
                    compare(off.stat("micros_op", b), on.stat("micros_op", b)), "<")
    mbs = SEED_MBS.get(b)
    t.evidence += (f"; medians {off.value('ops_sec', b):,.0f} off, {on.value('ops_sec', b):,.0f} "
                   "on" + (f"; the seed {x(*mbs)}" if mbs else ""))
    return [t, lat]


def wal_costs(r: Results) -> Verdict:
    return each(r, throughput_parts, "throughput.png")


def close(a: float, b: float) -> bool:
    """Equal within EQUAL; unknown (NaN) counts as close."""
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
    if close(f0, f1):
        return off, on, ""
    later = f"{b},readrandom"
    if r.has(disable_wal=True, benchmarks=later) and r.has(disable_wal=False, benchmarks=later):
        o2, n2 = cell(r, True, later), cell(r, False, later)
        if close(o2.value("flush_bytes", b), n2.value("flush_bytes", b)):
            return o2, n2, (f" (from the {later} cells: on {b} alone the WAL-off run had "
                            f"flushed {f0 / 1e6:.1f} MB when db_bench read its statistics, "
                            f"the WAL-on run {f1 / 1e6:.1f} MB)")
    return None, None, (f"the WAL-off run had flushed {f0 / 1e6:.1f} MB, the WAL-on run "
                        f"{f1 / 1e6:.1f} MB of the same data when db_bench read its "
                        "statistics: a flush was still running in one of them, so their WAF "
                        "count different amounts of finished work")


def waf_parts(r: Results, b: str) -> list[Part]:
    """The SST-only WAF off against on (the claim's part: the seed's WAF
    cannot have counted the WAL's bytes), the WAL-inclusive one beside it."""
    name = f"same WAF with and without the WAL, {b} (off/on, SST bytes only)"
    off, on, note = waf_cells(r, b)
    if off is None or on is None:
        return [Part(name, UNTESTABLE, note)]
    s0, s1 = off.stat("sst_write_amplification", b), on.stat("sst_write_amplification", b)
    if s0 is None or s1 is None or not (s0.median or s1.median):
        return [Part(name, UNTESTABLE, "no flush or compaction happened, so no SST bytes to "
                     "compare")]
    p = alike(name, compare(s0, s1))
    w0, w1 = off.value("write_amplification", b), on.value("write_amplification", b)
    seed = f" (the seed: {SEED_WAF[b][0]:g} either way)" if b in SEED_WAF else ""
    p.evidence = (f"{s0.median:.2f} off, {s1.median:.2f} on{note}; {p.evidence}; counting the "
                  f"WAL's bytes (seed 003's definition) {w0:.2f} -> {w1:.2f}{seed}")
    return [p]


def waf_unchanged(r: Results) -> Verdict:
    return each(r, waf_parts)


def flat_band(c: Comparison) -> bool:
    """The A/A band is 1.00 (the metric never varied between two runs of
    one cell): any steady difference is called, however small."""
    return c.band is not None and c.band[1] < 1.005


def saf_parts(r: Results, b: str) -> list[Part]:
    """The seed's SAF, equal off and on or one way (its table's direction)."""
    seed = SEED_SAF.get(b, (1.0, 1.0))
    same = seed[0] == seed[1]
    name = (f"same SAF, {b}" if same else
            f"{'lower' if seed[1] < seed[0] else 'higher'} SAF with the WAL, {b} (off/on)")
    off, on = cell(r, True, b), cell(r, False, b)
    s0, s1 = off.stat("space_amplification", b), on.stat("space_amplification", b)
    if s0 is None or s1 is None:
        return [Part(name, UNTESTABLE, "the folder's size was not recorded in these runs")]
    c = compare(s0, s1)
    p = alike(name, c) if same else direction(name, c, ">" if seed[0] > seed[1] else "<")
    flat = (": the A/A pair's SAF never varied, so its band is 1.00 and any steady "
            "difference counts (docs/matrices.md as written)"
            if flat_band(c) and c.sign in "<>" else "")
    p.evidence = (f"{s0.median:.2f} off, {s1.median:.2f} on, the seed {seed[0]:g} and "
                  f"{seed[1]:g}; {p.evidence}{flat}")
    return [p]


def saf_as_seed(r: Results) -> Verdict:
    return each(r, saf_parts, note="SAF here is the DB folder's bytes when db_bench exited "
                "over the bytes written; the seed does not define its SAF, so directions "
                "count, not levels.")


def io_parts(r: Results, b: str) -> list[Part]:
    """The WAL's syscalls carry half the gap (WAL on - off) or more: the
    traced rows, against the untraced gap where a traced run failed its
    self-check (judge.attribution_part)."""
    name = f"the WAL's write(2)s and syncs carry half its cost or more, {b}"
    off, on = cell(r, True, b), cell(r, False, b)
    if not on.writes or not off.writes:
        return [Part(name, UNTESTABLE, no_rows(on if not on.writes else off))]
    d, total, _ = gap(r, off, on)
    io = sum(v for c, v in d if c in WAL_IO)
    build = sum(v for c, v in d if c in WAL_BUILD)
    at = attribution(off, on, io, total, b)
    p = attribution_part(name, at, IO_SHARE,
                         compare(on.stat("micros_op", b), off.stat("micros_op", b)))
    p.evidence = (f"the traced write gains {gap_text(r, off, on, top=4)}, the syscalls "
                  f"{io:+.2f} us, building the record {build:+.2f} us; {p.evidence}")
    return [p]


def wal_is_io(r: Results) -> Verdict:
    return each(r, io_parts, "breakdown.png")


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


def listed(xs: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return " and ".join(xs) if len(xs) < 3 else ", ".join(xs[:-1]) + f" and {xs[-1]}"


def cost_words(r: Results, b: str) -> str:
    """What the WAL does to one benchmark's throughput, rounded to what the
    A/A noise (+-10-20% here) supports: one decimal of a factor."""
    off, on = cell(r, True, b), cell(r, False, b)
    c = compare(off.stat("ops_sec", b), on.stat("ops_sec", b))
    if c.sign == "?":
        return f"slower or not on {b}, these runs cannot tell"
    if c.sign == "~":
        way = f"{c.ratio:.1f}x slower" if c.ratio >= 1 else f"{1 / c.ratio:.1f}x faster"
        return (f"{way} on {b} in the median round, but not beyond what two runs of one "
                "cell differ by here")
    slow = f"{c.ratio:.1f}x slower" if c.sign == ">" else f"{1 / c.ratio:.1f}x faster"
    return f"{slow} on {b} ({per_op_us(on, b):.1f} us instead of {per_op_us(off, b):.1f})"


def where_words(r: Results, bs: list[str]) -> str:
    """Where the WAL's time sits in a write, from the WAL-on cells' lenses
    where every one is trusted; otherwise that the split is not trusted."""
    ons = [cell(r, False, b) for b in bs]
    if all(c.writes and c.trusted for c in ons):
        shares = [f"{pct(n / t)}{' of the mean write' if not i else ''} on "
                  f"{c.values['benchmarks']}"
                  for i, (c, (n, t)) in enumerate((c, c.lens_part(WAL_IO)) for c in ons) if t]
        return f"In the traced writes, the WAL's write(2)s and syncs take {listed(shares)}."
    traced = [c for c in r.cells if c.writes]
    bad = [c for c in traced if not c.trusted]
    many = "all" if len(bad) == len(traced) else f"{len(bad)} of the"
    return (f"Where in a write the time goes these runs cannot say: {many} {len(traced)} "
            "traced runs failed their self-check, so their split is not trusted.")


def waf_words(r: Results, bs: list[str]) -> str:
    """Write amplification without the WAL's bytes and with them, the
    benchmarks that can be compared together, then those that cannot."""
    same, quiet, called, once, more, unflushed, unknown = [], [], [], [], [], [], []
    for b in bs:
        off, on, _ = waf_cells(r, b)
        if off is None or on is None:
            unflushed.append(b)
            continue
        s0, s1 = off.stat("sst_write_amplification", b), on.stat("sst_write_amplification", b)
        c = compare(s0, s1)
        if s0 is None or s1 is None or c.sign == "?":
            unknown.append((b, c.why))
            continue
        if c.sign in "<>":
            called.append(f"is {s1.median:.2f} with the WAL against {s0.median:.2f} on {b}")
        elif f"{s0.median:.2f}" == f"{s1.median:.2f}":
            same.append(f"{b} ({s0.median:.2f})")
        else:
            quiet.append(f"{b} ({s0.median:.2f} and {s1.median:.2f})")
        w0, w1 = off.value("write_amplification", b), on.value("write_amplification", b)
        if abs(w1 - w0 - 1) < 0.05:
            once.append(f"{w1:.2f}")
        else:
            more.append(f"{w1:.2f} against {w0:.2f} on {b}")
    own = ([f"shows no difference on {listed(same)}"] if same else []) \
        + ([f"shows no difference above the noise on {listed(quiet)}"] if quiet else []) \
        + called
    out = []
    if own:
        out.append(f"Without the WAL's bytes, write amplification {listed(own)}; "
                   + listed(([f"the WAL writes every byte once more "
                              f"({', '.join(dict.fromkeys(once))})"] if once else [])
                            + ([f"with them it is {listed(more)}"] if more else [])) + ".")
    if unflushed:
        out.append(f"On {listed(unflushed)} it cannot be compared: one run was still flushing "
                   "when db_bench read its statistics.")
    if unknown:
        out.append(f"On {listed([b for b, _ in unknown])} the rule cannot compare it "
                   f"({unknown[0][1] or 'not recorded'}).")
    return " ".join(out)


def saf_words(r: Results, bs: list[str]) -> str:
    """Space amplification with and without the WAL, per benchmark (those
    the rule calls alike grouped)."""
    out, quiet = [], []
    for b in bs:
        s0 = cell(r, True, b).stat("space_amplification", b)
        s1 = cell(r, False, b).stat("space_amplification", b)
        if s0 is None or s1 is None:
            continue
        c = compare(s0, s1)
        if c.sign in "<>":
            out.append(("slightly " if abs(c.ratio - 1) < 0.05 else "")
                       + f"{'lower' if c.sign == '>' else 'higher'} with the WAL on {b} "
                       f"({s1.median:.2f} against {s0.median:.2f}"
                       + (", called only because it never varied between runs"
                          if flat_band(c) else "") + ")")
        else:
            quiet.append(b)
    if quiet:
        out.append(f"no different above the noise on {listed(quiet)}")
    return ("Space amplification is " + listed(out) + ".") if out else ""


def answer(r: Results) -> str:
    bs = benches(r)
    if not bs:
        return "These runs have no write benchmark with the WAL both on and off."
    seed = [f"{SEED_MBS[b][0] / SEED_MBS[b][1]:.1f}x" for b in bs if b in SEED_MBS]
    seed_saw = f"; the seed saw {listed(seed)}" if len(seed) == len(bs) else ""
    unknown = [c for b in bs for c in [compare(cell(r, True, b).stat("ops_sec", b),
                                               cell(r, False, b).stat("ops_sec", b))]
               if c.sign == "?"]
    if len(unknown) == len(bs):
        head = (f"Whether the WAL slows RocksDB's writes these runs cannot tell "
                f"({unknown[0].why}){seed_saw}.")
    else:
        head = (f"The WAL makes RocksDB's writes {listed([cost_words(r, b) for b in bs])}"
                f"{seed_saw}.")
    return " ".join(t for t in (head, where_words(r, bs), waf_words(r, bs),
                                saf_words(r, bs)) if t)


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
    setup="db_bench 7.8, 1 thread, 800,000 operations per benchmark: fillseq, fillrandom, "
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
    full={"fixed": {"num": 800000, "write_buffer_size": 4 << 20}, "repeats": 5},
    quick={"fixed": {"num": 50000}, "repeats": 1,
           "axes": {"disable_wal": [True, False], "benchmarks": ["fillrandom"]}},
    flames=lambda r: [cell(r, False, "fillrandom").name, cell(r, True, "fillrandom").name],
)
