"""Helpers the studies' verdicts share: comparisons that respect the spread
of the repeats, and numbers written the same way everywhere."""
from __future__ import annotations

import math

from runners.studies.results import CellResult, Stat


def order(a: Stat | None, b: Stat | None) -> str:
    """'>' or '<' when the repeats' ranges do not overlap, else '~'."""
    if a is None or b is None:
        return "?"
    if a.lo > b.hi:
        return ">"
    if a.hi < b.lo:
        return "<"
    return "~"


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


def missing_rows(*cells: CellResult) -> str | None:
    """A sentence naming the cells whose traced run holds no row (a run
    shorter than its first window's wait), or None."""
    empty = [c.name for c in cells if not c.writes]
    if not empty:
        return None
    return (f"(Not comparable here: the traced run of {', '.join(empty)} had no write "
            "inside a window; its untraced figures stand.)")
