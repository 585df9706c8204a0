#!/usr/bin/env python3
"""Build report.html from any number of walscope run folders (or folders of them).

    viz/report.py RUN_OR_MATRIX_DIR... [-o report.html]
    viz/report.py --dataset DATASET [-o fleet.html]      (viz/fleet.py)

Reads Parquet and summary.json only, so run folders copied from other hosts
work.  The page is self-contained (plotly.js is embedded) and works offline.
Timelines are downsampled; percentiles and sums never are.
"""
from __future__ import annotations

import argparse
import html
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis import components  # noqa: E402
from analysis.aggregate import Dist  # noqa: E402
from analysis.columns import ParquetColumns  # noqa: E402
from analysis.components import QUEUE_PARTS  # noqa: E402

COMPONENTS = list(components.DISPLAY_ORDER)
COLORS = components.COLORS
TIMELINE_POINTS = 4000      # per scenario
CDF_POINTS = 400


class ReportError(RuntimeError):
    pass


class Run:
    def __init__(self, path: Path, name: str):
        self.path = path
        self.name = name
        self.summary: dict[str, Any] = json.loads((path / "summary.json").read_text())
        self.writes, self.dur, self.tail, self.step = read_writes(path / "writes.parquet")
        io = path / "io.parquet"
        self.io = pd.DataFrame()
        if io.exists():  # the timeline shows at most TIMELINE_POINTS of them
            parts = [b[b["thread"].str.startswith("rocksdb:") & (b["bytes"] > 0)]
                     for b in ParquetColumns(io).batches(["ts_ns", "thread", "bytes"])]
            self.io = pd.concat(parts) if parts else self.io

    @property
    def sampled(self) -> bool:
        """Only every step-th write is loaded (a long run): sums are scaled,
        means of whole-run components come from summary.json, the CDF and
        the p99 tail from every write."""
        return self.step > 1

    @property
    def partial(self) -> bool:
        return bool(self.summary.get("partial_run"))


# writes.parquet columns the report reads (with every *_adj_ns): a long
# run's table is never loaded whole
WRITE_COLUMNS = ("start_ns", "dur_ns", "dur_adj_ns", "leader", "engine", "explicit",
                 "txn_type", "app_latency_ns", "on_p_ns", "on_e_ns", "on_uniform_ns",
                 "mig_p_to_e", "mig_e_to_p", "mig_same_type", "queue_ns") + tuple(
                     f"{p}_ns" for p in QUEUE_PARTS)


REPORT_ROWS = 500_000      # above this, writes are sampled (never the CDF or tail)


class Tail:
    """The writes at or above p99, in bounded memory: exact column means
    over all of them, and only the SLOWEST slowest rows themselves."""
    SLOWEST = TIMELINE_POINTS // 4

    def __init__(self) -> None:
        self.n = 0
        self.sums: pd.Series | None = None
        self.rows = pd.DataFrame()

    def add(self, t: pd.DataFrame) -> None:
        if not len(t):
            return
        num = t.select_dtypes("number")
        self.sums = num.sum() if self.sums is None else self.sums.add(num.sum(), fill_value=0)
        self.n += len(t)
        self.rows = pd.concat([self.rows, t]).nlargest(self.SLOWEST, "dur_ns") \
            if len(self.rows) else t.nlargest(self.SLOWEST, "dur_ns")

    def mean(self, c: str) -> float:
        """A component's compensated mean over the tail (0 if it lacks it)."""
        if not self.n or self.sums is None:
            return 0.0
        for name in (f"{c}_adj_ns", f"{c}_ns", c):
            if name in self.sums:
                return float(self.sums[name]) / self.n
        return 0.0


def read_writes(path: Path) -> tuple[pd.DataFrame, Any, Tail, int]:
    """(writes or every step-th write, every write's latency as a
    analysis.aggregate.Dist in ns, the writes at or above p99, step):
    bounded memory whatever the run's length."""
    cols = ParquetColumns(path)
    want = [c for c in cols.columns if c in WRITE_COLUMNS or c.endswith("_adj_ns")]
    dcol = "dur_adj_ns" if "dur_adj_ns" in cols else "dur_ns"
    dur = Dist()
    for b in cols.batches([dcol]):
        dur.add(b[dcol].to_numpy())
    step = max(1, -(-dur.n // REPORT_ROWS))
    tail = Tail()
    if step == 1:
        w = cols.frame(want)
        if len(w):
            tail.add(w[w[dcol] >= np.percentile(w[dcol], 99)])
        return w, dur, tail, 1
    p99 = dur.percentiles([99])[0]
    sample, seen = [], 0
    for b in cols.batches(want):
        idx = np.arange(seen, seen + len(b))
        sample.append(b[idx % step == 0])
        tail.add(b[b[dcol] >= p99])
        seen += len(b)
    return pd.concat(sample), dur, tail, step


def find_runs(paths: list[Path]) -> list[Run]:
    found: list[tuple[Path, str]] = []
    for p in paths:
        if not p.exists():
            raise ReportError(f"{p}: no such folder")
        if not (p / "summary.json").exists() and (p / "writes.bin").exists():
            raise ReportError(f"{p}: not analysed yet (its tracer died?): run "
                              f"`python -m analysis {p}` first")
        if (p / "summary.json").exists():
            found.append((p, p.name))
            continue
        subs = sorted(s.parent for s in p.rglob("summary.json")
                      if (s.parent / "writes.parquet").exists())
        if not subs:
            raise ReportError(f"{p}: no walscope run folders inside")
        found += [(s, str(s.relative_to(p))) for s in subs]
    counts: dict[str, int] = {}
    for _, name in found:
        counts[name] = counts.get(name, 0) + 1
    found = [(p, f"{p.parent.name}/{n}" if counts[n] > 1 else n) for p, n in found]
    runs = []
    for path, name in found:
        try:
            runs.append(Run(path, name))
        except (OSError, ValueError) as e:
            raise ReportError(f"{path}: unreadable run folder ({e})") from None
    return runs


def col(w: pd.DataFrame, c: str) -> pd.Series:
    """A component's compensated ns; zeros if the run's engine lacks it."""
    if f"{c}_adj_ns" in w:
        return w[f"{c}_adj_ns"]
    if f"{c}_ns" in w:
        return w[f"{c}_ns"]
    return pd.Series(0, index=w.index, dtype="int64")


def components_of(runs: list[Run]) -> list[str]:
    """The components any of the runs has, in COMPONENTS order."""
    have = {c for r in runs for c in COMPONENTS
            if f"{c}_adj_ns" in r.writes or f"{c}_ns" in r.writes}
    return [c for c in COMPONENTS if c in have]


def breakdown_figure(runs: list[Run]) -> tuple[go.Figure, dict[str, Any]]:
    """Mean and p99-tail composition by component (us), per scenario."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        "mean write latency by component", "p99 tail: mean of writes >= p99"))
    data: dict[str, Any] = {}
    names = [r.name for r in runs]
    for c in components_of(runs):
        means, tails = [], []
        for r in runs:
            w = r.writes
            if not len(w):
                means.append(0.0)
                tails.append(0.0)
                continue
            if r.sampled:   # every write's mean, as the summary has it
                means.append(r.summary["components"].get(c, {}).get("mean_ns", 0) / 1e3)
            else:
                means.append(float(col(w, c).mean()) / 1e3)
            tails.append(r.tail.mean(c) / 1e3)
            data.setdefault(r.name, {})[c] = {"mean_us": means[-1], "tail_us": tails[-1]}
        fig.add_bar(x=names, y=means, name=c, marker_color=COLORS[c],
                    legendgroup=c, row=1, col=1)
        fig.add_bar(x=names, y=tails, name=c, marker_color=COLORS[c],
                    legendgroup=c, showlegend=False, row=1, col=2)
    fig.update_layout(barmode="stack", height=480, yaxis_title="us",
                      yaxis2_title="us")
    return fig, data


def cdf_figure(runs: list[Run]) -> go.Figure:
    fig = go.Figure()
    qs = np.concatenate([np.linspace(0, 0.99, CDF_POINTS // 2),
                         1 - np.logspace(-2, -5, CDF_POINTS // 2)])
    for r in runs:
        if not r.dur.n:
            continue
        x = np.asarray(r.dur.percentiles(list(qs * 100))) / 1e3
        fig.add_scatter(x=x, y=qs * 100, mode="lines", name=r.name)
        marks = np.asarray(r.dur.percentiles([50, 99, 99.9])) / 1e3
        fig.add_scatter(x=marks, y=[50, 99, 99.9], mode="markers+text",
                        text=["p50", "p99", "p99.9"], textposition="top left",
                        showlegend=False, marker=dict(size=8))
    fig.update_layout(title="write latency CDF (compensated)", height=420,
                      xaxis=dict(type="log", title="latency (us)"),
                      yaxis=dict(title="percentile"))
    return fig


def throughput_figure(runs: list[Run]) -> go.Figure:
    fig = go.Figure()
    for stat, sym in (("mean_ns", "circle"), ("p99_ns", "diamond")):
        xs, ys, names = [], [], []
        for r in runs:
            s = r.summary
            el = s.get("elapsed_s") or 0
            if not el or not s["writes"]["count"]:
                continue
            xs.append(s["writes"]["count"] / el)
            ys.append(s["writes"]["duration_adj"][stat] / 1e3)
            names.append(r.name)
        fig.add_scatter(x=xs, y=ys, text=names, mode="markers+text",
                        textposition="top center", marker_symbol=sym,
                        name=stat.replace("_ns", ""))
    fig.update_layout(title="throughput vs latency (traced runs)", height=420,
                      xaxis_title="writes/s (traced)", yaxis=dict(type="log", title="us"))
    return fig


def timeline_figure(runs: list[Run]) -> go.Figure:
    """Writes over time coloured by dominant component; rocksdb:* I/O beside."""
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
        io = r.io
        if len(io):
            bg = io[io["thread"].str.startswith("rocksdb:") & (io["bytes"] > 0)]
            if len(bg):
                bg = bg.sample(min(len(bg), TIMELINE_POINTS), random_state=1)
                fig.add_scatter(x=(bg["ts_ns"] - t0) / 1e9, y=bg["bytes"] / 1024,
                                mode="markers", marker=dict(size=4, symbol="x",
                                                            color="black", opacity=0.4),
                                name="flush/compaction write (KiB)",
                                legendgroup="bg", showlegend="bg" not in shown,
                                row=i, col=1, secondary_y=True)
                shown.add("bg")
        fig.update_yaxes(type="log", title_text="write us", row=i, col=1)
    fig.update_layout(title="timeline: writes (dots) and background SST I/O (x)",
                      height=300 * len(runs) + 100)
    return fig


def cores_figure(runs: list[Run]) -> go.Figure:
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


def types_figure(runs: list[Run]) -> go.Figure | None:
    """SQLite: mean compensated components per transaction type, with the
    workload's own mean latency for the same transactions beside them."""
    rows = [(r, t, d) for r in runs if "txn_type" in r.writes
            for t, d in r.writes[r.writes["txn_type"] != ""].groupby("txn_type")]
    if not rows:
        return None
    x = [[r.name for r, _, _ in rows], [str(t) for _, t, _ in rows]]
    fig = go.Figure()
    for c in components_of([r for r, _, _ in rows]):
        fig.add_bar(x=x, y=[float(col(d, c).mean()) / 1e3 for _, _, d in rows],
                    name=c, marker_color=COLORS[c], legendgroup=c)
    fig.add_scatter(x=x, y=[float(d["app_latency_ns"].mean()) / 1e3 for _, _, d in rows],
                    mode="markers", marker=dict(symbol="line-ew-open", size=30,
                                                color="black", line=dict(width=3)),
                    name="workload's own mean latency")
    fig.update_layout(barmode="stack", height=480, yaxis_title="us",
                      title="mean transaction latency by component and type")
    return fig


def groups_figure(runs: list[Run]) -> go.Figure | None:
    # a run whose group roles are unknown (--mode writes without a WAL)
    runs = [r for r in runs if "queue_ns" in r.writes
            and r.summary.get("groups", {}).get("leaders") is not None]
    if not runs:
        return None
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        "mean latency: leaders vs followers", "followers' queue: what the leader did"))
    names = [r.name for r in runs]
    for lead, label in ((True, "leader"), (False, "follower")):
        fig.add_bar(x=names, y=[float(r.writes.loc[r.writes["leader"] == lead, "dur_adj_ns"]
                                      .mean() or 0) / 1e3 if len(r.writes) else 0
                                for r in runs], name=label, row=1, col=1)
    for part in QUEUE_PARTS:
        vals = []
        for r in runs:
            f = r.writes[~r.writes["leader"]] if len(r.writes) else r.writes
            vals.append(r.step * float(f[f"{part}_ns"].sum()) / 1e6 if len(f) else 0)
        fig.add_bar(x=names, y=vals, name=part, row=1, col=2)
    fig.update_layout(height=420, yaxis_title="us", yaxis2_title="ms total",
                      barmode="group")
    fig.update_layout(barmode="stack")
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
    fig.update_layout(barmode="stack", height=420, yaxis_title="s (summed over threads)",
                      title="threads' time, from the kernel's accounting")
    return fig


def overhead_table(runs: list[Run]) -> str:
    rows = []
    for r in runs:
        s = r.summary
        lost = {k: v for k, v in s.get("lost_events", {}).items() if v}
        lost.update({k: v for k, v in s.get("tracking_gaps", {}).items() if v})
        cal = s.get("calibration", {})
        rows.append(
            f"<tr><td>{html.escape(r.name)}</td><td>{s.get('mode', '')}</td>"
            f"<td>{s['writes']['count']}</td>"
            f"<td>{s['probe_hits']['per_write']:.1f}</td>"
            f"<td>{cal.get('pair_in_ns', 0) / 1e3:.1f} / {cal.get('one_ns', 0) / 1e3:.1f}</td>"
            f"<td>{s.get('estimated_overhead_ns', 0) / 1e6:.1f}</td>"
            f"<td>{html.escape(', '.join(s.get('unreliable_components', [])) or '-')}</td>"
            f"<td>{html.escape(json.dumps(lost) if lost else '0')}</td>"
            f"<td>{'PARTIAL' if r.partial else 'complete'}</td></tr>")
    return ("<table><tr><th>scenario</th><th>mode</th><th>writes</th>"
            "<th>probe hits/write</th><th>cost/pair, /probe (us)</th>"
            "<th>est. overhead (ms)</th><th>unreliable components</th>"
            "<th>lost events</th><th>run</th></tr>" + "".join(rows) + "</table>")


def flame_links(runs: list[Run], out_dir: Path) -> str:
    items = []
    for r in runs:
        svgs = sorted(r.path.glob("flame-*.svg"))
        links = " ".join(
            f'<a href="{html.escape(os.path.relpath(s, out_dir))}">{s.stem[6:]}</a>'
            for s in svgs) or "(none: run viz/flamegraph.py)"
        items.append(f"<li>{html.escape(r.name)}: {links}</li>")
    return "<ul>" + "".join(items) + "</ul>"


def build(runs: list[Run], out: Path) -> dict[str, Any]:
    out.parent.mkdir(parents=True, exist_ok=True)
    bd, data = breakdown_figure(runs)
    figs = [("Latency breakdown (avg vs p99)", bd),
            ("Latency distribution", cdf_figure(runs)),
            ("Throughput vs latency", throughput_figure(runs)),
            ("Timeline: WAL vs SST contention", timeline_figure(runs)),
            ("P/E core residency and migrations", cores_figure(runs)),
            ("Group commit", groups_figure(runs)),
            ("SQLite transactions by type", types_figure(runs)),
            ("Threads: on-CPU, runnable, blocked", threads_figure(runs))]
    figs = [(t, f) for t, f in figs if f is not None]
    parts = [f"<h2>{html.escape(t)}</h2>" + f.to_html(full_html=False,
                                                      include_plotlyjs=False,
                                                      div_id=f"fig{i}")
             for i, (t, f) in enumerate(figs)]
    partial = [r.name for r in runs if r.partial]
    sampled = [f"{r.name} (1 in {r.step})" for r in runs if r.sampled]
    if sampled:
        banner_s = ("<p>Long runs: timeline, core and group figures use a sample of "
                    f"their writes: {html.escape(', '.join(sampled))}; means, the CDF "
                    "and the p99 tail use every write.</p>")
    else:
        banner_s = ""
    banner = (f"<p class=warn>PARTIAL runs (tracer or workload died): "
              f"{html.escape(', '.join(partial))}</p>" if partial else "")
    payload = {"scenarios": data,
               "summaries": {r.name: {c: r.summary["components"][c]["mean_ns"]
                                      for c in COMPONENTS if c in r.summary["components"]}
                             for r in runs},
               "thread_time": {r.name: r.summary.get("thread_time", {}).get("roles", {})
                               for r in runs}}
    page = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>walscope report</title>
<style>body{{font-family:sans-serif;margin:2em}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:3px 8px}} .warn{{color:#b00;font-weight:bold}}</style>
<script type="text/javascript">{get_plotlyjs()}</script></head><body>
<h1>walscope: where each write's latency goes</h1>{banner}{banner_s}
<p>{len(runs)} scenario(s). Components are compensated for probe overhead;
see the overhead table before trusting small components.</p>
{''.join(parts)}
<h2>Tracing overhead and compensation</h2>{overhead_table(runs)}
<h2>Flame graphs</h2>{flame_links(runs, out.parent)}
<script id="walscope-data" type="application/json">{json.dumps(payload)}</script>
</body></html>"""
    tmp = out.with_suffix(".tmp")
    tmp.write_text(page)
    tmp.replace(out)
    return payload


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*", type=Path, help="run or matrix folders")
    ap.add_argument("--dataset", type=Path, help="compare the hosts and runs of a "
                    "dataset (walscope export) instead")
    ap.add_argument("-o", "--output", type=Path,
                    help="HTML file (default: report.html in the only folder given, "
                         "else ./report.html; fleet.html for --dataset)")
    a = ap.parse_args(argv)
    if a.dataset is not None:
        return fleet_report(a.dataset, a.output or Path("fleet.html"))
    if not a.runs:
        ap.error("give run folders, or --dataset DATASET")
    out = a.output or (a.runs[0] / "report.html" if len(a.runs) == 1 else Path("report.html"))
    from analysis.heap import keep_heap_small
    keep_heap_small()
    try:
        runs = find_runs(a.runs)
        build(runs, out)
    except ReportError as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 1
    print(out)
    return 0


def fleet_report(dataset: Path, out: Path) -> int:
    from analysis.dataset import DatasetError
    from analysis.query import QueryError
    from viz import fleet
    try:
        fleet.build(dataset, out)
    except (DatasetError, QueryError) as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
