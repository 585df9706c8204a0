"""Seed 003: time-aware tiered storage under a Zipfian write load."""
from __future__ import annotations

from typing import Callable

from runners.experiments.studies.judge import (Comparison, alike, beside_untraced, compare,
                                               direction, ordinal, pct, traced_note, trend,
                                               untrusted)
from runners.experiments.studies.model import (HELD, NOT_DISTINGUISHABLE, NOT_HELD, UNTESTABLE,
                                               Claim, Metric, Part, Study, Verdict)
from runners.experiments.studies.results import CellResult, Results, Stat
from runners.experiments.studies.s002 import gap, gap_text, listed, no_rows

ALPHAS = ("0.5", "0.9", "1.2")
# tier_s: preclude_last_level_data_seconds = preserve_internal_time_seconds
# (the seed keeps them equal), 0, 20 and 50% of a 10 s run
TIERS = ("0", "2", "5")
DEFAULT = "0"         # plain universal compaction: no time tracking, no preclude
TIERED = "5"          # the seed's "TATS": preclude = preserve, here 50% of the run
Z = "fillzipf"
# the seed's throughput as preclude grew, per alpha
SEED_TPUT = {"0.5": ">", "0.9": "<", "1.2": ">"}


def cell(r: Results, alpha: str, tier: str) -> CellResult:
    return r.cell(alpha=alpha, tier_s=tier)


def alphas(r: Results) -> list[str]:
    return [a for a in ALPHAS if r.has(alpha=a, tier_s=DEFAULT)]


def default(r: Results, a: str) -> CellResult:
    """Plain universal compaction: no time tracking, no preclude."""
    return cell(r, a, DEFAULT)


def series(r: Results, a: str) -> list[CellResult]:
    """preclude = preserve 0, 2, 5 s, those that ran."""
    return [cell(r, a, t) for t in TIERS if r.has(alpha=a, tier_s=t)]


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
    return f"{c.values['tier_s']} s"


def duration(r: Results) -> float:
    """How long each run wrote (the scenario's duration_s; NaN if unknown)."""
    return float((r.environment.get("fixed") or {}).get("duration_s") or "nan")


def share(r: Results, tier: str) -> str:
    """tier_s as a share of the run ('50%'; '' where the run's length is
    unknown)."""
    d = duration(r)
    return pct(float(tier) / d) if d == d and d > 0 else ""


def zero(s: Stat | None) -> bool:
    return s is not None and s.lo == 0 and s.hi == 0


def figure(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}"


def values(cs: list[CellResult], metric: str) -> str:
    return " -> ".join(figure(c.value(metric, Z)) for c in cs)


def trend_of(name: str, cs: list[CellResult], metric: str, want: str) -> Part:
    """The metric moves one way (want '>' up, '<' down) along the cells cs,
    in order (judge.trend: the whole range called that way, no step called
    against it); the evidence leads with the medians."""
    whole = compare(cs[-1].stat(metric, Z), cs[0].stat(metric, Z))
    steps = [compare(hi.stat(metric, Z), lo.stat(metric, Z)) for lo, hi in zip(cs, cs[1:])]
    p = trend(name, whole, steps, want)
    p.evidence = f"{values(cs, metric)}; {p.evidence}"
    return p


def skew_faster(r: Results) -> Verdict:
    cs = [default(r, a) for a in alphas(r)]
    if len(cs) < 2:
        return Verdict(UNTESTABLE, "needs two alphas or more")
    return Verdict.of([trend_of(f"throughput rises with alpha {', '.join(alphas(r))} (ops/s)",
                                cs, "ops_sec", ">")],
                      "throughput.png", [(cs[0].name, cs[-1].name)],
                      "Universal compaction without tiering.")


def skew_smaller(r: Results) -> Verdict:
    cs = [default(r, a) for a in alphas(r)]
    if len(cs) < 2:
        return Verdict(UNTESTABLE, "needs two alphas or more")
    al = ", ".join(alphas(r))
    return Verdict.of([trend_of(f"SAF falls with alpha {al}", cs, "space_amplification", "<"),
                       trend_of(f"WAF falls with alpha {al}", cs, "write_amplification", "<")],
                      None, [(cs[0].name, cs[-1].name)],
                      "Universal compaction without tiering; SAF is the DB folder at the end "
                      "over the bytes written.")


def tiered_at(r: Results) -> list[str]:
    """The alphas whose tiered cell ran."""
    return [a for a in alphas(r) if r.has(alpha=a, tier_s=TIERED)]


def tiering_effect(r: Results, a: str) -> Comparison:
    """Tiered over default throughput at one alpha."""
    return compare(cell(r, a, TIERED).stat("ops_sec", Z), default(r, a).stat("ops_sec", Z))


def tiering_costs_nothing(r: Results) -> Verdict:
    al = tiered_at(r)
    if not al:
        return Verdict(UNTESTABLE, "the tiered cells were not run")
    parts = []
    for a in al:
        p = alike(f"tiered as fast as default, alpha {a} (tiered/default ops/s)",
                  tiering_effect(r, a))
        p.evidence = (f"{cell(r, a, TIERED).value('ops_sec', Z):,.0f} against "
                      f"{default(r, a).value('ops_sec', Z):,.0f}; {p.evidence}")
        parts.append(p)
    return Verdict.of(parts, "throughput.png",
                      [(default(r, a).name, cell(r, a, TIERED).name) for a in al],
                      f"Tiered: preclude = preserve = {TIERED} s"
                      + (f" ({share(r, TIERED)} of the run)" if share(r, TIERED) else "")
                      + "; default: neither.")


def emptied(r: Results, a: str) -> Part:
    """The last level's stored share falls along preclude; the seed's read
    ratio beside it."""
    cs = series(r, a)
    p = trend_of(f"fewer last-level bytes the larger preclude, alpha {a} (stored share)", cs,
                 "last_level_stored_ratio", "<")
    p.evidence += f"; the seed's read ratio {values(cs, 'last_level_byte_ratio')}"
    if zero(cs[0].stat("last_level_stored_ratio", Z)):
        p.evidence += " (the last level held nothing even at preclude 0)"
    return p


def per_alpha(r: Results, parts: Callable[[Results, str], list[Part]], figure_: str | None,
              note: str) -> Verdict:
    """A claim judged at each alpha with two tier_s values or more
    (preclude = preserve): its parts there, the claim's verdict from them."""
    al = tiered_alphas(r)
    if not al:
        return Verdict(UNTESTABLE, "needs two preclude values at one alpha")
    return Verdict.of([p for a in al for p in parts(r, a)], figure_, preclude_pairs(r, al),
                      note)


def preclude_empties_last_level(r: Results) -> Verdict:
    return per_alpha(r, lambda r_, a: [emptied(r_, a)], None,
                     f"Preclude = preserve "
                     f"{', '.join(pre(c) for c in series(r, tiered_alphas(r)[0]))}; the stored share is the last level's part of the "
                     "SST bytes when the run ended, the closer match to the seed's count of "
                     "last-level files; the seed's ratio is last-level read bytes over all "
                     "read bytes." if tiered_alphas(r) else "")


def waf_steps(r: Results, a: str) -> dict[str, Comparison] | None:
    """WAF at preclude = preserve 2 s over 0, 5 over 2 and 5 over 0; None
    where the three did not run."""
    cs = series(r, a)
    if [str(c.values["tier_s"]) for c in cs] != list(TIERS):
        return None
    w = "write_amplification"
    return {f"{pre(hi)}/{pre(lo)}": compare(hi.stat(w, Z), lo.stat(w, Z))
            for lo, hi in ((cs[0], cs[1]), (cs[1], cs[2]), (cs[0], cs[2]))}


def waf_rises_then_falls(r: Results) -> Verdict:
    steps = {a: st for a in tiered_alphas(r) for st in [waf_steps(r, a)] if st}
    if not steps:
        return Verdict(UNTESTABLE, f"needs preclude = preserve {', '.join(TIERS)} s at one "
                       "alpha")
    parts = []
    for a, st in steps.items():
        up, down, whole = st["2 s/0 s"], st["5 s/2 s"], st["5 s/0 s"]
        parts += [direction(f"WAF rises 0 -> 2 s, alpha {a}", up, ">"),
                  direction(f"WAF falls 2 -> 5 s, alpha {a}", down, "<"),
                  alike(f"WAF changes little 0 -> 5 s, alpha {a}", whole)]
        parts[-3].evidence = f"{values(series(r, a), 'write_amplification')}; " \
            + parts[-3].evidence
    # "less the higher alpha" ranks effects across cells: the rule has no
    # comparison of two ratios; with no WAF change called anywhere there is
    # none to rank
    moved = any(c.sign in "<>" for st in steps.values() for c in st.values())
    parts.append(Part("the change is smaller the higher alpha", UNTESTABLE,
                      "the rule does not compare effects across cells") if moved else
                 Part("the change is smaller the higher alpha", NOT_DISTINGUISHABLE,
                      "no WAF change is above the noise at any alpha, so none to rank"))
    # the diff tables: the alpha whose WAF rose and fell where one did
    hump = [a for a, st in steps.items()
            if (st["2 s/0 s"].sign, st["5 s/2 s"].sign) == (">", "<")]
    cs = series(r, (hump or list(steps))[0])
    return Verdict.of(parts, None, [(cs[0].name, cs[1].name), (cs[1].name, cs[2].name)],
                      "WAF is the seed's (WAL bytes included); preclude = preserve.")


def tput(r: Results, a: str) -> list[Part]:
    want = SEED_TPUT.get(a, ">")
    return [trend_of(f"preclude {'raises' if want == '>' else 'lowers'} throughput, alpha {a}",
                     series(r, a), "ops_sec", want)]


def preclude_throughput(r: Results) -> Verdict:
    return per_alpha(r, tput, "throughput.png",
                     f"ops/s at preclude = preserve {', '.join(TIERS)} s.")


def hypothesis(r: Results, a: str) -> list[Part]:
    cs = series(r, a)
    return [trend_of(f"preclude lowers WAF, alpha {a}", cs, "write_amplification", "<"),
            trend_of(f"preclude raises throughput, alpha {a}", cs, "ops_sec", ">")]


def preclude_lowers_waf(r: Results) -> Verdict:
    return per_alpha(r, hypothesis, None, "Preclude = preserve.")


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
        lines.append(f"alpha {x}, preclude = preserve {pre(a)} -> {pre(b)} {gaps(r, a, b)}")
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


def spread(xs: list[float]) -> str:
    """'43-58%' (or '43%' where they round alike) of shares."""
    lo, hi = pct(min(xs)), pct(max(xs))
    return lo if lo == hi else f"{lo[:-1]}-{hi}"


def where_words(r: Results, tal: list[str]) -> tuple[bool, str]:
    """What preclude did to the last level, and whether the rule held it at
    every alpha."""
    parts = [emptied(r, a) for a in tal]
    later = [c for a in tal for c in series(r, a)[1:]]
    first = [series(r, a)[0].value("last_level_stored_ratio", Z) for a in tal]
    held = all(p.verdict == HELD for p in parts)
    later_tiers = [str(c.values["tier_s"]) for c in series(r, tal[0])[1:]]
    shares = [share(r, t) for t in later_tiers]
    runs = (f" ({' or '.join(shares)} of the {duration(r):g} s of writes)" if all(shares)
            else "")
    pres = "preclude = preserve at " + " or ".join(f"{t} s" for t in later_tiers)
    if held and all(c.value("last_level_stored_ratio", Z) == 0 for c in later):
        return True, (f"with {pres}{runs}, the cold last level ended empty at "
                      f"every alpha, against {spread(first)} of the stored bytes without it")
    if held:
        last = [series(r, a)[-1].value("last_level_stored_ratio", Z) for a in tal]
        return True, (f"the longer preclude = preserve, the less ends in the cold last "
                      f"level, at every alpha: at {later_tiers[-1]} s"
                      + (f" ({shares[-1]} of the {duration(r):g} s of writes)"
                         if shares[-1] else "")
                      + f" it held {spread(last)} of the stored bytes, against "
                      f"{spread(first)} without it")
    verb = {HELD: "held", NOT_HELD: "did not hold", NOT_DISTINGUISHABLE: "was not "
            "distinguishable", UNTESTABLE: "could not be tested"}
    found = {p.verdict for p in parts}
    if len(found) == 1 and len(tal) > 1:
        v = found.pop()
        said = f"{verb.get(v, v)} at {'every' if v in (HELD, NOT_HELD) else 'any'} alpha"
    else:
        said = listed([f"{verb.get(p.verdict, p.verdict)} at alpha {a}"
                       for p, a in zip(parts, tal)])
    return False, f"the seed's finding that preclude empties the cold last level {said}"


def waf_moves(r: Results, tal: list[str]) -> str:
    """Where WAF moved along preclude above the noise, against the seed's
    expectation that it falls, in a sentence."""
    moved = []
    for a in tal:
        cs = series(r, a)
        for x, y in zip(cs, cs[1:]):
            w = compare(y.stat("write_amplification", Z), x.stat("write_amplification", Z))
            if w.sign in "<>":
                moved.append(f"{'rose' if w.sign == '>' else 'fell'} from "
                             f"{x.value('write_amplification', Z):.1f} to "
                             f"{y.value('write_amplification', Z):.1f} at alpha {a} "
                             f"({x.values['tier_s']} to {y.values['tier_s']} s)")
    if not moved:
        return "WAF did not move with preclude above the noise."
    return ("WAF did not fall with preclude as the seed expected: it " + "; ".join(moved)
            + ", and elsewhere moved no more than the noise.")


def answer(r: Results) -> str:
    al = alphas(r)
    if not al:
        return "These runs have no cell without tiering to compare against."
    tal, ta = tiered_alphas(r), tiered_at(r)
    out = []
    # tiering against none: throughput
    costs = {a: tiering_effect(r, a) for a in ta}
    quiet = bool(costs) and all(c.sign == "~" for c in costs.values())
    # along preclude: WAF and throughput
    waf = [p for a in tal for p in hypothesis(r, a)]
    still = bool(waf) and all(p.verdict == NOT_DISTINGUISHABLE for p in waf)
    placed, where = where_words(r, tal) if tal else (False, "")
    if placed and quiet and still:
        out.append("Here time-aware tiering changed where data ends up and nothing else "
                   f"above the noise: {where}.")
    elif where:
        out.append(f"{where[0].upper()}{where[1:]}.")
    if costs:
        band = next((c.band for c in costs.values() if c.band), None)
        worst = max(abs(c.ratio - 1) for c in costs.values() if c.sign != "?") \
            if any(c.sign != "?" for c in costs.values()) else None
        if all(c.sign == "?" for c in costs.values()):
            out.append("Whether tiering costs throughput these runs cannot tell.")
        elif quiet and band and worst is not None:
            out.append(f"Tiering (preclude = preserve = {TIERED} s) wrote within "
                       f"{pct(max(worst, 0.01))} of plain universal compaction's "
                       f"throughput, inside this machine's {pct(band[1] - 1)} noise.")
        else:
            said = {"~": "not above the noise", "?": "cannot tell", ">": "faster",
                    "<": "slower"}
            out.append("Tiering against plain universal compaction, throughput: " + "; ".join(
                f"alpha {a} " + (f"{c.ratio:.2f}x ({said[c.sign]})" if c.sign != "?" else
                                 said["?"]) for a, c in costs.items()) + ".")
    if tal:
        same = all(len({f"{c.value('write_amplification', Z):.2f}" for c in series(r, a)}) == 1
                   for a in tal)
        if still and same:
            out.append("Neither WAF nor throughput moved with preclude above the noise (WAF "
                       "read the same to two decimals).")
        elif still:
            out.append("Neither WAF nor throughput moved with preclude above the noise.")
        else:
            out.append(waf_moves(r, tal))
    if len(al) >= 2:
        lo, hi = default(r, al[0]), default(r, al[-1])
        c = compare(hi.stat("ops_sec", Z), lo.stat("ops_sec", Z))
        w = compare(hi.stat("write_amplification", Z), lo.stat("write_amplification", Z))
        if c.sign in "<>":
            out.append(f"Skew {'mattered more' if quiet and still else 'mattered too'}: "
                       f"alpha {al[-1]} wrote {c.ratio:.1f}x as fast as {al[0]}"
                       + (f", with a WAF of {hi.value('write_amplification', Z):.1f} against "
                          f"{lo.value('write_amplification', Z):.1f}" if w.sign in "<>"
                          else "") + ".")
    traced = [c for c in r.cells if c.writes]
    if traced and not any(c.trusted for c in traced):
        out.append("Every traced run failed its self-check, so how flush and compaction I/O "
                   "lands on writes is not answered.")
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
          "last_level_temperature=cold on the same disk. The seed set preclude = preserve to "
          "0, 20, 50, 80 and 100% of its run (0/20/50/80/120 s at alpha 0.5, 0/15/40/65/120 "
          "at 0.9, 0/10/25/40/120 at 1.2). Here every run writes for 10 s (a time, not a "
          "count of Puts, so a slower run, a traced one among them, spans the same time and "
          "fewer Puts), and tier_s sets preclude = preserve to 0, 2 or 5 s: 0, 20 and 50% of "
          "the run. The seed's 80 and 100% steps are left out to keep the study's run time. "
          "\"Default\" is tier_s 0 (no time tracking, no preclude), \"tiered\" tier_s 5 s "
          "(50% of the run); the claims on preclude follow tier_s 0 -> 2 -> 5 s. WAF is the "
          "seed's (WAL bytes included), with the SST-only WAF beside it; the last-level ratio "
          "is the seed's (read bytes), with the share of stored SST bytes in the last level "
          "at the end beside it; SAF is the DB folder's size at the end over the bytes "
          "written. Traced in trace_wal's default mode, like the other studies: every write "
          "while that costs at most the throughput budget, windows of them when not (the "
          "traced/untraced column shows what tracing cost).",
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
    quick={"fixed": {"duration_s": 2}, "repeats": 1,
           "axes": {"alpha": [1.2], "tier_s": [0, 2]}},
    flames=lambda r: [default(r, alphas(r)[0]).name,
                      default(r, alphas(r)[-1]).name] if alphas(r) else [],
)
