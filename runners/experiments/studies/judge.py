"""Helpers the studies' verdicts share: comparisons that respect the spread
of the repeats, the rule for claims that traced components carry a gap
(attributed: the untraced gap beside the traced one, and what a failed
self-check does to the verdict), and numbers written the same way
everywhere."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from analysis.selfcheck import HIGH_MEAN, HIGH_P99, TOLERANCE
from runners.experiments.studies.model import (HELD, NOT_DISTINGUISHABLE, NOT_HELD, PARTLY,
                                               UNTESTABLE, Part)
from runners.experiments.studies.results import TRUTH_TOLERANCE, CellResult, Stat
from runners.experiments.studies.results import judge_ratio as ratio


MIN_ROUNDS = 5        # rounds a comparison needs before it may call a difference
COVERAGE = 0.90       # of the interval of the median per-round ratio


@dataclass
class Comparison:
    """Two cells' metric, compared round by round (a / b of the untraced runs
    of the same round), against the matrix's A/A band."""
    sign: str                    # ">", "<", "~" (within the noise) or "?"
    ratio: float = math.nan      # median of the per-round ratios
    lo: float = math.nan         # its distribution-free interval
    hi: float = math.nan
    band: tuple[float, float] | None = None   # the A/A band
    rounds: int = 0
    why: str = ""                # for "?": what is missing

    def text(self) -> str:
        if self.sign == "?":
            return self.why
        aa = f"; A/A {self.band[0]:.2f}-{self.band[1]:.2f}" if self.band else ""
        return f"{_x(self.ratio)} [{_f(self.lo)}-{_f(self.hi)}] over {self.rounds} rounds{aa}"


def _f(v: float) -> str:
    return "inf" if v == math.inf else f"{v:.2f}"


def _x(v: float) -> str:
    return "inf" if v == math.inf else f"{v:.2f}x"


def median_interval(q: list[float], coverage: float = COVERAGE) -> tuple[float, float]:
    """Order statistics (k-th smallest, k-th largest) bracketing the median
    with at least this coverage, k as large as that allows: no assumption on
    the ratios' distribution (for 5 rounds, min and max: 94%)."""
    q = sorted(q)
    n, k = len(q), 1
    while k + 1 <= n // 2 and 1 - 2 * _binom_cdf(k + 1, n) >= coverage:
        k += 1
    return q[k - 1], q[n - k]


def _binom_cdf(k: int, n: int) -> float:
    """P(Bin(n, 1/2) < k)."""
    return sum(math.comb(n, i) for i in range(k)) / 2 ** n


def symmetric(aa: list[float]) -> tuple[float, float] | None:
    """The A/A band either way: which run of the pair is "A" is arbitrary,
    so a pair whose ratios ranged lo..hi strays from 1 by up to
    m = max(hi, 1/lo) in either direction: [1/m, m]."""
    if not aa or min(aa) <= 0:
        return None
    m = max(max(aa), 1 / min(aa), 1.0)
    return 1 / m, m


def compare(a: Stat | None, b: Stat | None) -> Comparison:
    """The verdict rule (docs/matrices.md): the per-round ratios a/b; their
    median's interval must lie wholly outside the A/A band for a
    difference to count."""
    if a is None or b is None:
        return Comparison("?", why="no untraced runs")
    q = [ratio(x, y) for x, y in zip(a.rounds, b.rounds)
         if x == x and y == y]   # NaN: a round without one of the two
    # two families: the wider of their bands (the union of the ranges)
    aa = [min(a.aa[0], b.aa[0]), max(a.aa[1], b.aa[1])] if a.aa and b.aa else a.aa or b.aa
    band = symmetric(aa)
    if len(q) < MIN_ROUNDS:
        return Comparison("?", rounds=len(q), why=f"{len(q)} paired rounds "
                          f"(the rule needs {MIN_ROUNDS})")
    lo, hi = median_interval(q)
    c = Comparison("~", statistics.median(q), lo, hi, band, len(q))  # type: ignore[arg-type]
    if band is None:
        c.sign, c.why = "?", "no A/A pair in the matrix"
    elif lo > band[1]:
        c.sign = ">"
    elif hi < band[0]:
        c.sign = "<"
    return c


# --- parts: what each kind of statement a claim makes reads from the rule
# (docs/matrices.md, "Claims of several parts"); "not above the noise" is
# never evidence of no difference, so it is "not distinguishable here",
# whichever way the claim went.

def _rule(c: Comparison) -> str:
    return c.why if c.sign == "?" else c.text()


def direction(name: str, c: Comparison, want: str) -> Part:
    """a is above (want '>') or below ('<') b."""
    if c.sign == "?":
        return Part(name, UNTESTABLE, c.why)
    if c.sign == "~":
        return Part(name, NOT_DISTINGUISHABLE, f"{c.text()}, not above the noise")
    return Part(name, HELD if c.sign == want else NOT_HELD, c.text())


def differ(name: str, c: Comparison) -> Part:
    """a and b differ, either way."""
    if c.sign == "?":
        return Part(name, UNTESTABLE, c.why)
    return Part(name, NOT_DISTINGUISHABLE if c.sign == "~" else HELD, _rule(c))


def alike(name: str, c: Comparison) -> Part:
    """a and b do not differ: the rule can refute it (a difference called),
    never confirm it (a difference inside the A/A band does not show)."""
    if c.sign == "?":
        return Part(name, UNTESTABLE, c.why)
    if c.sign == "~":
        return Part(name, NOT_DISTINGUISHABLE,
                    f"{c.text()}: no difference above the noise, which does not show "
                    "that there is none")
    return Part(name, NOT_HELD, f"{c.text()}, a difference")


def same_effect(name: str, x: Comparison, y: Comparison) -> Part:
    """Two effects (each a comparison) are alike: both called the same way."""
    ev = f"{_rule(x)}; {_rule(y)}"
    if "?" in (x.sign, y.sign):
        return Part(name, UNTESTABLE, ev)
    if "~" in (x.sign, y.sign):
        return Part(name, NOT_DISTINGUISHABLE, ev)
    return Part(name, HELD if x.sign == y.sign else NOT_HELD, ev)


def trend(name: str, whole: Comparison, steps: list[Comparison], want: str) -> Part:
    """The metric moves one way (want '>': up) along an ordered axis: whole
    is the last level over the first, steps each level over the one before;
    held when the whole is called that way and no step against it."""
    ev = f"end to end {_rule(whole)}; steps " + ", ".join(
        _x(c.ratio) if c.sign != "?" else "?" for c in steps)
    everything = [whole, *steps]
    if any(c.sign == "?" for c in everything):
        return Part(name, UNTESTABLE, ev)
    against = "<" if want == ">" else ">"
    if any(c.sign == against for c in everything):
        return Part(name, NOT_HELD, ev)
    return Part(name, HELD if whole.sign == want else NOT_DISTINGUISHABLE, ev)


def composition(name: str, named: float, total: float, share: float, trusted: bool,
                lens: str = "rows", rounds: list[float] | None = None) -> Part:
    """Named components are at least `share` of one cell's traced mean write,
    read from its lens; untraced runs cannot split a write, so without a
    trusted lens the part cannot be tested. Traced in MIN_ROUNDS rounds or
    more (rounds: each round's share), the share's median interval across
    them decides: held when it lies at or above `share`, did not hold when
    below, otherwise not distinguishable; traced once, its one share."""
    if not trusted:
        return Part(name, UNTESTABLE, "neither lens of its traced run is trusted, and "
                    "untraced runs cannot split a write")
    if rounds and len(rounds) >= MIN_ROUNDS:
        lo, hi = median_interval(rounds)
        ev = (f"{pct(statistics.median(rounds))} [{pct(lo)}-{pct(hi)}] of the mean write over "
              f"{len(rounds)} traced rounds, {lens} lens; the claim needs {pct(share)}")
        verdict = HELD if lo >= share else NOT_HELD if hi < share else NOT_DISTINGUISHABLE
        return Part(name, verdict, ev)
    got = named / total if total else 0.0
    return Part(name, HELD if got >= share else NOT_HELD,
                f"{pct(got)} of the mean write, {lens} lens; the claim needs {pct(share)}")


def attribution_part(name: str, at: "Attribution", share: float, c: Comparison) -> Part:
    """Named components carry at least `share` of the gap between two cells:
    the traced share; where a traced run was not trusted, it stands only
    where the untraced gap gives the same answer, else partly held. A traced
    delta beside no untraced difference is no evidence of one."""
    if c.sign == "?":
        return Part(name, UNTESTABLE, c.why)
    gap = at.text()
    if c.sign == "~":
        return Part(name, NOT_DISTINGUISHABLE, f"untraced {c.text()}: no gap above the "
                    f"noise to carry; {gap}")
    traced = at.traced != 0 and at.part / at.traced >= share
    ev = f"{pct(at.part / at.traced) if at.traced else 'n/a'} of the traced gap; {gap}"
    if not at.untrusted:
        return Part(name, HELD if traced else NOT_HELD, ev)
    u = at.untraced_share()
    untraced = u == u and u >= share
    return Part(name, (HELD if traced else NOT_HELD) if traced == untraced else PARTLY, ev)


def reading(c: Comparison, faster: str, slower: str) -> str:
    """What a comparison's sign means, in words."""
    return {">": faster, "<": slower, "~": "not above the A/A noise"}.get(
        c.sign, "the rule cannot tell")


def judged(label: str, c: Comparison, faster: str, slower: str) -> str:
    """The rule's comparison as the evidence quotes it: 'P/E 1.02x [...]
    over 5 rounds; A/A ... (not above the A/A noise)'."""
    if c.sign == "?":
        return f"{label}: the rule cannot tell, {c.why}"
    return f"{label} {c.text()} ({reading(c, faster, slower)})"


def order(a: Stat | None, b: Stat | None) -> str:
    """'>' or '<' when a differs from b above the noise (compare), '~' when
    not, '?' when the runs cannot tell."""
    return compare(a, b).sign


def x(a: float, b: float) -> str:
    """a / b as a factor."""
    return f"{a / b:.2f}x" if b and not math.isnan(a) and not math.isnan(b) else "n/a"


def pct(v: float) -> str:
    return f"{100 * v:.0f}%"


def num(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def ops(c: CellResult, bench: str | None = None) -> str:
    s = c.stat("ops_sec", bench)
    return f"{num(s.median)} ops/s [{num(s.lo)}-{num(s.hi)}]" if s else "n/a"


def top_growth(c: CellResult) -> tuple[str, float, float]:
    """The component that grows most, in us, from the mean write to the
    p99 tail: (name, mean us, tail us)."""
    if not c.comp_tail_us:
        return "-", 0.0, 0.0
    name = max(c.comp_tail_us, key=lambda k: c.comp_tail_us[k] - c.comp_mean_us.get(k, 0))
    return name, c.comp_mean_us.get(name, 0.0), c.comp_tail_us[name]


def top(c: CellResult, tail: bool = False) -> tuple[str, float]:
    """The largest component and its share."""
    d = c.comp_tail_us if tail else c.comp_mean_us
    if not d:
        return "-", 0.0
    k = max(d, key=d.__getitem__)
    tot = sum(d.values())
    return k, d[k] / tot if tot else 0.0


def traced_note(c: CellResult) -> str:
    """How the cell's attribution was recorded, and which of its rows the
    per-write figures read (a long run's rows are read 1 in row_step)."""
    w = c.extra.get("windows")
    step = int(c.extra.get("row_step") or 1)
    read = (f"; the per-write figures here read every {ordinal(step)} row, "
            f"{-(-c.writes // step):,}" if step > 1 else "")
    return (f"{c.writes:,} writes traced in {c.mode} mode"
            + (f" over {w} window{'s' if w != 1 else ''}" if w else "") + read)


def ordinal(n: int) -> str:
    """2 -> '2nd'."""
    end = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{end}"


def distrust(c: CellResult) -> str | None:
    """Why the cell's traced run's self-check did not trust its latencies,
    in the words of the run's own table (analysis/selfcheck.py line(), the
    same reasons in the same order), or None where it trusted them or made
    no check (a run without per-write rows)."""
    sc = c.extra.get("self_check") or {}
    if not sc or sc.get("trusted", not sc.get("high")):
        return None
    tol = sc.get("tolerance", TOLERANCE)
    if sc.get("high"):
        return (f"probes lengthened its writes {100 * sc['inflation']:.0f}% and waits are "
                f"{100 * sc['wait_share']:.0f}% of its latency, where bench/truth.py measured "
                f"traced means {HIGH_MEAN} and p99s {HIGH_P99} the untraced ones at such risk")
    if sc.get("uncertainty", 0.0) > tol:
        return (f"its compensation is good to +-{100 * sc['uncertainty']:.0f}% only (it removed "
                f"{100 * sc['inflation']:.0f}% of the compensated mean, "
                f"+-{100 * sc['band']:.0f}% a hit), not to the {100 * tol:.0f}% "
                "bench/truth.py holds a mean to")
    if sc.get("left_out_share", 0.0) > tol:
        return (f"writes let go at windows' ends are >= {100 * sc['left_out_share']:.0f}% of "
                "the time, so its mean leaves them out and reads low")
    if sc.get("longest_share", 0.0) > tol:
        return (f"one write is {100 * sc['longest_share']:.0f}% of the sum, so its mean is "
                "that write's, not a typical one's (its p99 stands)")
    return "its self-check did not trust it"   # a reason added to selfcheck.py since


def trust_note(c: CellResult) -> str:
    """A sentence when the cell's traced run's self-check did not trust its
    latencies (analysis/selfcheck.py: for any of its reasons), else ''."""
    why = distrust(c)
    if why is None:
        return ""
    if c.trusted and c.lens != "rows":
        then = (f"its mean write and components come from the {c.lens} lens, which is "
                "trusted")
    else:
        then = "no lens of it is trusted, so no claim reads its components"
    return (f"(The traced rows of `{c.name}` failed their self-check: {why}: their "
            f"per-write microseconds and p99 are not the workload's; {then}.)")


def untrusted(*cells: CellResult) -> list[str]:
    """The names of the cells whose traced run failed its self-check."""
    return [c.name for c in cells if distrust(c) is not None]


def per_op_us(c: CellResult, bench: str | None = None) -> float:
    """The untraced runs' time per operation, us: db_bench's micros/op (the
    studies' "avg us/op" column) where recorded, else 1e6 / ops/s; NaN
    where neither is."""
    v = c.value("micros_op", bench)
    if v == v:
        return v
    o = c.value("ops_sec", bench)
    return 1e6 / o if o == o and o else math.nan


def per_op_source(c: CellResult, bench: str | None = None) -> str:
    """Which column per_op_us read, as the text names it."""
    return "avg us/op" if c.stat("micros_op", bench) else "1e6 / ops/s"


def of(part: float, whole: float) -> str:
    """'85% of it', or, where the two have opposite signs (a share would
    read as a negative percentage), 'the other way'."""
    return f"{pct(part / whole)} of it" if part * whole >= 0 else "the other way"


@dataclass
class Attribution:
    """A gap between two cells (B - A) that components of the traced write
    are said to carry: the part those components move and the traced gap
    (us, the traced runs'), beside the untraced gap per operation the
    traced one stands for (us/op, the medians of the untraced runs)."""
    part: float
    traced: float
    untraced: float
    source: str              # per_op_source of the untraced gap
    untrusted: list[str]     # cells whose traced run failed its self-check
    # how the untraced gap is written: its unit and decimals (SQLite: "us a
    # new_order", 0), and why each untrusted cell is (default: its self-check)
    unit: str = "us/op"
    digits: int = 2
    why: dict[str, str] = field(default_factory=dict)

    def untraced_share(self) -> float:
        return self.part / self.untraced if self.untraced == self.untraced and self.untraced \
            else math.nan

    def gap_text(self, share: bool = True) -> str:
        """'the untraced gap is +2.10 us/op (avg us/op, medians): the
        traced gap is 133% of it' (share False: without the share, for an
        untraced gap within the noise, of which a share means nothing) and,
        where a traced run failed its self-check, so saying."""
        if self.untraced != self.untraced:
            s = "the untraced gap is not recorded"
        else:
            s = (f"the untraced gap is {self.untraced:+,.{self.digits}f} {self.unit} "
                 f"({self.source}, medians)"
                 + (f": the traced gap is {of(self.traced, self.untraced)}"
                    if self.untraced and share else ""))
        if any(n in self.why for n in self.untrusted):   # reasons of their own
            s += ("; " + "; ".join(f"the traced run of `{n}` "
                                   f"{self.why.get(n, 'failed its self-check')}"
                                   for n in self.untrusted)
                  + " (the notes under the table): its microseconds are not the workload's")
        elif self.untrusted:
            many = len(self.untrusted) > 1
            s += (f"; the traced run{'s' if many else ''} of "
                  + ", ".join(f"`{n}`" for n in self.untrusted)
                  + f" failed {'their' if many else 'its'} self-check (the notes under the "
                  f"table): {'their' if many else 'its'} microseconds are not the workload's")
        return s

    def text(self, part: str = "these components") -> str:
        """gap_text with the part's share of the untraced gap (part: what
        the part is, in words)."""
        s = self.gap_text()
        if self.untraced_share() == self.untraced_share():   # NaN: no share to give
            head, _, rest = s.partition("; ")
            s = f"{head}, {part} {of(self.part, self.untraced)}" + (f"; {rest}" if rest else "")
        return s


def attribution(a: CellResult, b: CellResult, part: float, traced: float,
                bench: str | None = None) -> Attribution:
    """The Attribution of a traced gap B - A whose named components move
    `part` us."""
    return Attribution(part, traced, per_op_us(b, bench) - per_op_us(a, bench),
                       per_op_source(b, bench), untrusted(a, b))


def attributed(outcome: str, at: Attribution, share: float,
               part: str = "these components") -> tuple[str, str]:
    """The attribution rule, the same in every study: a claim that some
    components carry a gap is decided on the traced runs' rows (those
    components' part of the traced gap against `share`), and then:

    - where both traced runs passed their self-check, that outcome stands;
    - where either failed it, their microseconds are not the workload's,
      and a HELD stands only if the share argument holds for the untraced
      gap too (the part is `share` or more of the untraced gap per
      operation, with its sign); otherwise it is PARTLY, and says why.
      Outcomes other than HELD are left as they are (the evidence still
      says the runs were not trusted).

    Returns (outcome, what to add to the evidence: '' or the reason)."""
    if outcome != HELD or not at.untrusted:
        return outcome, ""
    u = at.untraced_share()
    if u == u and u >= share:
        return HELD, (f" (it holds for the untraced gap too: {pct(u)} of it, "
                      f">= {pct(share)})")
    shown = "not recorded" if u != u else f"only {pct(u)}"
    return PARTLY, (f" (partly: the traced runs were not trusted, and of the untraced gap "
                    f"{part} are {shown}, under {pct(share)})")


def beside_untraced(a: CellResult, b: CellResult, traced_us: float,
                    bench: str | None = None) -> str:
    """What a traced delta B - A (traced_us, the mean write) is to be read
    against: the untraced gap per operation, the rule's comparison of the
    untraced throughput B/A, and where that found no difference (or cannot
    tell), that the traced delta is not evidence of one; with the
    self-check's word where a traced run failed it."""
    at = attribution(a, b, traced_us, traced_us, bench)
    c = compare(b.stat("ops_sec", bench), a.stat("ops_sec", bench))
    head, _, trust = at.gap_text(share=c.sign not in "~?").partition("; ")
    s = f"{head}; " + judged("untraced throughput B/A", c, "B faster", "A faster")
    if c.sign in "~?":
        s += ": the traced delta is not evidence of a difference"
    return s + (f"; {trust}" if trust else "")




def truth_note(c: CellResult) -> str:
    """A sentence when the traced run's compensated mean, per transaction
    type, is off its untraced runs' own by more than TRUTH_TOLERANCE."""
    got = c.extra.get("traced_vs_untraced_mean") or {}
    off = {b: r for b, r in got.items() if abs(r - 1) > TRUTH_TOLERANCE}
    if not off:
        return ""
    worst = max(off, key=lambda b: abs(off[b] - 1))
    return (f"(The traced run of `{c.name}` is off its untraced runs' own latency: "
            + ", ".join(f"{b} {r:.2f}x" for b, r in off.items())
            + f" (compensated traced mean over the untraced median). Its per-transaction "
            f"microseconds, {worst}'s most, are not the untraced workload's; its I/O counts "
            "and which components there are still are.)")


def missing_rows(*cells: CellResult) -> str | None:
    """A sentence naming the cells whose traced run holds no row (a run
    shorter than its first window's wait), or None."""
    empty = [c.name for c in cells if not c.writes]
    if not empty:
        return None
    return (f"(Not comparable here: the traced run of {', '.join(empty)} had no write "
            "inside a window; its untraced figures stand.)")
