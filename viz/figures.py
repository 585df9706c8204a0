"""The report's figures of single runs, each with the one sentence that says
how to read it.  Every function takes Run objects (viz/runs.py) and returns
(figure, caption), or None when the runs hold nothing it could show."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.colors
import plotly.graph_objects as go
from plotly.subplots import make_subplots

import engines
from analysis.components import QUEUE_BEHIND, QUEUE_PARTS
from viz.axes import count_label, log_ticks, size_ticks
from viz.matrix import UNTRUSTED, add_note, cell_labels
from viz.runs import (COLORS, TIMELINE_POINTS, CDF_POINTS, Run, col,  # noqa: F401
                      component_means, components_of)

def rows_trusted(r: Run) -> bool:
    """Whether the run's self-check trusts its rows' microseconds (a run
    without one, or written before it, reads as trusted: nothing says
    otherwise)."""
    return bool((r.summary.get("self_check") or {}).get("trusted", True))


def run_labels(runs: list[Run], sep: str = " ") -> tuple[list[str], str]:
    """cell_labels of the runs, each whose rows its self-check does not
    trust marked (untrusted): the figures of single runs draw their rows."""
    names, note = cell_labels([r.name for r in runs], sep=sep)
    return [n + (sep + UNTRUSTED.strip() if not rows_trusted(r) else "")
            for n, r in zip(names, runs)], note


def duration_label(us: float) -> str:
    """A bar's total, short: 41 us, 1.9 ms."""
    return f"{us / 1e3:.2g} ms" if us >= 1000 else f"{us:.3g} us"


def rows_height(n: int, per: int = 26, least: int = 420) -> int:
    """A figure's height for n rows of horizontal bars."""
    return max(least, 160 + per * n)


def breakdown_figure(runs: list[Run]) -> tuple[go.Figure, dict[str, Any]]:
    """What each component takes of the mean write and of the p99 tail (the
    mean of the writes at or above p99), as shares, per scenario: runs
    whose latencies differ 100-fold stay readable side by side; the bars'
    labels and the hover give the microseconds. One row per scenario (the
    first on top), named by what differs between them, never cut."""
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.05,
                        subplot_titles=("share of the mean write",
                                        "share of the slowest 1% (their mean, not p99)"))
    data: dict[str, Any] = {}
    names, note = run_labels(runs)
    means: dict[str, list[float]] = {}
    tails: dict[str, list[float]] = {}
    comps = components_of(runs)
    for r in runs:
        for c, (m, t) in component_means(r, comps).items():
            if len(r.writes):
                data.setdefault(r.name, {})[c] = {"mean_us": m, "tail_us": t}
            means.setdefault(c, []).append(m)
            tails.setdefault(c, []).append(t)
    for part, vals, column in ((means, "mean", 1), (tails, "p99 tail", 2)):
        total = [sum(v[i] for v in part.values()) for i in range(len(runs))]
        for c, v in part.items():
            share = [100 * x / t if t else 0.0 for x, t in zip(v, total)]
            fig.add_bar(y=names, x=share, orientation="h", name=c, marker_color=COLORS[c],
                        legendgroup=c, showlegend=column == 1, customdata=v,
                        hovertemplate=f"{c}: %{{customdata:.2f}} us (%{{x:.0f}}%)"
                                      "<extra>%{y}</extra>", row=1, col=column)
        fig.add_scatter(y=names, x=[101] * len(runs), mode="text", showlegend=False,
                        text=[duration_label(t) for t in total], textposition="middle right",
                        hoverinfo="skip", cliponaxis=False, row=1, col=column)
    fig.update_layout(barmode="stack", height=rows_height(len(runs)), bargap=0.2)
    fig.update_xaxes(range=[0, 118], title_text="% of the latency")
    fig.update_yaxes(autorange="reversed", type="category")
    add_note(fig, note)
    return fig, data


# where each percentile's label sits beside its mark: below-right of p50
# and p99 (under the curve, which rises to their right), above-left of
# p99.9 (over the curve's flat top, in the head room the y axis keeps)
MARKS = ((50, "p50", "bottom right"), (99, "p99", "bottom right"),
         (99.9, "p99.9", "top left"))
# the y axis' top, in percent: room above 100 for the p99.9 label
CDF_TOP = 109


def cdf_figure(runs: list[Run]) -> go.Figure:
    """Each run's latency CDF on a log x axis whose ticks read as latencies,
    its p50, p99 and p99.9 marked in the line's colour; the marks' labels
    (once, on the first run's: the percentiles are the same heights for
    every run) stay inside the plot."""
    fig = go.Figure()
    qs = np.concatenate([np.linspace(0, 0.99, CDF_POINTS // 2),
                         1 - np.logspace(-2, -5, CDF_POINTS // 2)])
    palette = plotly.colors.qualitative.Plotly
    seen: list[float] = []
    labelled = False
    for i, r in enumerate(runs):
        if not r.dur.n:
            continue
        color = palette[i % len(palette)]
        x = np.asarray(r.dur.percentiles(list(qs * 100))) / 1e3
        fig.add_scatter(x=x, y=qs * 100, mode="lines", name=r.name, legendgroup=r.name,
                        line=dict(color=color))
        marks = np.asarray(r.dur.percentiles([q for q, _, _ in MARKS])) / 1e3
        fig.add_scatter(x=marks, y=[q for q, _, _ in MARKS], legendgroup=r.name,
                        mode="markers" if labelled else "markers+text",
                        text=[t for _, t, _ in MARKS],
                        textposition=[pos for _, _, pos in MARKS], cliponaxis=False,
                        showlegend=False, marker=dict(size=8, color=color),
                        hovertemplate=f"%{{text}} of {r.name}: %{{x:.1f}} us<extra></extra>")
        labelled = True
        seen += list(x)
    fig.update_layout(height=460, margin=dict(t=30),
                      xaxis=dict(type="log", title="latency (compensated)",
                                 **log_ticks(seen)),
                      yaxis=dict(title="percentile", range=[0, CDF_TOP],
                                 tickvals=[0, 20, 40, 60, 80, 100]))
    return fig


def throughput_figure(runs: list[Run]) -> go.Figure | None:
    """Mean and p99 latency against the workload's own throughput, one point
    per scenario: only for three or more scenarios that report one."""
    have = [r for r in runs if (r.summary.get("throughput") or {}).get("ops_per_s")
            and r.summary["writes"]["count"]]
    if len(have) < 3:
        return None
    fig = go.Figure()
    lat = [r.summary["writes"]["duration_adj"][s] / 1e3 for r in have
           for s in ("mean_ns", "p99_ns")]
    for stat, sym in (("mean_ns", "circle"), ("p99_ns", "diamond")):
        fig.add_scatter(x=[r.summary["throughput"]["ops_per_s"] for r in have],
                        y=[r.summary["writes"]["duration_adj"][stat] / 1e3 for r in have],
                        text=[r.name for r in have], mode="markers+text",
                        textposition="top center", marker_symbol=sym,
                        name=stat.replace("_ns", ""))
    ops = [r.summary["throughput"]["ops_per_s"] for r in have]
    fig.update_layout(height=420, xaxis=dict(type="log", title="ops/s (the workload's own)",
                                             **log_ticks(ops, count_label)),
                      yaxis=dict(type="log", title="write latency (compensated)",
                                 **log_ticks(lat)))
    return fig


BACKGROUND = "flush/compaction write (KiB)"


def background_note(r: Run) -> str:
    """What a panel with no crosses says instead: which threads' writes
    would have drawn them, or that the engine names none."""
    if r.background is None:
        title = engines.get(r.summary.get("engine") or engines.UNNAMED).title
        return f"no crosses: walscope names no background threads of {title}"
    return f"no flush or compaction writes ({r.background}* threads) in this run"


def timeline_figure(runs: list[Run]) -> go.Figure:
    """Writes over time coloured by dominant component (left axis, log);
    the engine's background writes, flushes and compactions, as crosses
    (right axis, KiB, log); a panel with none says so."""
    fig = make_subplots(rows=len(runs), cols=1, shared_xaxes=False,
                        subplot_titles=[r.name for r in runs],
                        specs=[[{"secondary_y": True}] for _ in runs])
    shown: set[str] = set()
    for i, r in enumerate(runs, start=1):
        w = r.writes
        if not len(w):
            continue
        if len(w) > TIMELINE_POINTS:  # keep the slowest writes, sample the rest
            slow = (r.tail.rows if r.sampled else w).nlargest(TIMELINE_POINTS // 4, "dur_ns")
            rest = w.drop(slow.index, errors="ignore").sample(
                TIMELINE_POINTS - len(slow), random_state=1)
            w = pd.concat([slow, rest])
        t0 = r.writes["start_ns"].min()
        comps = components_of([r])
        comp = np.array(comps)[np.argmax(np.stack(
            [col(w, c).to_numpy() for c in comps]), axis=0)]
        for c in comps:
            m = comp == c
            if not m.any():
                continue
            fig.add_scatter(x=(w["start_ns"][m] - t0) / 1e9, y=w["dur_ns"][m] / 1e3,
                            mode="markers", marker=dict(size=3, color=COLORS[c]),
                            name=f"dominant: {c}", legendgroup=c,
                            showlegend=c not in shown, row=i, col=1)
            shown.add(c)
        fig.update_yaxes(type="log", title_text="write latency", row=i, col=1,
                         secondary_y=False, **log_ticks(w["dur_ns"] / 1e3))
        fig.update_xaxes(title_text="seconds since the first write", row=i, col=1)
        bg = r.io
        if len(bg):
            bg = bg.sample(min(len(bg), TIMELINE_POINTS), random_state=1)
            fig.add_scatter(x=(bg["ts_ns"] - t0) / 1e9, y=bg["bytes"] / 1024,
                            mode="markers", marker=dict(size=7, symbol="x-thin",
                                                        line=dict(width=2, color="black")),
                            name=BACKGROUND, legendgroup="bg",
                            showlegend="bg" not in shown, row=i, col=1, secondary_y=True)
            shown.add("bg")
            fig.update_yaxes(type="log", title_text="flush/compaction, KiB", row=i, col=1,
                             secondary_y=True, showgrid=False,
                             **size_ticks(bg["bytes"] / 1024))
        else:
            fig.update_yaxes(visible=False, row=i, col=1, secondary_y=True)
            fig.add_annotation(text=background_note(r), row=i, col=1, showarrow=False,
                               xref="x domain", yref="y domain",
                               x=0.01, y=0.98, xanchor="left", yanchor="top",
                               bgcolor="rgba(255,255,255,0.8)")
    fig.update_layout(height=320 * len(runs) + 100)
    return fig


def cores_figure(runs: list[Run]) -> go.Figure | None:
    """Only where cores have types (a hybrid CPU, or --cpu-types)."""
    if not any(len(r.writes) and (r.writes["on_p_ns"].sum() or r.writes["on_e_ns"].sum())
               for r in runs if "on_p_ns" in r.writes):
        return None
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        "on-CPU time in writes by core type", "migrations per 1000 writes"))
    names = [r.name for r in runs]
    for label, c in (("P", "on_p_ns"), ("E", "on_e_ns"), ("uniform", "on_uniform_ns")):
        fig.add_bar(x=names, y=[r.step * float(r.writes[c].sum()) / 1e6
                                if len(r.writes) else 0
                                for r in runs], name=label, row=1, col=1)
    for label, c in (("P->E", "mig_p_to_e"), ("E->P", "mig_e_to_p"),
                     ("same type", "mig_same_type")):
        fig.add_bar(x=names, y=[1000 * float(r.writes[c].sum()) / max(len(r.writes), 1)
                                for r in runs], name=label, row=1, col=2)
    fig.update_layout(barmode="stack", height=420, yaxis_title="ms")
    return fig


# the workload's own mean of a transaction type is drawn against its bar
# only where the rows' components account for at least this share of it:
# a mean over ten times the components is a few transactions kept waiting
# outside the rows (SQLite's busy handler sleeping through another client's
# lock), and on a shared axis it flattens every bar (issue 45: 91 ms and
# 12 ms marks over bars of about 1 ms)
OWN_MEAN_SHARE = 0.1
# head room above the tallest bar or mark drawn
TOP = 1.1
# the engines whose rows a workload's transaction log labels by type
LABELLED = " or ".join(e.title for e in engines.ENGINES if e.txlog_labels)


def types_figure(runs: list[Run]) -> go.Figure | None:
    """SQLite: mean compensated components per transaction type, with the
    workload's own mean latency for the same transactions beside them. The
    axis is set by the bars and by the marks that can be read against them:
    a mark of a run whose rows the self-check does not trust, or one its
    bar's components are under OWN_MEAN_SHARE of, is left out and listed
    above the plot; runs not trusted are labelled so."""
    typed = [r for r in runs if "txn_type" in r.writes]
    # runs whose rows are not trusted are not drawn where any run's are: one
    # lock wait of a second in an untrusted run set the axis and flattened
    # every trusted bar (study 004's two-client cells)
    hidden = [r.name for r in typed if not rows_trusted(r)] \
        if any(rows_trusted(r) for r in typed) else []
    rows = [(r, t, d) for r in typed if r.name not in hidden
            for t, d in r.writes[r.writes["txn_type"] != ""].groupby("txn_type")]
    if not rows:
        return None
    shown = list({r.name: r for r, _, _ in rows}.values())
    labels, note = run_labels(shown, sep="<br>")
    label_of = dict(zip((r.name for r in shown), labels))
    x = [[label_of[r.name] for r, _, _ in rows], [str(t) for _, t, _ in rows]]
    fig = go.Figure()
    comps = components_of([r for r, _, _ in rows])
    totals = [0.0] * len(rows)
    for c in comps:
        ys = [float(col(d, c).mean()) / 1e3 for _, _, d in rows]
        totals = [t + y for t, y in zip(totals, ys)]
        fig.add_bar(x=x, y=ys, name=c, marker_color=COLORS[c], legendgroup=c)
    own = [float(d["app_latency_ns"].mean()) / 1e3 for _, _, d in rows]
    keep = [rows_trusted(r) and o == o and o * OWN_MEAN_SHARE <= tot
            for (r, _, _), o, tot in zip(rows, own, totals)]
    fig.add_scatter(x=[[a for a, k in zip(x[0], keep) if k], [b for b, k in zip(x[1], keep) if k]],
                    y=[o for o, k in zip(own, keep) if k],
                    mode="markers", marker=dict(symbol="line-ew-open", size=30,
                                                color="black", line=dict(width=3)),
                    name="workload's own mean latency")
    left = [f"{t} of {r.name} {duration_label(o)}"
            for (r, t, _), o, k in zip(rows, own, keep) if not k and o == o]
    said = []
    if hidden:
        said.append("not drawn, their traced rows not trusted: " + ", ".join(hidden))
    if left:
        said.append("the workload's own mean not drawn where the components are under "
                    f"{OWN_MEAN_SHARE:.0%} of it or the rows untrusted: " + "; ".join(left))
    if said:
        fig.add_annotation(
            text="<br>".join(said), showarrow=False, xref="paper", yref="paper", x=0,
            y=1.0, yshift=6, xanchor="left", yanchor="bottom", align="left",
            font=dict(size=10))
        fig.update_layout(margin=dict(t=70 + 14 * len(said)))
    top = max([*totals, *(o for o, k in zip(own, keep) if k), 0.0])
    # every component and the marker in the legend: no gap between the
    # one-bar legend groups, and height for a dozen entries beside the plot
    fig.update_layout(barmode="stack", height=560, yaxis_title="us",
                      legend=dict(tracegroupgap=0))
    if top > 0:
        fig.update_yaxes(range=[0, TOP * top])
    add_note(fig, note)
    return fig


# what a follower waited behind: the leader's WAL sync, its WAL write, other
QUEUE_COLORS = {part: COLORS[comp] for part, comp in QUEUE_BEHIND.items()}


def groups_figure(runs: list[Run]) -> go.Figure | None:
    """Leaders' and followers' mean latency side by side per scenario (two
    bars, never stacked: their sum means nothing), and what the followers
    waited behind while queued, stacked (those parts do add up)."""
    # an engine whose rows queue behind another's WAL I/O, in a run whose
    # group roles are known (not --mode writes without a WAL)
    runs = [r for r in runs
            if engines.get(r.summary.get("engine") or engines.UNNAMED).queue
            and all(f"{p}_ns" in r.writes for p in QUEUE_PARTS)
            and r.summary.get("groups", {}).get("leaders") is not None]
    if not runs or not any(r.summary["groups"].get("followers") for r in runs):
        return None   # no group had a follower: nothing to compare
    # the same rows on two y axes: one shared axis would give the queue's
    # bars a third slot beside the leader's and the follower's
    # the panels' names as their x axes' titles: two subplot titles side by
    # side overprint each other at 1000 px
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.05)
    fig.update_xaxes(title_text="mean latency, us: leaders and followers", row=1, col=1,
                     title_font_size=13)
    fig.update_xaxes(title_text="followers' queue, us per follower write: behind what",
                     row=1, col=2, title_font_size=13)
    names, note = run_labels(runs)

    def mean_us(r: Run, lead: bool) -> float | None:
        if not len(r.writes):
            return None
        w = r.writes[r.writes["leader"] == lead]
        return float(col(w, "dur").mean()) / 1e3 if len(w) else None

    for lead, label, color in ((True, "leader", "#1f3b73"), (False, "follower", "#7fb3e0")):
        fig.add_bar(y=names, x=[mean_us(r, lead) for r in runs], orientation="h",
                    name=label, marker_color=color, offsetgroup=label,
                    hovertemplate=f"{label}s: %{{x:.1f}} us<extra>%{{y}}</extra>",
                    row=1, col=1)
    base = [0.0] * len(runs)
    for part in QUEUE_PARTS:   # stacked by hand: the left pair stays grouped
        # the mean follower write's queue, by what it waited behind: the
        # parts add up to the follower's mean queue, on the left's scale
        vals = []
        for r in runs:
            f = r.writes[~r.writes["leader"]] if len(r.writes) else r.writes
            vals.append(float(f[f"{part}_ns"].mean()) / 1e3 if len(f) else 0.0)
        fig.add_bar(y=names, x=vals, base=base, orientation="h", name=part,
                    marker_color=QUEUE_COLORS[part], offsetgroup="queue parts",
                    hovertemplate=f"{part}: %{{x:.1f}} us a follower write"
                                  "<extra>%{y}</extra>",
                    row=1, col=2)
        base = [b + v for b, v in zip(base, vals)]
    fig.update_layout(barmode="group", height=rows_height(len(runs)), bargap=0.25)
    fig.update_yaxes(autorange="reversed", type="category", categoryorder="array",
                     categoryarray=names)
    fig.update_yaxes(showticklabels=False, row=1, col=2)
    add_note(fig, note)
    return fig


def threads_figure(runs: list[Run]) -> go.Figure | None:
    """Each run's threads, per role: on-CPU, runnable and blocked seconds
    from the kernel's accounting (summary.json thread_time)."""
    rows = [(r.name, role, v) for r in runs
            for role, v in r.summary.get("thread_time", {}).get("roles", {}).items()]
    if not rows:
        return None
    x = [[n for n, _, _ in rows], [role for _, role, _ in rows]]
    fig = go.Figure()
    for key, label in (("oncpu_ns", "on-CPU"), ("runq_ns", "runnable"),
                       ("blocked_ns", "blocked")):
        fig.add_bar(x=x, y=[v[key] / 1e9 for _, _, v in rows], name=label)
    fig.update_layout(barmode="stack", height=420, yaxis_title="s (summed over threads)")
    return fig


BREAKDOWN = "Where the latency goes: mean and p99 tail"
# (title, how to read it, builder): the report's single-run figures in order
FIGURES = (
    (BREAKDOWN,
     "Each row is one scenario, split into the shares its components take of the mean "
     "write (left) and of the slowest 1% (right); the label at its end is the total: "
     "on the right, the mean of the writes at or above p99, which is above the p99 "
     "itself (the headline's p99 is the percentile). "
     "A component that grows from left to right is what makes the tail.",
     lambda runs: breakdown_figure(runs)[0]),
    ("Latency distribution",
     "The share of writes (y) finishing within a latency (x, log scale); the marks are "
     "p50, p99 and p99.9. A curve further right is slower; a long flat top is a tail.",
     lambda runs: cdf_figure(runs)),
    ("Throughput against latency",
     "Each scenario at its own reported throughput (x) and its mean (circle) and p99 "
     "(diamond) write latency (y), both on log scales.",
     throughput_figure),
    ("Timeline: writes and background flush/compaction I/O",
     "Each dot is a write at its start time (x) and latency (y, log), coloured by the "
     "component that took most of it; crosses are the engine's flush and compaction "
     "writes (right axis, KiB), where the run had any: a panel without says so. Slow "
     "writes that line up with crosses wait on that I/O.",
     lambda runs: timeline_figure(runs)),
    ("P/E core residency and migrations",
     "Left: on-CPU time inside writes by the type of core it ran on; right: migrations "
     "per 1000 writes, by direction.",
     cores_figure),
    ("Group commit: leaders and followers",
     "Left: mean latency of the writes that led a group and of those that followed, "
     "side by side (two means: their sum is nothing); "
     "right: what the mean follower write waited behind while queued, in us (the "
     "leader's WAL sync, its WAL write, or other work). A run marked (untrusted) failed "
     "its self-check: its microseconds are not the workload's.",
     groups_figure),
    (f"{LABELLED} transactions by type",
     "Mean latency of each transaction type, split by component; the black bar is the "
     "workload's own timing of the same transactions, left out (and listed above the "
     "plot) where the components are under a tenth of it or the run's rows are untrusted, "
     "so that it does not set the axis.",
     types_figure),
    ("Threads: on-CPU, runnable, blocked",
     "Seconds each role's threads spent on a CPU, waiting for one, and blocked, from "
     "the kernel's own accounting.",
     threads_figure),
)
