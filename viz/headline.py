"""The report's opening lines: per scenario, the workload and mode, its
throughput, mean and p99 latency, the component that dominates the mean
and the p99 tail, the probe overhead taken out, and events lost."""
from __future__ import annotations

import html
import shlex

from analysis.answer import headline_of
from analysis.losses import losses
from analysis.table import overhead_removed_ns, windows_said
from viz.runs import Run, component_means


def dominant(r: Run) -> tuple[str, str]:
    """(component with the largest mean, with the largest p99-tail mean)."""
    both = component_means(r)
    if not both or not len(r.writes):
        return "-", "-"
    mean = {c: m for c, (m, _) in both.items()}
    tail = {c: t for c, (_, t) in both.items()}
    tot_m, tot_t = sum(mean.values()) or 1, sum(tail.values()) or 1
    m, t = max(mean, key=mean.__getitem__), max(tail, key=tail.__getitem__)
    return f"{m} ({100 * mean[m] / tot_m:.0f}%)", f"{t} ({100 * tail[t] / tot_t:.0f}%)"


def us(ns: float | None) -> str:
    if ns is None:
        return "-"
    return f"{ns / 1e3:.1f} us" if ns < 1e7 else f"{ns / 1e6:.1f} ms"


def answered(h: dict) -> str:
    """Which lens the headline took, and whether it is trusted."""
    if not h:
        return "-"
    lens = "the rows" if h["lens"] == "rows" else "untouched lens"
    return lens + ("" if h.get("trusted") else " (NOT trusted)")


def row(r: Run) -> dict[str, str]:
    s = r.summary
    cmd = s.get("command") or []
    tp = s.get("throughput") or {}
    n = s["writes"]["count"]
    removed = overhead_removed_ns(s)
    win = s.get("windows") or {}
    budget = s.get("budget") or {}
    check = s.get("self_check") or {}
    mode = s.get("mode", "")
    if budget.get("every_write"):
        mode += " (every write)"
    elif win:
        mode += f" ({windows_said(win)}, {100 * (win.get('duty') or 0):.1f}% of the run"
        mode += f"; {100 * budget['share']:.1f}% of writes)" if budget.get("share") else ")"
    m, t = dominant(r)
    h = headline_of(s) or {}
    if h.get("lens") == "untouched" and h.get("components"):
        comps = h["components"]
        top = max(comps, key=comps.__getitem__)
        m = f"{top} ({100 * comps[top] / (sum(comps.values()) or 1):.0f}%)"
        t = f"{t} in the rows" if t != "-" else t
    return {"scenario": r.name,
            "workload": shlex.join(cmd[:4]) + (" ..." if len(cmd) > 4 else ""),
            "mode": mode,
            "throughput": f"{tp['ops_per_s']:,.0f} ops/s" if tp.get("ops_per_s") else "-",
            "writes traced": f"{n:,}",
            # the headline (analysis/answer.py), as the terminal's answer
            "answer from": answered(h),
            "mean": us(h["mean_ns"]) if h else "-",
            "p99": (us(h["p99_ns"]) if h.get("p99_ns") is not None else
                    "not measurable here") if h else "-",
            "dominant at the mean": m, "dominant at p99": t,
            "probe overhead removed": us(removed) + " a write" if n and removed else "-",
            "events lost": losses(s) + (" PARTIAL RUN" if r.partial else ""),
            "self-check": "-" if not check else
            f"risk {check['risk']:.3f}" + (": latencies read high" if check.get("high")
                                           else f"; compensation +-{check['uncertainty'] * 100:.0f}%"
                                           if check.get("trusted") is False else "")}


def headline(runs: list[Run]) -> str:
    """An HTML table, a row per scenario."""
    rows = [row(r) for r in runs]
    if not rows:
        return ""
    keys = list(rows[0])
    head = "".join(f"<th>{html.escape(k)}</th>" for k in keys)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in x.values())
                   + "</tr>" for x in rows)
    return f'<table class="headline"><tr>{head}</tr>{body}</table>'
