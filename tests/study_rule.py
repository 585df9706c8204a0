"""The verdict rule of docs/matrices.md ("The verdict rule"), written from the
doc alone, as a checker of the studies' verdicts (issue 45). It imports
nothing from runners/: it must be able to disagree with the generator.

Pure functions from the figures a claim rests on to a verdict in one
vocabulary: held / partly held / did not hold / not distinguishable here /
cannot be tested here.

What the doc states, and this module does (``compare``):

1. "Pair the two cells' runs round by round ... and take the per-round
   ratios a/b."
2. "Their median's interval, distribution-free: the k-th smallest and k-th
   largest ratio, k as large as keeps the coverage at 90% or more."
3. "The A/A band: ... with ratios from lo to hi, m = max(hi, 1/lo) and the
   band is [1/m, m]."
4. "The cells differ only when the interval lies wholly above the band's
   top or wholly below its bottom; otherwise 'not above the noise'. With
   fewer than five paired rounds, or no A/A pair, the rule cannot tell, and
   a claim resting on it is 'cannot be tested here', never 'did not hold'."

Attribution (``attribution_part``): "Where either traced run failed its
self-check, its microseconds are not the workload's, so 'held' stands only
if the named components are the claimed share of the untraced gap too;
otherwise the claim is 'partly held' ... A traced delta beside an untraced
comparison that found no difference is said to be no evidence of one."

Where the doc is silent, this is how it is read here:

- Zeros. A round where both values are 0 is a ratio of 1 (the runs are
  equal); a/0 with a > 0 is +inf; 0/b is 0. The doc divides and says
  nothing of zeros; dropping such rounds turned 003's last-level share
  (0.43 -> 0.00 -> 0.00) into "cannot be tested" (issue 45).
- "Wholly above" is strict: an interval that touches the band's edge is
  not above it. A band of exactly 1.00 (a metric that did not vary across
  the A/A pair) is applied as written: any interval that excludes 1 is a
  difference, however small (002's SAF 0.98x). Issue 45 names this as a
  defect of the band; the doc does not yet say otherwise.
- No noise test ever calls two cells alike: "not above the noise" is not
  evidence of no difference ("a real difference smaller than the A/A band
  is not called"). So a part that claims a difference and a part that
  claims none both become "not distinguishable here" when the rule calls
  nothing; a claimed "no difference" that the rule calls is "did not hold".
- Two effects "alike" (001 claim 2): both called the same way -> held;
  called opposite ways -> did not hold; otherwise not distinguishable
  (the doc has no rule for comparing two ratios; overlapping intervals
  are not one).
- A trend over an ordered axis ("the higher alpha, the higher
  throughput"): held when the end-to-end comparison is called in the
  claimed direction and no adjacent step is called against it; did not
  hold when any of them is called against it; otherwise not
  distinguishable; cannot be tested when any of them cannot tell.
- A share of one run's write ("the sync dominates"): judged on the cell's
  answering lens only if it is trusted; the untraced runs cannot split a
  write, so an untrusted lens leaves the part "cannot be tested here". A
  cell traced in five rounds or more: the median interval of the rounds'
  shares against the claimed share.
- Attribution: the doc says only when "held" stands after a failed
  self-check. Read both ways here: with a failed self-check, the verdict
  the traced gap gives (held or did not hold) stands only if the untraced
  gap gives the same; where they disagree the part is "partly held". The
  claimed share is the claim's ("the cause is": half or more).
- The A/A figure is the family's pairs' per-round ratios' [lo, hi] for the
  metric (two families: the union of their ranges), as each cell's stored
  figure has it; before families, the one pair's,
  as results.json stores it; no A/A figure (empty) is "no A/A pair".
- Claims of several parts (the doc has none; issue 45 asks for "a verdict
  per part, untestable parts named, the claim's verdict from its parts"):
  any part that cannot be tested makes the claim "cannot be tested here"
  (step 4: "a claim resting on it is 'cannot be tested here'"); all held ->
  held; all did not hold -> did not hold; all not distinguishable -> not
  distinguishable here; any other mix with a part held or partly held ->
  partly held; a mix of "did not hold" and "not distinguishable" -> did not
  hold (a part was called against the claim and none for it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence

HELD = "held"
PARTLY = "partly held"
NOT_HELD = "did not hold"
NOT_DISTINGUISHABLE = "not distinguishable here"
UNTESTABLE = "cannot be tested here"
VERDICTS = (HELD, PARTLY, NOT_HELD, NOT_DISTINGUISHABLE, UNTESTABLE)

MIN_ROUNDS = 5
COVERAGE = 0.90

Call = Literal["above", "below", "noise", "cannot tell"]
Direction = Literal["above", "below"]


def ratio(a: float, b: float) -> float:
    """a/b, with the zeros read as in the module's docstring."""
    if b == 0:
        return 1.0 if a == 0 else math.inf
    return a / b


def paired_ratios(a: Sequence[float | None], b: Sequence[float | None]) -> list[float]:
    """Per-round a/b, pairing round i with round i; a round either side lacks
    (None or NaN) is not a pair."""
    out = []
    for x, y in zip(a, b):
        if x is None or y is None or math.isnan(x) or math.isnan(y):
            continue
        out.append(ratio(x, y))
    return out


def coverage(n: int, k: int) -> float:
    """P(k-th smallest <= median <= k-th largest) of n draws."""
    tail = sum(math.comb(n, i) for i in range(k)) / 2 ** n
    return 1 - 2 * tail


def median_interval(ratios: Sequence[float]) -> tuple[float, float] | None:
    """The k-th smallest and k-th largest, k as large as keeps the coverage
    at COVERAGE or more; None when even k = 1 does not."""
    n = len(ratios)
    ks = [k for k in range(1, n // 2 + 1) if coverage(n, k) >= COVERAGE]
    if not ks:
        return None
    k = max(ks)
    s = sorted(ratios)
    return s[k - 1], s[n - k]


def aa_band(lo: float, hi: float) -> tuple[float, float]:
    """[1/m, m], m = max(hi, 1/lo), from the A/A pair's ratios lo..hi."""
    m = max(hi, math.inf if lo == 0 else 1 / lo)
    return (0.0 if math.isinf(m) else 1 / m), m


@dataclass(frozen=True)
class Comparison:
    rounds: int
    interval: tuple[float, float] | None
    band: tuple[float, float] | None
    call: Call


def compare(a: Sequence[float | None], b: Sequence[float | None],
            aa: Sequence[float] | None) -> Comparison:
    """Cells a and b on one metric: "above" (a > b beyond the noise),
    "below", "noise" (not above the noise) or "cannot tell". aa is the A/A
    pair's per-round ratios' [lo, hi] for the same metric, None or empty
    when there is no A/A pair."""
    ratios = paired_ratios(a, b)
    interval = median_interval(ratios)
    band = aa_band(aa[0], aa[1]) if aa else None
    if len(ratios) < MIN_ROUNDS or interval is None or band is None:
        return Comparison(len(ratios), interval, band, "cannot tell")
    if interval[0] > band[1]:
        call: Call = "above"
    elif interval[1] < band[0]:
        call = "below"
    else:
        call = "noise"
    return Comparison(len(ratios), interval, band, call)


def _against(expect: Direction) -> Direction:
    return "below" if expect == "above" else "above"


def direction_part(c: Comparison, expect: Direction) -> str:
    """A part that claims a is above (or below) b."""
    if c.call == "cannot tell":
        return UNTESTABLE
    if c.call == "noise":
        return NOT_DISTINGUISHABLE
    return HELD if c.call == expect else NOT_HELD


def differ_part(c: Comparison) -> str:
    """A part that claims a and b differ, either way."""
    if c.call == "cannot tell":
        return UNTESTABLE
    return NOT_DISTINGUISHABLE if c.call == "noise" else HELD


def alike_part(c: Comparison) -> str:
    """A part that claims a and b do not differ."""
    if c.call == "cannot tell":
        return UNTESTABLE
    return NOT_DISTINGUISHABLE if c.call == "noise" else NOT_HELD


def same_effect_part(x: Comparison, y: Comparison) -> str:
    """A part that claims two effects (each a comparison) are alike."""
    if "cannot tell" in (x.call, y.call):
        return UNTESTABLE
    if "noise" in (x.call, y.call):
        return NOT_DISTINGUISHABLE
    return HELD if x.call == y.call else NOT_HELD


def trend_part(whole: Comparison, steps: Sequence[Comparison], expect: Direction) -> str:
    """A part that claims the metric moves in one direction along an ordered
    axis: whole = last level over first, steps = each level over the one
    before."""
    everything = [whole, *steps]
    if any(c.call == "cannot tell" for c in everything):
        return UNTESTABLE
    if any(c.call == _against(expect) for c in everything):
        return NOT_HELD
    return HELD if whole.call == expect else NOT_DISTINGUISHABLE


def _share_verdict(named: float, gap: float, share: float) -> str:
    return HELD if gap != 0 and named / gap >= share else NOT_HELD


def attribution_part(named_traced: float, traced_gap: float, untraced_gap: float,
                     share: float, trusted: bool, untraced: Comparison) -> str:
    """A part that claims named components carry at least `share` of the gap
    between two cells: named_traced is their traced delta, traced_gap the
    traced write's, untraced_gap the untraced one per operation (one unit
    throughout); trusted is whether both traced runs passed the self-check;
    untraced is the untraced comparison of the two cells."""
    if untraced.call == "cannot tell":
        return UNTESTABLE
    if untraced.call == "noise":
        return NOT_DISTINGUISHABLE
    traced_lens = _share_verdict(named_traced, traced_gap, share)
    if trusted:
        return traced_lens
    untraced_lens = _share_verdict(named_traced, untraced_gap, share)
    return traced_lens if traced_lens == untraced_lens else PARTLY


def composition_part(named: float, total: float, share: float, trusted: bool,
                     rounds: Sequence[float] = ()) -> str:
    """A part that claims named components are at least `share` of a cell's
    traced mean write; rounds: each traced round's share, where the cell was
    traced in five rounds or more (the doc: their median's interval at or
    above the share holds, wholly below does not, across it is not
    distinguishable)."""
    if not trusted:
        return UNTESTABLE
    if len(rounds) >= MIN_ROUNDS:
        lo, hi = median_interval(rounds)   # type: ignore[misc]
        return HELD if lo >= share else NOT_HELD if hi < share else NOT_DISTINGUISHABLE
    return _share_verdict(named, total, share)


@dataclass(frozen=True)
class Part:
    name: str
    verdict: str
    why: str = ""


def untestable_parts(parts: Sequence[Part]) -> list[str]:
    """The names of the parts that cannot be tested here, with why."""
    return [f"{p.name}: {p.why}" if p.why else p.name
            for p in parts if p.verdict == UNTESTABLE]


def claim_verdict(parts: Sequence[Part]) -> str:
    """The claim's verdict from its parts' (the module's docstring)."""
    if not parts:
        raise ValueError("a claim with no parts has no verdict")
    for p in parts:
        if p.verdict not in VERDICTS:
            raise ValueError(f"{p.name}: {p.verdict!r} is not a verdict")
    verdicts = {p.verdict for p in parts}
    if UNTESTABLE in verdicts:
        return UNTESTABLE
    if len(verdicts) == 1:
        return verdicts.pop()
    if verdicts & {HELD, PARTLY}:
        return PARTLY
    return NOT_HELD
