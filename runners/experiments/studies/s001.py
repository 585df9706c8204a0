"""Seed 001: manual_wal_flush true/false, fillseq and fillrandom, with and
without sync."""
from __future__ import annotations

from runners.experiments.studies.judge import (Comparison, attributed, attribution, compare,
                                               judged, ops, pct, reading, traced_note)
from runners.experiments.studies.model import (HELD, NOT_HELD, PARTLY, UNTESTABLE, Claim, Metric,
                                               Study, Verdict)
from runners.experiments.studies.results import CellResult, Results

BENCHES = ("fillseq", "fillrandom")
SYNC_WAIT = ("wal_sync_io", "queue")
# what manual_wal_flush takes out of an unsynced write: the WAL's write(2)
# and the followers' wait while their leader makes it
WAL_WRITE = ("wal_write_io", "queue")
# the share of the option's gap WAL_WRITE must carry to be called the gap
GAP_SHARE = 0.5


def cell(r: Results, flush: bool, bench: str, sync: bool) -> CellResult:
    return r.cell(manual_wal_flush=flush, benchmarks=bench, sync=sync)


def cmp(a: CellResult, b: CellResult) -> Comparison:
    """The rule on throughput, a over b."""
    return compare(a.stat("ops_sec"), b.stat("ops_sec"))





def no_rows(c: CellResult) -> str:
    return (f"`{c.name}` has no traced rows ("
            f"{c.no_rows or 'its results.json predates the recorded reason'})")


def option_effect(r: Results, bench: str, sync: bool) -> tuple[CellResult, CellResult,
                                                                 Comparison, str]:
    """manual_wal_flush true against false on one benchmark: the cells,
    the rule's comparison (true/false throughput), and the evidence."""
    t, f = cell(r, True, bench, sync), cell(r, False, bench, sync)
    c = cmp(t, f)
    return t, f, c, (f"{bench}: true {ops(t)}, false {ops(f)}; "
                     + judged("true/false", c, "true faster", "true slower"))


def flush_true_worse_async(r: Results) -> Verdict:
    parts, signs, pairs = [], [], []
    for b in BENCHES:
        t, f, c, ev = option_effect(r, b, False)
        parts.append(ev)
        signs.append(c.sign)
        pairs.append((f.name, t.name))
    ev = "sync=false, " + "; ".join(parts) + "."
    if "?" in signs:
        return Verdict(UNTESTABLE, ev, "throughput.png", pairs)
    worse = signs.count("<")
    out = NOT_HELD if ">" in signs or not worse else HELD if worse == 2 else PARTLY
    return Verdict(out, ev, "throughput.png", pairs)


def fillseq_faster(r: Results) -> Verdict:
    parts, held, pairs = [], 0, []
    for flush in (True, False):
        s, f = cell(r, flush, "fillseq", False), cell(r, flush, "fillrandom", False)
        c = cmp(s, f)
        pairs.append((f.name, s.name))
        parts.append(f"manual_wal_flush={str(flush).lower()}: fillseq {ops(s)}, fillrandom "
                     f"{ops(f)}; " + judged("fillseq/fillrandom", c, "fillseq faster",
                                            "fillrandom faster"))
        if c.sign == "?":
            return Verdict(UNTESTABLE, "sync=false, " + "; ".join(parts) + ".",
                           "throughput.png", pairs)
        held += c.sign == ">"
    # "the option affects both alike": the two benchmarks' true/false
    # intervals overlap (the rule compares two cells, not two effects)
    effect = [option_effect(r, b, False)[2] for b in BENCHES]
    alike = effect[0].lo <= effect[1].hi and effect[1].lo <= effect[0].hi
    ev = ("sync=false, " + "; ".join(parts) + ". The option's effect (true/false): "
          + "; ".join(judged(b, c, "true faster", "true slower")
                      for b, c in zip(BENCHES, effect))
          + (": the intervals overlap, alike" if alike else
             ": the intervals do not overlap, not alike") + ".")
    if "?" in {c.sign for c in effect}:
        return Verdict(UNTESTABLE, ev, "throughput.png", pairs)
    score = (held == 2) + alike
    return Verdict(HELD if score == 2 else PARTLY if score or held else NOT_HELD, ev,
                   "throughput.png", pairs)


def no_effect_under_sync(r: Results) -> Verdict:
    parts, signs, pairs, shares, empty = [], [], [], [], []
    for b in BENCHES:
        t, f, c, ev = option_effect(r, b, True)
        parts.append(ev + f"; avg {t.value('micros_op'):.0f} vs {f.value('micros_op'):.0f} "
                     "us/op")
        signs.append(c.sign)
        pairs.append((f.name, t.name))
        for x in (t, f):
            if x.writes:
                shares.append(x.share(SYNC_WAIT))
            else:
                empty.append(no_rows(x))
    ev = "sync=true, " + "; ".join(parts) + " (the seed saw ~3000 us/op)."
    if "?" in signs:
        return Verdict(UNTESTABLE, ev, "throughput.png", pairs)
    none = all(s == "~" for s in signs)
    if shares:
        ev += (f" In the traced synced runs the WAL sync and the queue behind it are "
               f"{pct(min(shares))}-{pct(max(shares))} of the mean write.")
    if empty:
        ev += " Not measured: " + "; ".join(empty) + "."
    dominated = bool(shares) and min(shares) > 0.5 and not empty
    if none:
        band = next((c.band for c in (option_effect(r, b, True)[2] for b in BENCHES)
                     if c.band), None)
        ev += (f" No difference above the noise; a smaller one, inside the A/A band "
               f"({band[0]:.2f}-{band[1]:.2f}), could not show." if band else "")
    else:
        ev += " The option's effect is above the A/A noise."
    score = none + dominated
    return Verdict(HELD if score == 2 else PARTLY if score else NOT_HELD, ev,
                   "throughput.png", pairs)


def components_gap(r: Results, a: CellResult, b: CellResult) -> tuple[float, dict[str, float],
                                                                        float]:
    """B - A of the traced mean write (us): its total, by component, and the
    residual the components leave; from walscope diff where it was made,
    else from the cells' component means."""
    d = r.diff(a.name, b.name)
    if d and "components_ns" in d:
        return (d["delta_mean_ns"] / 1e3, {k: v / 1e3 for k, v in d["components_ns"].items()},
                d["residual_ns"] / 1e3)
    comps = {k: b.comp_mean_us.get(k, 0.0) - a.comp_mean_us.get(k, 0.0)
             for k in {*a.comp_mean_us, *b.comp_mean_us}}
    delta = b.mean_us - a.mean_us
    return delta, comps, delta - sum(comps.values())


def explain_gap(r: Results, bench: str) -> str:
    """Where the option's throughput gap on one benchmark (sync=false) sits
    in the traced rows: explained when the write(2) it removes and the wait
    behind it carry most of the traced gap, which has the untraced sign."""
    t, f, c, ev = option_effect(r, bench, False)
    head = f"{ev}. "
    empty = [x for x in (f, t) if not x.writes]
    if empty:
        return head + "The rows cannot say where: " + "; ".join(map(no_rows, empty)) + "."
    delta, comps, resid = components_gap(r, f, t)   # true - false
    big = sorted(comps.items(), key=lambda kv: -abs(kv[1]))
    listed = ", ".join(f"`{k}` {v:+.2f}" for k, v in big if abs(v) >= 0.05) or "none"
    untraced = t.value("micros_op") - f.value("micros_op")
    s = (head + f"The traced mean write: {f.mean_us:.2f} us with false, {t.mean_us:.2f} with "
         f"true, {delta:+.2f} us (the untraced average {untraced:+.2f} us/op): {listed}, "
         f"residual {resid:+.2f}. ")
    if c.sign == "?":
        return s + "Whether the untraced runs differ, the rule cannot tell."
    if c.sign == "~":
        return s + ("The untraced runs differ by no more than the A/A noise: no gap to "
                    "explain.")
    tt, tf = t.traced_ops.get(bench), f.traced_ops.get(bench)
    if tt and tf and (tt > tf) != (c.sign == ">"):
        return s + (f"The traced pair does not reproduce the gap: traced, true ran at "
                    f"{tt:,.0f} ops/s ({tt / t.value('ops_sec'):.2f} of its untraced median) "
                    f"and false at {tf:,.0f} ({tf / f.value('ops_sec'):.2f}), so its rows "
                    "cannot say where the untraced gap comes from: it is unexplained here.")
    if (delta < 0) != (c.sign == ">"):
        return s + ("The traced rows do not show the untraced gap's direction: the gap "
                    "is unexplained here.")
    wal = sum(comps.get(k, 0.0) for k in WAL_WRITE)
    share = wal / delta if delta else 0.0
    at = attribution(f, t, wal, delta, bench)
    what = "the WAL write(2) and the queue behind it"
    beside = f" ({at.text(what)})"
    # the attribution rule (judge.attributed), as a claim's verdict would be:
    # HELD is "that is the gap"
    verdict, why = attributed(HELD if share >= GAP_SHARE else NOT_HELD, at, GAP_SHARE, what)
    if verdict == HELD:
        return s + (f"The WAL write(2) the option removes and the queue behind it are "
                    f"{pct(share)} of the traced gap{beside}: that is the gap{why}.")
    if share >= GAP_SHARE:
        return s + (f"The WAL write(2) the option removes and the queue behind it are "
                    f"{pct(share)} of the traced gap{beside}, but the traced runs were not "
                    f"trusted and they are under {pct(GAP_SHARE)} of the untraced gap: the rows "
                    "do not show that they are the whole gap.")
    return s + (f"The WAL write(2) and the queue behind it are only {pct(share)} of the "
                f"traced gap{beside}; the rest sits in the components above and is not "
                "explained by the option's mechanism.")


def findings(r: Results) -> list[str]:
    out = []
    f = cell(r, False, "fillrandom", False)
    t = cell(r, True, "fillrandom", False)
    if f.writes and t.writes:
        out.append(
            f"**What manual_wal_flush removes (sync=false, fillrandom).** With it off, every "
            f"write group issues its own WAL write(2): {f.extra.get('wal_writes') or 0:,} WAL "
            f"writes for {f.writes:,} traced writes, `wal_write_io` "
            f"{f.comp_mean_us.get('wal_write_io', 0):.2f} us of a {f.mean_us:.2f} us mean "
            f"write ({pct(f.share(('wal_write_io',)))}). With it on, db_bench never calls "
            f"FlushWAL, so the WAL stays in RocksDB's buffer until it fills: "
            f"{t.extra.get('wal_writes') or 0:,} WAL writes, `wal_write_io` "
            f"{t.comp_mean_us.get('wal_write_io', 0):.2f} us of {t.mean_us:.2f} us. "
            f"({traced_note(f)}; {traced_note(t)}.)")
    else:
        out.append("**What manual_wal_flush removes (sync=false, fillrandom).** Not "
                   "measured: " + "; ".join(no_rows(x) for x in (f, t) if not x.writes) + ".")
    for b in ran(r, False):
        out.append(f"**The option's gap on {b} (sync=false), component by component.** "
                   + explain_gap(r, b))
    if "fillrandom" not in ran(r, True):
        return out
    out.append("**Under sync (fillrandom).** " + under_sync(r))
    return out


def under_sync(r: Results) -> str:
    """What the option changes in a synced write's rows."""
    t, f = cell(r, True, "fillrandom", True), cell(r, False, "fillrandom", True)
    empty = [x for x in (t, f) if not x.writes]
    if empty:
        return "Not measured: " + "; ".join(map(no_rows, empty)) + "."

    def us(c: CellResult, comp: str, fmt: str = ".0f") -> str:
        return format(c.comp_mean_us.get(comp, 0.0), fmt)
    return ("A synced write group flushes and syncs the WAL whatever the option: "
            f"`wal_sync_io` plus the queue behind it is {pct(t.share(SYNC_WAIT))} of the "
            f"mean write with manual_wal_flush on and {pct(f.share(SYNC_WAIT))} with it off, "
            "and `wal_write_io` (the flush the option would defer, done right before the "
            f"sync) {us(t, 'wal_write_io', '.1f')} vs {us(f, 'wal_write_io', '.1f')} us. The "
            f"traced means: {t.mean_us:.0f} vs {f.mean_us:.0f} us, of which `wal_sync_io` "
            f"{us(t, 'wal_sync_io')} vs {us(f, 'wal_sync_io')} us and `queue` "
            f"{us(t, 'queue')} vs {us(f, 'queue')} us: the option adds or removes no step "
            "of a synced write.")


def ran(r: Results, sync: bool) -> list[str]:
    """The benchmarks run with this sync (--quick runs fewer)."""
    return [b for b in BENCHES if r.has(manual_wal_flush=True, benchmarks=b, sync=sync)
            and r.has(manual_wal_flush=False, benchmarks=b, sync=sync)]


def verdict_words(effects: list[tuple[str, Comparison]]) -> str:
    """Whether true made writes faster on these benchmarks, in a clause."""
    if any(c.sign == "?" for _, c in effects):
        return "these runs cannot tell"
    faster = [b for b, c in effects if c.sign == ">"]
    slower = [b for b, c in effects if c.sign == "<"]
    if not faster and not slower:
        return "not by more than this machine's A/A noise"
    words = [f"faster on {' and '.join(faster)}" if faster else "",
             f"slower on {' and '.join(slower)}" if slower else ""]
    rest = [b for b, c in effects if c.sign == "~"]
    return (" and ".join(w for w in words if w)
            + (f" (on {' and '.join(rest)} not above the A/A noise)" if rest else ""))


def answer(r: Results) -> str:
    unsynced = [option_effect(r, b, False) for b in ran(r, False)]
    synced = [option_effect(r, b, True) for b in ran(r, True)]
    s = (f"Without sync, deferring the WAL's write(2) (manual_wal_flush=true) made writes "
         f"{verdict_words([(b, p[2]) for b, p in zip(ran(r, False), unsynced)])}")
    if synced:
        s += (f"; with every write synced, "
              f"{verdict_words([(b, p[2]) for b, p in zip(ran(r, True), synced)])}")
    s += ". Unsynced, true against false: " + "; ".join(p[3] for p in unsynced) + ". "
    f, t = cell(r, False, "fillrandom", False), cell(r, True, "fillrandom", False)
    if f.writes and t.writes:
        s += (f"The rows show the mechanism: with false each write group makes a WAL "
              f"write(2) ({f.comp_mean_us.get('wal_write_io', 0):.2f} us of a "
              f"{f.mean_us:.2f} us mean write on fillrandom); with true db_bench never calls "
              f"FlushWAL and the write(2) leaves the write path "
              f"({t.comp_mean_us.get('wal_write_io', 0):.2f} us). ")
    if not synced:
        return s + "The synced cells were not run."
    s += "Synced: " + "; ".join(p[3] for p in synced)
    shares = [x.share(SYNC_WAIT) for p in synced for x in p[:2] if x.writes]
    if shares:
        s += (f"; the WAL's sync and the queue behind it are {pct(min(shares))}-"
              f"{pct(max(shares))} of a synced write, and a synced write group writes the "
              "WAL out before syncing it whatever the option")
    return s + "."


SEED_SAYS = (
    "A short English write-up. It describes the option inverted: it says RocksDB by "
    "default writes the WAL buffer to the OS (\"fwrite\") at every put, and that "
    "*disabling* manual_wal_flush defers this to DB::FlushWAL or a full buffer (in RocksDB "
    "it is manual_wal_flush=true that defers it), and it advises true where data must be "
    "kept and false for speed. Hypothesis: \"The fewer the flushes, the better the "
    "performance (latency).\" Design: manual_wal_flush true/false, fillseq and fillrandom, "
    "sync and async; throughput and latency measured; \"the average values from conducting "
    "each experiment five times\". Its environment and its results are pictures: the text "
    "gives no machine, sizes, thread count or table of numbers. What it found: (1) "
    "\"Performance is worse when true compared to false\"; (2) \"fillseq performs better "
    "than fillrandom, and the difference in manual_wal_flush is around 1000 [no unit "
    "given], showing no impact on the benchmark\"; (3) in synchronous mode \"latency is "
    "observed to be an overwhelmingly high 3000 micros/op, and performance can be better "
    "when true than false\", read as: the option does not affect sync mode. By its own "
    "reading of the option (false = fewer flushes) finding 1 agrees with its hypothesis; "
    "by RocksDB's (true = fewer write(2) calls) the hypothesis predicts the opposite of "
    "finding 1.")


STUDY = Study(
    id="001", slug="manual-wal-flush",
    title="manual_wal_flush on/off, fillseq and fillrandom, synced and not",
    seed="001_f671c143992ead5e.txt",
    question="Does deferring the WAL's write(2) to an explicit FlushWAL (manual_wal_flush) "
             "make writes faster, and does it matter when every write is synced?",
    scenario="manual_wal_flush.toml",
    setup="db_bench with its default sizes (key 16 B, value 100 B), 2 threads, 20,000 "
          "writes per thread, every combination of manual_wal_flush, benchmark and sync. "
          "The seed's text gives neither its sizes, its thread count nor its machine (its "
          "environment is a picture), so these are this repository's choices; its synced "
          "writes took ~3000 us/op, on a disk it does not name.",
    metrics=[Metric("ops_sec", "ops/s", "{:,.0f}"), Metric("micros_op", "avg us/op", "{:.1f}"),
             Metric("p99_us", "p99 us", "{:.1f}")],
    claims=[
        Claim("With asynchronous writes, manual_wal_flush=true performs worse than false.",
              flush_true_worse_async),
        Claim("fillseq performs better than fillrandom, and the option affects both alike.",
              fillseq_faster),
        Claim("Under sync, latency is dominated by the sync (~3000 us/op) and "
              "manual_wal_flush has no effect.", no_effect_under_sync),
    ],
    findings=findings,
    full={"fixed": {"num": 20000}, "repeats": 5},
    quick={"fixed": {"num": 50000}, "repeats": 1,
           "axes": {"manual_wal_flush": [True, False], "benchmarks": ["fillrandom"],
                    "sync": [False]}},
    flames=lambda r: [cell(r, True, "fillrandom", False).name,
                      cell(r, False, "fillrandom", False).name],
    seed_says=SEED_SAYS,
    answer=answer,
)
