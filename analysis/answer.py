"""summary.json's headline: the one answer a run gives, from the lens that
can be trusted, with why.

Two lenses measure a run's writes:
- rows: every recorded write, its probes' cost compensated
  (analysis/compensation.py); its self-check (analysis/selfcheck.py) says
  whether the probes left it trustworthy;
- untouched: the writers' time between windows over the writes made there
  (analysis/untouched.py), nothing attached to their path.

The rule (docs/attribution.md, "The headline"): the rows where their
self-check trusts them (they alone give percentiles); else the untouched
lens where it is trusted (its untouched share and interval); else the rows,
marked untrusted, with the reason.  Where both lenses have a mean and they
disagree beyond both intervals (the rows': their self-check's tolerance),
the headline keeps the other too and says so.

A folder without a headline (written before it) reads as the rows lens
(headline_of).
"""
from __future__ import annotations

from typing import Any

ROWS = "rows"
UNTOUCHED = "untouched"


def rows_lens(summary: dict[str, Any]) -> dict[str, Any] | None:
    """The rows' answer: compensated mean, p99 and component means."""
    w = summary.get("writes") or {}
    if not w.get("count"):
        return None
    d = w.get("duration_adj") or {}
    comps = {c: float(v.get("mean_ns", 0.0)) for c, v in (summary.get("components") or {}).items()}
    return {"lens": ROWS, "mean_ns": float(d.get("mean_ns", 0.0)),
            "p99_ns": float(d["p99_ns"]) if d.get("p99_ns") is not None else None,
            "components": comps, "count": int(w["count"]),
            "span": "each recorded write from its start to its end, probes' cost removed"}


def untouched_lens(summary: dict[str, Any]) -> dict[str, Any] | None:
    u = summary.get("untouched") or {}
    if not u.get("available"):
        return None
    return {"lens": UNTOUCHED, "mean_ns": float(u["mean_ns"]), "p99_ns": None,
            "lo_ns": u.get("lo_ns"), "hi_ns": u.get("hi_ns"),
            "components": dict(u.get("components") or {}),
            "count": float(u.get("writes_untouched", 0.0)), "span": u.get("span", "")}


def disagree(rows: dict[str, Any], untouched: dict[str, Any], tolerance: float) -> bool:
    """The rows' mean (+-tolerance) and the untouched interval do not meet."""
    lo, hi = untouched.get("lo_ns"), untouched.get("hi_ns")
    if lo is None or hi is None or lo != lo or hi != hi:
        return False
    r = rows["mean_ns"]
    return r * (1 + tolerance) < lo or r * (1 - tolerance) > hi


def headline(summary: dict[str, Any]) -> dict[str, Any] | None:
    """summary.json's headline (None: no write seen by either lens)."""
    rows = rows_lens(summary)
    untouched = untouched_lens(summary)
    check = summary.get("self_check") or {}
    u = summary.get("untouched") or {}
    rows_trusted = bool(rows and check.get("trusted"))
    if rows_trusted:
        pick, why = rows, "the rows' self-check trusts them"
    elif untouched and u.get("trusted"):
        pick = untouched
        why = ("the rows' self-check does not trust them; the untouched lens "
               f"({u.get('untouched_share', 0) * 100:.0f}% of the writers' time, "
               "nothing attached) is within its interval")
    elif rows:
        pick = rows
        why = ("neither lens is trusted: the rows' self-check does not trust them"
               + (f"; the untouched lens: {u.get('distrust') or u.get('why')}"
                  if u else ""))
    elif untouched:
        pick, why = untouched, f"no rows; the untouched lens: {u.get('distrust', '')}"
    else:
        return None
    out = {"lo_ns": None, "hi_ns": None, **pick, "why": why,
           "trusted": rows_trusted if pick is rows else bool(u.get("trusted")),
           "p99_why": None}
    if pick["lens"] == UNTOUCHED:
        out["p99_ns"] = None
        out["p99_why"] = "not measurable here without perturbing it: percentiles need " \
                         "each write's own time, which only the rows give"
    other = untouched if pick is rows else rows
    out["disagree"] = bool(rows and untouched and disagree(
        rows, untouched, float(check.get("tolerance", 0.15))))
    out["other"] = {k: other[k] for k in ("lens", "mean_ns", "p99_ns")} if other else None
    return out


def headline_of(summary: dict[str, Any]) -> dict[str, Any] | None:
    """A summary's headline; one written before headlines reads as rows."""
    return summary.get("headline") or headline(summary)
