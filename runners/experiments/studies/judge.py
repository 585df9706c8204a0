"""Helpers the studies' verdicts share: comparisons that respect the spread
of the repeats, and numbers written the same way everywhere."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from analysis.selfcheck import HIGH_MEAN, HIGH_P99
from runners.experiments.studies.model import HELD, NOT_HELD, PARTLY, UNTESTABLE
from runners.experiments.studies.results import CellResult, Stat


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
        return f"{self.ratio:.2f}x [{self.lo:.2f}-{self.hi:.2f}] over {self.rounds} rounds{aa}"


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
    q = [x / y for x, y in zip(a.rounds, b.rounds)
         if x == x and y == y and y]   # NaN: a round without one of the two
    band = symmetric(a.aa or b.aa)
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


def tally(outcomes: list[str]) -> str:
    """One claim's outcome from its parts', the same in every study: held
    where every part held, not held where none did, partly between; a part
    the rule cannot tell makes the whole untestable (never "did not hold",
    and never "partly": what could not be tested may be what fails)."""
    if not outcomes or UNTESTABLE in outcomes:
        return UNTESTABLE
    if all(o == HELD for o in outcomes):
        return HELD
    return NOT_HELD if all(o == NOT_HELD for o in outcomes) else PARTLY


def called(c: Comparison, want: str) -> str:
    """HELD where the rule calls the difference `want` ('>' or '<');
    '?' -> UNTESTABLE."""
    return UNTESTABLE if c.sign == "?" else HELD if c.sign == want else NOT_HELD


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
    """How the cell's attribution was recorded."""
    w = c.extra.get("windows")
    return (f"{c.writes:,} rows traced in {c.mode} mode"
            + (f" over {w} window{'s' if w != 1 else ''}" if w else ""))


def trust_note(c: CellResult) -> str:
    """A sentence when the cell's traced run's self-check says its latencies
    are not to be trusted (probes lengthened waits: analysis/selfcheck.py),
    else ''."""
    sc = c.extra.get("self_check") or {}
    if not sc.get("high"):
        return ""
    return (f"(The traced run of `{c.name}` failed its self-check: probes lengthened its "
            f"writes {100 * sc['inflation']:.0f}% and waits are "
            f"{100 * sc['wait_share']:.0f}% of its latency, where bench/truth.py measured "
            f"traced means {HIGH_MEAN} and p99s {HIGH_P99} the untraced ones at such "
            "risk: its microseconds are not the workload's.)")


# the traced mean may differ from the untraced one by this much before a
# study says its microseconds are not the workload's (bench/truth.py's
# tolerance for the mean)
TRUTH_TOLERANCE = 0.15


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
