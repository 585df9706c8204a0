"""Log axes whose every label reads on its own: "200 us", "1 ms", "4 KiB",
never plotly's bare minor digits ("2", "5") beside a lone "1000".

log_ticks picks the sparsest of the 1-2-5-like series that puts at least
MIN_TICKS labels between the data's ends (latencies); size_ticks the
powers of two a size reads in (4 KiB, 1 MiB). The report's axes take
their values and texts as tickvals and ticktext.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable

# mantissas per decade, sparsest first
SERIES = ((1,), (1, 3), (1, 2, 5), (1, 2, 3, 5, 7), (1, 2, 3, 4, 5, 6, 7, 8, 9))
MIN_TICKS = 4
MAX_TICKS = 10


def _short(v: float) -> str:
    """A number as a label: 3 significant digits, no trailing zeros."""
    return f"{v:.3g}" if v < 1000 else f"{v:,.0f}"


def us_label(us: float) -> str:
    """A latency given in microseconds: 500 ns, 20 us, 1.5 ms, 2 s."""
    if us < 1:
        return f"{_short(us * 1e3)} ns"
    if us < 1e3:
        return f"{_short(us)} us"
    if us < 1e6:
        return f"{_short(us / 1e3)} ms"
    return f"{_short(us / 1e6)} s"


def count_label(v: float) -> str:
    """A count or rate (ops/s, transactions a minute): 500, 20,000."""
    return _short(v)


def kib_label(kib: float) -> str:
    """A size given in KiB: 512 B, 4 KiB, 1.5 MiB, 2 GiB."""
    if kib < 1:
        return f"{_short(kib * 1024)} B"
    if kib < 1024:
        return f"{_short(kib)} KiB"
    if kib < 1024 ** 2:
        return f"{_short(kib / 1024)} MiB"
    return f"{_short(kib / 1024 ** 2)} GiB"


def _series(lo: float, hi: float, mantissas: tuple[int, ...], step: int = 1) -> list[float]:
    out = []
    for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1, step):
        out += [m * 10.0 ** e for m in mantissas if lo <= m * 10.0 ** e <= hi]
    return out


def log_ticks(values: Iterable[float],
              label: Callable[[float], str] = us_label) -> dict[str, list]:
    """tickvals and ticktext (plotly axis properties) for a log axis over
    the positive values given: MIN_TICKS to MAX_TICKS labels where the
    range allows, powers of ten (every other one over a wide range)
    where it spans many decades. Empty where nothing is positive."""
    pos = [float(v) for v in values if v == v and v > 0]
    if not pos:
        return {}
    lo, hi = min(pos), max(pos)
    if hi / lo < 1.5:       # too narrow for a log series: its ends and middle
        vals = [lo, math.sqrt(lo * hi), hi] if hi > lo else [lo]
    else:
        vals = []
        for m in SERIES:
            vals = _series(lo, hi, m)
            if len(vals) >= MIN_TICKS:
                break
        step = 1
        while len(vals) > MAX_TICKS:    # wide: powers of ten, then every other
            step += 1
            vals = _series(lo, hi, (1,), step)
    vals = sorted(set(float(f"{v:.3g}") for v in vals))
    return {"tickvals": vals, "ticktext": [label(v) for v in vals]}


def size_ticks(kib: Iterable[float]) -> dict[str, list]:
    """tickvals and ticktext for a log axis of sizes in KiB: powers of two
    (1, 2, 4 ... or every other, every third ... as the range asks), at
    most MAX_TICKS of them; a range of fewer than three, as log_ticks
    draws it. Empty where nothing is positive."""
    pos = [float(v) for v in kib if v == v and v > 0]
    if not pos:
        return {}
    lo, hi = math.ceil(math.log2(min(pos))), math.floor(math.log2(max(pos)))
    if hi - lo < 2:         # fewer than three powers of two in range
        return log_ticks(pos, kib_label)
    step = max(1, math.ceil((hi - lo + 1) / MAX_TICKS))
    vals = [2.0 ** e for e in range(hi - (hi - lo) // step * step, hi + 1, step)]
    return {"tickvals": vals, "ticktext": [kib_label(v) for v in vals]}
