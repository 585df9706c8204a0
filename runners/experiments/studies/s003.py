"""Seed 003: time-aware tiered storage under a Zipfian write load."""
from __future__ import annotations

import math
from typing import Callable

from runners.experiments.studies.judge import (Comparison, beside_untraced, compare, ops, ordinal,
                                               pct, traced_note, untrusted)
from runners.experiments.studies.model import (HELD, NOT_HELD, UNTESTABLE, Claim, Metric, Study,
                                               Verdict)
from runners.experiments.studies.results import CellResult, Results, Stat
from runners.experiments.studies.judge import called, tally
from runners.experiments.studies.s002 import gap, gap_text, no_rows, said

ALPHAS = ("0.5", "0.9", "1.2")
PRECLUDES = ("0", "2", "5")
PRESERVE = "5"        # the preclude series keeps time tracking on throughout
TIERED = ("5", "5")   # the seed's "TATS": preclude = preserve
Z = "fillzipf"
# the seed's "no big change" in WAF: within 10% of preclude 0's (it gives
# no figure; the WAL alone keeps this WAF at 1 or more)
SMALL = 0.10
# the seed's throughput as preclude grew, per alpha
SEED_TPUT = {"0.5": ">", "0.9": "<", "1.2": ">"}


def cell(r: Results, alpha: str, preclude: str, preserve: str) -> CellResult:
    return r.cell(alpha=alpha, preclude_last_level_data_seconds=preclude,
                  preserve_internal_time_seconds=preserve)


def alphas(r: Results) -> list[str]:
    return [a for a in ALPHAS if r.has(alpha=a, preclude_last_level_data_seconds="0",
                                       preserve_internal_time_seconds="0")]


def default(r: Results, a: str) -> CellResult:
    """Plain universal compaction: no time tracking, no preclude."""
    return cell(r, a, "0", "0")


def series(r: Results, a: str) -> list[CellResult]:
    """preclude 0, 2, 5 s at preserve 5 s, those that ran."""
    return [cell(r, a, p, PRESERVE) for p in PRECLUDES
            if r.has(alpha=a, preclude_last_level_data_seconds=p,
                     preserve_internal_time_seconds=PRESERVE)]


def tiered_alphas(r: Results) -> list[str]:
    return [a for a in alphas(r) if len(series(r, a)) >= 2]


def ends(r: Results, a: str) -> tuple[CellResult, CellResult]:
    s = series(r, a)
    return s[0], s[-1]


def preclude_pairs(r: Results, al: list[str]) -> list[tuple[str, str]]:
    """(preclude 0, the largest) at every alpha a claim judges: each gets
    its diff table (the claim's text speaks of each)."""
    return [(ends(r, a)[0].name, ends(r, a)[1].name) for a in al]


def pre(c: CellResult) -> str:
    return f"{c.values['preclude_last_level_data_seconds']} s"


def zero(s: Stat | None) -> bool:
    return s is not None and s.lo == 0 and s.hi == 0


def move(later: Stat | None, earlier: Stat | None) -> tuple[str, str]:
    """The rule's sign and text for later / earlier, where a ratio of zeros
    says nothing: both 0 in every run is no change, a rise from 0 a rise."""
    if zero(later) and zero(earlier):
        return "~", "0 in every run either way"
    if zero(earlier) and later is not None:
        return ">", f"up from 0 in every run to {later.median:.2f}"
    c = compare(later, earlier)
    return c.sign, said(c)


def figure(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}"


def along(cs: list[CellResult], metric: str, want: str) -> tuple[str, str]:
    """A metric that should move one way (`want`, '>' up or '<' down) from
    the first cell to the last: the rule calls the whole move, and no step
    between neighbours goes the other way."""
    whole = compare(cs[-1].stat(metric, Z), cs[0].stat(metric, Z))
    steps = [compare(hi.stat(metric, Z), lo.stat(metric, Z)) for lo, hi in zip(cs, cs[1:])]
    name = [c.values["alpha"] for c in cs]
    text = (f"{' -> '.join(figure(c.value(metric, Z)) for c in cs)} (alpha {name[-1]}/{name[0]} "
            f"{said(whole)}" + "".join(f"; {b}/{a} {said(c)}" for a, b, c in
                                       zip(name, name[1:], steps) if len(steps) > 1) + ")")
    if "?" in [whole.sign, *(c.sign for c in steps)]:
        return UNTESTABLE, text
    against = "<" if want == ">" else ">"
    ok = whole.sign == want and all(c.sign != against for c in steps)
    return (HELD if ok else NOT_HELD), text


def skew_faster(r: Results) -> Verdict:
    cs = [default(r, a) for a in alphas(r)]
    if len(cs) < 2:
        return Verdict(UNTESTABLE, "needs two alphas or more")
    out, text = along(cs, "ops_sec", ">")
    return Verdict(out, f"Universal compaction without tiering, ops/s at alpha "
                   f"{', '.join(alphas(r))}: {text}. Held where the whole range is called "
                   "and no step goes down.", "throughput.png", [(cs[0].name, cs[-1].name)])


def skew_smaller(r: Results) -> Verdict:
    cs = [default(r, a) for a in alphas(r)]
    if len(cs) < 2:
        return Verdict(UNTESTABLE, "needs two alphas or more")
    saf, saf_text = along(cs, "space_amplification", "<")
    waf, waf_text = along(cs, "write_amplification", "<")
    return Verdict(tally([saf, waf]), f"Universal compaction without tiering, alpha "
                   f"{', '.join(alphas(r))}: SAF (the DB folder at the end over the bytes "
                   f"written) {saf_text}; WAF {waf_text}.", None, [(cs[0].name, cs[-1].name)])


def not_slower(r: Results, a: str) -> tuple[str, str]:
    d, t = default(r, a), cell(r, a, *TIERED)
    c = compare(t.stat("ops_sec", Z), d.stat("ops_sec", Z))
    out = UNTESTABLE if c.sign == "?" else NOT_HELD if c.sign == "<" else HELD
    return out, (f"alpha {a}: tiered {ops(t, Z)}, default {ops(d, Z)}, tiered/default "
                 f"{said(c)}")


def tiering_costs_nothing(r: Results) -> Verdict:
    al = [a for a in alphas(r) if r.has(alpha=a, preclude_last_level_data_seconds=TIERED[0],
                                        preserve_internal_time_seconds=TIERED[1])]
    if not al:
        return Verdict(UNTESTABLE, "the tiered cells were not run")
    judged = [not_slower(r, a) for a in al]
    return Verdict(tally([o for o, _ in judged]),
                   f"Tiered = preclude and preserve {TIERED[0]} s; default = neither. "
                   + "; ".join(t for _, t in judged) + ". Held where tiered is not slower "
                   "above the noise.", "throughput.png",
                   [(default(r, a).name, cell(r, a, *TIERED).name) for a in al])


def values(cs: list[CellResult], metric: str) -> str:
    return " -> ".join(f"{c.value(metric, Z):.2f}" for c in cs)


def emptied(r: Results, a: str) -> tuple[str, str]:
    """The last level's stored share falls from preclude 0 to the largest
    and never rises on the way; the seed's read ratio beside it."""
    cs = series(r, a)
    m, seeds = "last_level_stored_ratio", "last_level_byte_ratio"
    hops = list(zip(cs, cs[1:])) + ([(cs[0], cs[-1])] if len(cs) > 2 else [])
    moves = [(f"{pre(hi)}/{pre(lo)}", *move(hi.stat(m, Z), lo.stat(m, Z))) for lo, hi in hops]
    reads = move(cs[-1].stat(seeds, Z), cs[0].stat(seeds, Z))
    text = (f"alpha {a}: stored {values(cs, m)} ("
            + "; ".join(f"{k} {t}" for k, _, t in moves) + f"); the seed's read ratio "
            f"{values(cs, seeds)} ({pre(cs[-1])}/{pre(cs[0])} {reads[1]})")
    signs = [sg for _, sg, _ in moves]
    if zero(cs[0].stat(m, Z)):
        return UNTESTABLE, text + " (the last level held nothing even at preclude 0)"
    if "?" in signs:
        return UNTESTABLE, text
    return (HELD if signs[-1] == "<" and ">" not in signs else NOT_HELD), text


def preclude_empties_last_level(r: Results) -> Verdict:
    al = tiered_alphas(r)
    if not al:
        return Verdict(UNTESTABLE, "needs two preclude values at one alpha")
    judged = [emptied(r, a) for a in al]
    return Verdict(tally([o for o, _ in judged]),
                   f"Share of the stored SST bytes in the last level when the run ended, "
                   f"preclude {', '.join(pre(c) for c in series(r, al[0]))} at preserve "
                   f"{PRESERVE} s, and beside it the seed's last_level_byte_ratio (last-level "
                   "read bytes over all read bytes, over the run): "
                   + "; ".join(t for _, t in judged) + ". Judged on the stored share, the "
                   "closer match to the seed's count of SST files in the last level.",
                   None, preclude_pairs(r, al))


def waf_steps(r: Results, a: str) -> dict[str, Comparison] | None:
    """WAF at preclude 2 s over 0, 5 over 2 and 5 over 0 (preserve 5 s);
    None where the three did not run."""
    cs = series(r, a)
    if [c.values["preclude_last_level_data_seconds"] for c in cs] != list(PRECLUDES):
        return None
    w = "write_amplification"
    return {f"{pre(hi)}/{pre(lo)}": compare(hi.stat(w, Z), lo.stat(w, Z))
            for lo, hi in ((cs[0], cs[1]), (cs[1], cs[2]), (cs[0], cs[2]))}


def magnitude(steps: dict[str, Comparison]) -> float:
    """The largest move the rule calls, as a fraction; 0 when it calls none."""
    return max([math.exp(abs(math.log(c.ratio))) - 1 for c in steps.values()
                if c.sign in "<>" and c.ratio > 0], default=0.0)


def humps(steps: dict[str, dict[str, Comparison]]) -> list[str]:
    """The alphas below the highest (where the seed saw WAF hardly move)
    whose WAF rises from 0 to 2 s and falls from 2 to 5 s, both called."""
    al = list(steps)
    return [a for a in al[:-1] or al
            if [steps[a]["2 s/0 s"].sign, steps[a]["5 s/2 s"].sign] == [">", "<"]]


def large(steps: dict[str, dict[str, Comparison]]) -> list[str]:
    """Moves from preclude 0 the rule calls and that exceed SMALL."""
    return [f"alpha {a} {k} {c.ratio:.2f}x" for a, st in steps.items() for k, c in st.items()
            if k.endswith("/0 s") and c.sign != "~" and abs(c.ratio - 1) > SMALL]


def less_at_high(steps: dict[str, dict[str, Comparison]]) -> tuple[str | None, str]:
    """The move at the highest alpha no larger than at the lowest; None
    (no part of the verdict) where the rule calls no move at either."""
    al = list(steps)
    if len(al) < 2:
        return UNTESTABLE, f"less at higher alpha: {UNTESTABLE} (one alpha ran)"
    hi, lo = magnitude(steps[al[-1]]), magnitude(steps[al[0]])
    if not hi and not lo:
        return None, (f"no move at alpha {al[0]} or {al[-1]}, so \"less the higher alpha\" "
                      "says nothing here")
    out = HELD if hi <= lo else NOT_HELD
    return out, (f"no larger a move at alpha {al[-1]} ({pct(hi)}) than at {al[0]} "
                 f"({pct(lo)}), counting the moves the rule calls: {out}")


def waf_rises_then_falls(r: Results) -> Verdict:
    steps = {a: st for a in tiered_alphas(r) for st in [waf_steps(r, a)] if st}
    if not steps:
        return Verdict(UNTESTABLE, f"needs preclude {', '.join(PRECLUDES)} s at one alpha "
                       f"(preserve {PRESERVE} s)")
    hump = humps(steps)
    cs = series(r, (hump or list(steps))[0])
    pairs = [(cs[0].name, cs[1].name), (cs[1].name, cs[2].name)]
    head = (f"WAF (the seed's, WAL included), preclude {', '.join(PRECLUDES)} s at preserve "
            f"{PRESERVE} s: ")
    unknown = [c for st in steps.values() for c in st.values() if c.sign == "?"]
    if unknown:
        return Verdict(UNTESTABLE, head + "; ".join(
            f"alpha {a}: {values(series(r, a), 'write_amplification')}" for a in steps)
            + f"; the rule cannot tell: {unknown[0].text()}.", None, pairs)
    rows = "; ".join(f"alpha {a}: {values(series(r, a), 'write_amplification')} ("
                     + "; ".join(f"{k} {said(c)}" for k, c in st.items()) + ")"
                     for a, st in steps.items())
    shape = HELD if hump else NOT_HELD
    big = large(steps)
    size = NOT_HELD if big else HELD
    lesser, lesser_text = less_at_high(steps)
    return Verdict(
        tally([o for o in (shape, size, lesser) if o is not None]),
        head + rows + ". Up then down (2 s over 0 and 5 s over 2 both called) at an alpha "
        f"below the highest: {shape}" + (f" (alpha {', '.join(hump)})" if hump else "")
        + f"; within {pct(SMALL)} of preclude 0's, or not above the noise, everywhere: "
        + (f"{size} ({', '.join(big)})" if big else size) + f"; {lesser_text}.",
        None, pairs)


def tput(r: Results, a: str) -> tuple[list[str], str]:
    lo, hi = ends(r, a)
    c = compare(hi.stat("ops_sec", Z), lo.stat("ops_sec", Z))
    want = SEED_TPUT.get(a, ">")
    return [called(c, want)], (f"alpha {a}: {ops(lo, Z)} at preclude {pre(lo)}, {ops(hi, Z)} "
                               f"at {pre(hi)}, {pre(hi)}/{pre(lo)} {said(c)} (the seed: "
                               f"{'up' if want == '>' else 'down'})")


def per_alpha(r: Results, judge: Callable[[Results, str], tuple[list[str], str]],
              lead: str, figure: str | None) -> Verdict:
    """A claim judged at each alpha with two preclude values: its parts'
    outcomes tallied, their texts joined."""
    al = tiered_alphas(r)
    if not al:
        return Verdict(UNTESTABLE, "needs two preclude values at one alpha")
    judged = [judge(r, a) for a in al]
    return Verdict(tally([o for os, _ in judged for o in os]),
                   lead + "; ".join(t for _, t in judged) + ".", figure, preclude_pairs(r, al))


def preclude_throughput(r: Results) -> Verdict:
    return per_alpha(r, tput, f"preserve {PRESERVE} s: ", "throughput.png")


def hypothesis(r: Results, a: str) -> tuple[list[str], str]:
    lo, hi = ends(r, a)
    w = compare(hi.stat("write_amplification", Z), lo.stat("write_amplification", Z))
    t = compare(hi.stat("ops_sec", Z), lo.stat("ops_sec", Z))
    return [called(w, "<"), called(t, ">")], (
        f"alpha {a}, preclude {pre(lo)} -> {pre(hi)}: WAF "
        f"{lo.value('write_amplification', Z):.2f} -> {hi.value('write_amplification', Z):.2f}"
        f" ({said(w)}), throughput {said(t)}")


def preclude_lowers_waf(r: Results) -> Verdict:
    return per_alpha(r, hypothesis, f"preserve {PRESERVE} s; held where WAF falls and "
                     "throughput rises, both above the noise: ", None)


def overlap(a: str, c: CellResult) -> str | None:
    f = c.extra
    if not f.get("overlap_writes") or "overlap_mean_us" not in f:
        return None
    n = f["overlap_writes"] + f["clear_writes"]
    return (f"**alpha {a}: WAL writes against flush and compaction I/O.** "
            f"{f['overlap_writes']:,} of "
            + (f"the {n:,} rows read (every {ordinal(f['row_step'])} of the run's "
               f"{c.writes:,} traced writes)" if f.get("row_step", 1) > 1
               else f"{n:,} traced writes")
            + " ran while a flush or compaction "
            f"thread had a write(2) in flight. Those took {f['overlap_mean_us']:.1f} us on "
            f"average (p99 {f['overlap_p99_us']:.0f} us), their WAL I/O "
            f"{f['overlap_walio_us']:.2f} us; the others {f['clear_mean_us']:.1f} us (p99 "
            f"{f['clear_p99_us']:.0f} us), WAL I/O {f['clear_walio_us']:.2f} us. "
            f"({traced_note(c)}.)")


def traced_gaps(r: Results) -> str | None:
    """What moves the traced write between the cells the claims compare."""
    lines = []
    al = alphas(r)
    if len(al) >= 2:
        lines.append(f"alpha {al[0]} -> {al[-1]} (default) "
                     f"{gaps(r, default(r, al[0]), default(r, al[-1]))}")
    for x in tiered_alphas(r):
        a, b = ends(r, x)
        lines.append(f"alpha {x}, preclude {pre(a)} -> {pre(b)} {gaps(r, a, b)}")
    if not lines:
        return None
    return ("**What moves the traced write** (B - A of the mean, by component, each beside "
            "the untraced runs' own gap): " + "; ".join(lines) + ".")


def gaps(r: Results, a: CellResult, b: CellResult) -> str:
    """The traced gap B - A by component, and what it is to be read against
    (the untraced gap and throughput, the self-check)."""
    if not a.writes or not b.writes:
        return no_rows(a if not a.writes else b)
    total = gap(r, a, b)[1]
    return f"{gap_text(r, a, b, top=3)} ({beside_untraced(a, b, total, Z)})"


def ratios(r: Results) -> str | None:
    """Where the seed's read ratio and the stored share part ways."""
    odd = [c for c in r.cells
           if zero(c.stat("last_level_stored_ratio", Z))
           and (c.value("last_level_byte_ratio", Z) or 0) > 0]
    if not odd:
        return None
    lo = min(c.value("last_level_byte_ratio", Z) for c in odd)
    hi = max(c.value("last_level_byte_ratio", Z) for c in odd)
    span = f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}"
    return ("**The seed's last-level ratio against what the last level holds.** The seed's "
            "last_level_byte_ratio counts the bytes read from last-level files over the "
            "whole run (the final Gets and compaction's reads alike); the stored share is "
            f"what the last level holds when the run ends. {len(odd)} of {len(r.cells)} "
            "cells end with nothing in the last level yet read "
            f"{span} of their bytes from it during the run: the seed's ratio "
            "does not tell where the data ended up.")


def findings(r: Results) -> list[str]:
    out = [t for t in [trust(r), traced_gaps(r), ratios(r)] if t]
    over = [t for a in alphas(r) for t in [overlap(a, default(r, a))] if t]
    out += over or ["No traced write overlapped a flush or compaction write(2) in these runs."]
    return out


def trust(r: Results) -> str | None:
    """Before the traced figures: how many of the traced runs failed their
    self-check (each one's reason is in the notes under the table)."""
    bad = untrusted(*r.cells)
    traced = [c for c in r.cells if c.writes]
    if not bad:
        return None
    return (f"**The traced microseconds below are not the workload's.** {len(bad)} of "
            f"{len(traced)} traced runs failed their self-check (the notes under the "
            "table give each one's reason): their compensated latencies, and the deltas "
            "between them, are not the untraced runs'. The verdicts rest on the untraced "
            "runs.")


def answer(r: Results) -> str:
    al = alphas(r)
    if not al:
        return "These runs have no cell without tiering to compare against."
    out = []
    if len(al) >= 2:
        lo, hi = default(r, al[0]), default(r, al[-1])
        out.append(f"Without tiering, alpha {al[-1]} writes {ops(hi, Z)} against "
                   f"{ops(lo, Z)} at {al[0]} ({al[-1]}/{al[0]} "
                   f"{said(compare(hi.stat('ops_sec', Z), lo.stat('ops_sec', Z)))}), with a "
                   f"WAF of {hi.value('write_amplification', Z):.2f} against "
                   f"{lo.value('write_amplification', Z):.2f}"
                   + (f" and an SAF of {hi.value('space_amplification', Z):.2f} against "
                      f"{lo.value('space_amplification', Z):.2f}"
                      if hi.stat("space_amplification", Z) else "") + ".")
    ta = [a for a in al if r.has(alpha=a, preclude_last_level_data_seconds=TIERED[0],
                                 preserve_internal_time_seconds=TIERED[1])]
    if ta:
        out.append(f"Tiering (preclude = preserve = {TIERED[0]} s) against none, "
                   "throughput: " + "; ".join(
                       f"alpha {a} " + said(compare(cell(r, a, *TIERED).stat("ops_sec", Z),
                                                    default(r, a).stat("ops_sec", Z)))
                       for a in ta) + ".")
    tal = tiered_alphas(r)
    if tal:
        pres = ", ".join(pre(c) for c in series(r, tal[0]))
        out.append(f"Over preclude {pres} at preserve {PRESERVE} s, the last level's share "
                   "of the stored bytes goes " + "; ".join(
                       f"{values(series(r, a), 'last_level_stored_ratio')} at alpha {a}"
                       for a in tal) + " (the seed's read ratio " + "; ".join(
                       values(series(r, a), "last_level_byte_ratio") for a in tal)
                   + "), WAF " + "; ".join(values(series(r, a), "write_amplification")
                                          for a in tal)
                   + ", and throughput, largest preclude over none: " + "; ".join(
                       f"alpha {a} " + said(compare(ends(r, a)[1].stat("ops_sec", Z),
                                                    ends(r, a)[0].stat("ops_sec", Z)))
                       for a in tal) + ".")
    return " ".join(out)


STUDY = Study(
    id="003", slug="tiered-zipf",
    title="Time-aware tiered storage under a Zipfian write load",
    seed="003_9ffe940023659a4f.txt",
    question="Under a skewed (Zipfian) write load with universal compaction, what do "
             "time-aware tiered storage's preclude_last_level_data_seconds and "
             "preserve_internal_time_seconds do to write performance, write amplification "
             "and what ends up in the last (cold) level?",
    scenario="tiered_zipf.toml",
    seed_says="A student team's slides (open-source software analysis course, 2025-06-05): "
              "RocksDB 10.2.0 on Ubuntu 20.04.6, an i7-10700F (16 threads), 31.2 GiB of "
              "RAM; the environment table lists a 1.0 TB SSD, the limitations say "
              "everything ran on a single HDD. Keys from a Zipfian generator (weights "
              "1/(i+1)^alpha, seed 42), alpha 0.5, 0.9 and 1.2; no key count, value size, "
              "run length or number of repeats is given, and the results are figures "
              "without numbers, but for a table of SST files in the last level. Its "
              "metrics: last_level_byte_ratio = rocksdb.last.level.read.bytes / "
              "(last.level.read.bytes + non.last.level.read.bytes), and WAF = "
              "(flush.write.bytes + compact.write.bytes + wal.bytes) / bytes.written. "
              "Experiment 1, universal compaction against tiered storage with its "
              "defaults: it expected tiering's overhead to lower write performance, and "
              "found \"performance improves as alpha grows; default and tiered perform "
              "alike\". Experiment 2, preserve = preclude at 0, 20, 50, 80 and 100% (0 to "
              "120 s, the steps set per alpha; the last level cold): it expected a larger "
              "preclude to lower WAF (fewer compactions) and so to raise write "
              "performance. It found that the larger preclude, the fewer or no SST files "
              "in the last level (alpha 0.5: some at 0% and 20%, none from 50%; 0.9: none "
              "from 80%; 1.2: none only at 100%); the lower alpha, the larger the DB and "
              "the higher WAF; WAF \"rises slightly at 20%, falls and stays level from "
              "50%, no big change overall\", and no big effect at high alpha; time and "
              "latency captioned \"compaction, stall increase\" and \"stall, flush delay "
              "decrease\"; throughput up at alpha 0.5 and 1.2, down at 0.9. Its summary: "
              "\"WAF rises then falls, but the effect is not large; overall write "
              "performance improves; the higher alpha, the smaller the effect\".",
    setup="runners/workloads/zipf_writer (db_bench 7.8 has neither a Zipfian key chooser nor the "
          "tiering options): Puts of 100 B values over 200,000 keys with Zipf alpha 0.5, "
          "0.9 and 1.2, then 20,000 Gets; universal compaction, 4 MiB write buffer, "
          "last_level_temperature=cold on the same disk. The seed ran for minutes and set "
          "preclude = preserve from 0 to 120 s; here the load is 600,000 writes (seconds), "
          "so the times are scaled to 0, 2 and 5 s, and preserve is 0 or 5 s "
          "independently. \"Tiered\" is preclude = preserve = 5 s, \"default\" neither; the "
          f"claims on preclude compare 0, 2 and 5 s at preserve {PRESERVE} s, so that only "
          "preclude moves. WAF is the seed's (WAL bytes included), with the SST-only WAF "
          "beside it; the last-level ratio is the seed's (read bytes), with the share of "
          "stored SST bytes in the last level at the end beside it; SAF is the DB folder's "
          "size at the end over the bytes written. Traced in full mode, not the default "
          "window mode: the question is how flush and compaction I/O lands on writes, "
          "which needs every write and every background write(2), not 2% of them (the "
          "traced/untraced column shows what that costs).",
    metrics=[Metric("ops_sec", "ops/s", "{:,.0f}"), Metric("micros_op", "avg us/op", "{:.2f}"),
             Metric("p99_us", "p99 us", "{:.1f}"),
             Metric("write_amplification", "WAF", "{:.2f}"),
             Metric("sst_write_amplification", "WAF w/o WAL", "{:.2f}"),
             Metric("last_level_byte_ratio", "last-level reads", "{:.2f}"),
             Metric("last_level_stored_ratio", "last-level stored", "{:.2f}"),
             Metric("space_amplification", "SAF", "{:.2f}")],
    claims=[
        Claim("The higher alpha (the more skewed the load), the higher the write throughput.",
              skew_faster),
        Claim("The lower alpha, the larger the database and the higher WAF.", skew_smaller),
        Claim("Time-aware tiered storage writes as fast as plain universal compaction (the "
              "seed expected an overhead and found none).", tiering_costs_nothing),
        Claim("The larger preclude_last_level_data_seconds, the fewer SST bytes in the last "
              "level.", preclude_empties_last_level),
        Claim("As preclude grows, WAF rises a little, then falls, but changes little overall, "
              "and less the higher alpha.", waf_rises_then_falls),
        Claim("A larger preclude raises write throughput at alpha 0.5 and 1.2 and lowers it "
              "at 0.9.", preclude_throughput),
        Claim("(The seed's hypothesis, which its own results did not bear out for WAF:) a "
              "larger preclude lowers WAF and so raises write throughput.",
              preclude_lowers_waf),
    ],
    findings=findings,
    answer=answer,
    full={"repeats": 5},
    mode="full",
    quick={"fixed": {"keys": 20000, "writes": 100000}, "repeats": 1,
           "axes": {"alpha": [0.9], "preclude_last_level_data_seconds": [0, 5],
                    "preserve_internal_time_seconds": [0, 5]}},
    flames=lambda r: [default(r, alphas(r)[0]).name,
                      default(r, alphas(r)[-1]).name] if alphas(r) else [],
)
