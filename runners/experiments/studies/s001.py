"""Seed 001: manual_wal_flush true/false, fillseq and fillrandom, with and
without sync."""
from __future__ import annotations

from runners.experiments.studies.judge import (Comparison, alike, attributed, attribution,
                                               compare, composition, direction, judged, ops,
                                               pct, same_effect, traced_note)
from runners.experiments.studies.model import (HELD, NOT_HELD, UNTESTABLE, Claim, Metric, Part,
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
    parts, pairs = [], []
    for b in BENCHES:
        t, f, c, _ = option_effect(r, b, False)
        parts.append(direction(f"true slower than false, {b} (true/false throughput)", c, "<"))
        pairs.append((f.name, t.name))
    return Verdict.of(parts, "throughput.png", pairs, "sync=false.")


def fillseq_faster(r: Results) -> Verdict:
    parts, pairs = [], []
    for flush in (True, False):
        s, f = cell(r, flush, "fillseq", False), cell(r, flush, "fillrandom", False)
        pairs.append((f.name, s.name))
        parts.append(direction(f"fillseq faster than fillrandom, manual_wal_flush="
                               f"{str(flush).lower()} (fillseq/fillrandom throughput)",
                               cmp(s, f), ">"))
    effect = [option_effect(r, b, False)[2] for b in BENCHES]
    parts.append(same_effect("the option moves both benchmarks alike (true/false on "
                             "fillseq; on fillrandom)", *effect))
    return Verdict.of(parts, "throughput.png", pairs, "sync=false.")


def no_effect_under_sync(r: Results) -> Verdict:
    parts, pairs = [], []
    for b in BENCHES:
        t, f, c, _ = option_effect(r, b, True)
        pairs.append((f.name, t.name))
        for x, flush in ((t, "true"), (f, "false")):
            named, total = x.lens_part(SYNC_WAIT)
            parts.append(composition(f"the sync and the queue behind it dominate the write, "
                                     f"{b}, manual_wal_flush={flush}", named, total, 0.5,
                                     x.trusted, x.lens, x.round_shares(SYNC_WAIT))
                         if x.writes else
                         Part(f"the sync dominates, {b}, manual_wal_flush={flush}",
                              UNTESTABLE, no_rows(x)))
        parts.append(alike(f"no effect of the option, {b} (true/false throughput)", c))
    return Verdict.of(parts, "throughput.png", pairs, "sync=true; the seed saw ~3000 us/op.")


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


def effect_words(effects: list[tuple[str, Comparison]]) -> str:
    """What the option did to throughput on these benchmarks, in a clause."""
    if any(c.sign == "?" for _, c in effects):
        return "these runs cannot tell what it did"
    said = {">": "made writes faster", "<": "made writes slower"}
    called = [f"{said[c.sign]} on {b} ({c.ratio:.2f}x)" for b, c in effects if c.sign in said]
    quiet = [f"{b} {c.ratio:.2f}x" for b, c in effects if c.sign == "~"]
    band = next((c.band for _, c in effects if c.band), None)
    noise = (f"moved throughput by no more than this machine's noise ({', '.join(quiet)}; "
             f"two runs of one cell differ by up to {band[1]:.2f}x)" if quiet and band else "")
    return " and ".join(w for w in (" and ".join(called), noise) if w)


def answer(r: Results) -> str:
    unsynced = [(b, option_effect(r, b, False)[2]) for b in ran(r, False)]
    synced = [(b, option_effect(r, b, True)[2]) for b in ran(r, True)]
    s = (f"Without sync, deferring the WAL's write(2) (manual_wal_flush=true) "
         f"{effect_words(unsynced)}. ")
    f, t = cell(r, False, "fillrandom", False), cell(r, True, "fillrandom", False)
    if f.writes and t.writes and f.trusted and t.trusted:
        s += (f"The mechanism shows in the traced writes: with false each write group "
              f"spends {f.lens_comp_us.get('wal_write_io', 0):.1f} us of "
              f"{f.lens_mean_us:.1f} in the WAL's write(2); with true that leaves the "
              "write path. ")
    elif f.writes and t.writes:
        s += ("How much of a write the write(2) is, the traced runs cannot say: "
              "their self-check did not trust them. ")
    if not synced:
        return s + "The synced cells were not run."
    s += f"With every write synced, the option {effect_words(synced)}"
    shares = [x.lens_part(SYNC_WAIT) for x in (cell(r, m, b, True) for b, _ in synced
                                                for m in (True, False))
              if x.writes and x.trusted]
    if shares:
        lo = min(n / t for n, t in shares if t)
        hi = max(n / t for n, t in shares if t)
        s += f": the sync and the queue behind it are {pct(lo)}-{pct(hi)} of such a write"
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
          "writes per thread synced and 200,000 unsynced (runs of seconds either way), every combination of manual_wal_flush, benchmark and sync. "
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
    full={"fixed": {"num": 20000}, "fixed_by": {"sync": {"false": {"num": 200000}}},
          "repeats": 5},
    quick={"fixed": {"num": 50000}, "repeats": 1,
           "axes": {"manual_wal_flush": [True, False], "benchmarks": ["fillrandom"],
                    "sync": [False]}},
    flames=lambda r: [cell(r, True, "fillrandom", False).name,
                      cell(r, False, "fillrandom", False).name],
    seed_says=SEED_SAYS,
    answer=answer,
)
