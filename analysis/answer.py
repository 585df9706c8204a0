"""summary.json's headline: the one answer a run gives, from the lens that
can be trusted, with why.

Two lenses measure a run's writes:
- rows: every recorded write, its probes' cost compensated
  (analysis/compensation.py); its self-check (analysis/selfcheck.py) says
  whether the probes left it trustworthy;
- untouched: the writers' time between windows over the writes made there
  (analysis/untouched.py), nothing attached to their path.

The rule (docs/attribution.md, "The headline"): the mean and its
components from the untouched lens where it is trusted (its untouched
share and interval): it read within 15% of the untraced mean on every
db_bench cell of bench/truth.py, where, in the first batch, the rows read
0.69x unsynced on one thread and 1.23x synced on four though their
self-check trusted them;
else from the rows where their self-check trusts them; else from the rows,
marked untrusted, with both reasons.  Where the windows saw two or more
phases (writers appearing that no window had seen: a set-up, then the
run), "the rows" are those of the phase with the most writes, with their
own self-check (analysis/phases.py): a mean over every row mixes the
phases as the windows happened to sample them.  The p99 only from rows the
self-check trusts (a percentile needs each write's own time), else null
with why.  Where both lenses have a mean and they disagree beyond both
intervals (the rows': their self-check's tolerance), the headline says so;
it always keeps the other lens's mean beside its own.

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
    mean = float(d.get("mean_ns", 0.0))
    return {"lens": ROWS, "mean_ns": mean, "in_write_mean_ns": mean,
            "p99_ns": float(d["p99_ns"]) if d.get("p99_ns") is not None else None,
            "components": comps, "count": int(w["count"]),
            "span": "each recorded write from its start to its end, probes' cost removed"}


def phase_rows_lens(summary: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The rows of the phase with the most writes (analysis/phases.py), and
    their self-check, where the windows saw two or more phases."""
    p = summary.get("main_phase")
    if not p or not (p.get("writes") or {}).get("count"):
        return None
    lens = rows_lens(p)
    total = (summary.get("writes") or {}).get("count", 0)
    lens["phase"] = {"opened_s": p["opened_s"], "rows": p["rows"], "of_rows": total,
                     "phases": len(summary.get("phases") or ()),
                     "writes_estimated": p["writes_estimated"]}
    lens["span"] += (f"; the rows of the phase with the most writes (opened at "
                     f"{p['opened_s']:.1f}s: {p['rows']} of {total} rows)")
    return lens, p.get("self_check") or {}


def untouched_lens(summary: dict[str, Any]) -> dict[str, Any] | None:
    u = summary.get("untouched") or {}
    if not u.get("available"):
        return None
    return {"lens": UNTOUCHED, "mean_ns": float(u["mean_ns"]), "p99_ns": None,
            "in_write_mean_ns": u.get("in_write_mean_ns"),
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
    check = summary.get("self_check") or {}
    phased = phase_rows_lens(summary)
    if phased:   # a set-up's rows are not the run's: the main phase's answer
        rows, check = phased
    untouched = untouched_lens(summary)
    u = summary.get("untouched") or {}
    rows_trusted = bool(rows and check.get("trusted"))
    if untouched and u.get("trusted"):
        pick = untouched
        why = (f"the untouched lens ({u.get('untouched_share', 0) * 100:.0f}% of the "
               "writers' time, no probe attached) is within its interval"
               + ("" if rows_trusted else "; the rows' self-check does not trust them"))
    elif rows_trusted:
        pick, why = rows, "the rows' self-check trusts them" + (
            f"; the untouched lens: {u.get('distrust') or u.get('why')}" if u else "")
    elif rows:
        pick = rows
        why = ("neither lens is trusted: the rows' self-check does not trust them"
               + (f"; the untouched lens: {u.get('distrust') or u.get('why')}"
                  if u else ""))
    elif untouched:
        pick, why = untouched, f"no rows; the untouched lens: {u.get('distrust', '')}"
    else:
        return None
    if phased and pick is rows:
        ph = rows["phase"]
        why += (f"; the rows are the phase's with the most writes (opened at "
                f"{ph['opened_s']:.1f}s, {ph['rows']} of {ph['of_rows']} rows, "
                f"{ph['phases']} phases)")
    out = {"lo_ns": None, "hi_ns": None, **pick, "why": why,
           "trusted": bool(u.get("trusted")) if pick is untouched else rows_trusted,
           "p99_why": None}
    if rows_trusted and rows:   # a percentile only from rows the self-check trusts
        out["p99_ns"] = rows["p99_ns"]
        if pick is untouched:
            out["p99_why"] = "the rows' p99 (their self-check trusts them)"
    else:
        out["p99_ns"] = None
        out["p99_why"] = ("not measurable here without perturbing it: a percentile "
                          "needs each write's own time, and the rows' self-check does "
                          "not trust them")
    other = untouched if pick is rows else rows
    out["disagree"] = bool(rows and untouched and disagree(
        rows, untouched, float(check.get("tolerance", 0.15))))
    out["other"] = {k: other[k] for k in ("lens", "mean_ns", "p99_ns")} if other else None
    return out


def headline_of(summary: dict[str, Any]) -> dict[str, Any] | None:
    """A summary's headline; one written before headlines reads as rows."""
    return summary.get("headline") or headline(summary)
