"""A matrix's comparisons across cells, from matrix.parquet (one row per
run and benchmark, untraced baselines and the traced run, as
runners/experiments/run_matrix.py writes it): the workload's own throughput and
latency per cell against its untraced repeats, with the traced/untraced
ratio."""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from analysis.selfcheck import TOLERANCE
from viz.axes import count_label, log_ticks

CAPTION = ("Each cell (a row, named by the axis values that differ between cells) with "
           "its throughput (left; log scale when cells differ 30-fold; New-Order "
           "transactions per minute for a TPC-C-like matrix, not TPC-C's tpmC) and latency "
           "(right, log scale) as the workload reported them: bars are the median of the "
           "untraced repeats, whiskers their range, and the label beside a bar the traced "
           "run's throughput over that median. Compare cells on the bars; the labels show "
           "what tracing cost. A cell marked (untrusted) has a traced run "
           "whose microseconds are not the workload's: its self-check did not trust them, "
           "or its mean read more than 15% off the untraced runs'.")
UNTRUSTED = " (untrusted)"
SHORT = 24     # names this long or shorter are shown as they are
KEY = 12       # an axis name longer than this is shortened to its first word(s)
WRAP = 28      # a name that is no cell's is broken into lines of about this


def _segments(name: str) -> list[tuple[str, str]] | None:
    """A cell's name (runners/experiments/scenario.py Cell.name: key-value pairs joined
    by '_', values stripped to [A-Za-z0-9.]) as (key, value) pairs; None
    for a name that is not one."""
    out, key = [], []
    for tok in name.split("_"):
        if "-" in tok:
            k, v = tok.split("-", 1)
            if not re.fullmatch(r"[A-Za-z0-9.]*", v):
                return None
            out.append(("_".join(key + [k]), v))
            key = []
        else:
            key.append(tok)
    return out if out and not key else None


def wrap(name: str, width: int = WRAP, sep: str = "<br>") -> str:
    """A long name broken after '_' or '-' into lines of about width
    characters: every character kept."""
    parts = re.findall(r"[^_-]+[_-]?|[_-]", name)
    lines, cur = [], ""
    for p in parts:
        if cur and len(cur) + len(p) > width:
            lines.append(cur)
            cur = ""
        cur += p
    return sep.join(lines + [cur]) if cur or not lines else sep.join(lines)


def cell_labels(names: list[str], sep: str = " ",
                values: dict[str, dict[str, str]] | None = None) -> tuple[list[str], str]:
    """Labels a figure can print whole at 1000 px: matrix cells by the axes
    whose values differ between them ('alpha=0.5 preclude=2'), an axis name
    longer than KEY characters by its first word(s); names that are short,
    or not cells, as they are (wrapped with <br> when long). Returns the
    labels and a note spelling out the shortened axis names ('' if none).
    values: per cell name, its axes' values as written (a cell's name keeps
    only [A-Za-z0-9.] of them: 'fillseq,readrandom' reads 'fillseqreadrandom'),
    shown in place of the name's."""
    names = [str(n) for n in names]
    values = values or {}
    segs = [_segments(n) for n in names]
    if max((len(n) for n in names), default=0) <= SHORT or None in segs or \
            len({tuple(k for k, _ in s) for s in segs}) != 1:   # type: ignore[union-attr]
        return [n if len(n) <= SHORT else wrap(n) for n in names], ""
    keys = [k for k, _ in segs[0]]   # type: ignore[index]
    vary = [i for i in range(len(keys)) if len({s[i][1] for s in segs}) > 1]  # type: ignore
    if not vary:
        return [wrap(n) for n in names], ""
    short = {}
    for i in vary:
        words = keys[i].split("_")
        k = 1
        others = [keys[j].split("_") for j in vary if j != i]
        while len(keys[i]) > KEY and k < len(words) and \
                any(o[:k] == words[:k] for o in others):
            k += 1
        short[keys[i]] = keys[i] if len(keys[i]) <= KEY else "_".join(words[:k])
    labels = [sep.join(f"{short[keys[i]]}={values.get(n, {}).get(keys[i], s[i][1])}"
                       for i in vary) for n, s in zip(names, segs)]  # type: ignore
    if len(set(labels)) != len(labels):   # two cells alike: their whole names
        return [wrap(n) for n in names], ""
    note = "; ".join(f"{v} = {k}" for k, v in short.items() if k != v)
    return labels, note


def axis_values(df: pd.DataFrame) -> dict[str, dict[str, str]]:
    """Per cell, its axes' values as the matrix wrote them (axis_<key>
    columns), for cell_labels: the name strips their commas."""
    cols = [c for c in df.columns if c.startswith("axis_")]
    out: dict[str, dict[str, str]] = {}
    for _, r in df.drop_duplicates(subset=["cell"]).iterrows():
        out[str(r["cell"])] = {c[len("axis_"):]: str(r[c]) for c in cols if pd.notna(r[c])}
    return out


def _text_room(fig: go.Figure, lo: float, hi: float, log: bool,
               share: float = 0.16, gap: float = 0.015) -> float:
    """Widen the left panel's x range so text beside a bar ending at hi
    (the whisker's end) stays inside the panel: share of its width is kept
    free past hi. Returns how far past a whisker's end (gap of the panel's
    width; a factor on a log axis) the text starts, clear of its cap."""
    if log and lo > 0 and hi > 0:
        a, b = math.log10(lo) - 0.05, math.log10(hi)
        top = b + (b - a) * share / (1 - share)
        fig.update_xaxes(range=[a, top], row=1, col=1)
        return 10 ** ((top - a) * gap)
    if hi > 0:
        fig.update_xaxes(range=[0, hi / (1 - share)], row=1, col=1)
        return hi / (1 - share) * gap
    return 0.0


def add_note(fig: go.Figure, note: str) -> None:
    """The shortened axis names, under the plot."""
    if not note:
        return
    fig.add_annotation(text=note, showarrow=False, xref="paper", yref="paper", x=0,
                       y=0, yshift=-62, xanchor="left", yanchor="top",
                       font=dict(size=11))
    fig.update_layout(margin=dict(b=90))


def read(folder: Path) -> pd.DataFrame | None:
    path = folder / "matrix.parquet"
    if not path.exists():
        return None
    df = pd.read_parquet(path)
    return df if len(df) and "ops_sec" in df else None


def per_cell(df: pd.DataFrame) -> pd.DataFrame:
    """Per cell and benchmark: untraced median, min and max of ops/s, mean
    and p99 latency (us), and the traced run's ops/s."""
    mean_col = "micros_op" if "micros_op" in df else "mean_us"
    rows = []
    for (cell, bench), g in df.groupby(["cell", "benchmark"], sort=False, dropna=False):
        base, traced = g[g["kind"] == "baseline"], g[g["kind"] == "traced"]
        if not len(base):
            continue
        rows.append({
            "cell": cell, "benchmark": bench,
            "ops": base["ops_sec"].median(), "ops_lo": base["ops_sec"].min(),
            "ops_hi": base["ops_sec"].max(),
            "mean_us": base[mean_col].median() if mean_col in base else None,
            "p99_us": base["p99_us"].median() if "p99_us" in base else None,
            "traced_ops": traced["ops_sec"].iloc[0] if len(traced) else None,
            "repeats": len(base)})
    return pd.DataFrame(rows)


def off_untraced(df: pd.DataFrame) -> set[str]:
    """The cells whose traced run's compensated mean, of any transaction
    type, reads more than TOLERANCE off the untraced runs' own (run_matrix
    compare_traced's adj_vs_baseline_mean, sqlite_tpcc's matrices): its
    microseconds are not the workload's."""
    col = "adj_vs_baseline_mean"
    if col not in df:
        return set()
    off = df[(df["kind"] == "traced") & ((df[col] - 1).abs() > TOLERANCE)]
    return set(off["cell"])


def comparison_figure(df: pd.DataFrame,
                      untrusted: Iterable[str] = ()) -> go.Figure | None:
    """Cells as rows (the first on top): throughput bars with the untraced
    range, the traced/untraced ratio beside each; the latencies as marks.
    A TPC-C matrix (a tpmC column) shows its New-Order transactions per
    minute (TPC-C-like, not TPC-C's tpmC), the unit its tables use: one bar
    per cell, as every transaction type of a run shares it. Cells whose
    traced run is not trusted (untrusted: by name, e.g. results.json's
    `trusted`; and those off_untraced finds) are labelled so. Log axes
    label whole values (viz/axes.py), never plotly's bare "2" and "5"."""
    t = per_cell(df)
    if not len(t):
        return None
    tpcc = "tpmC" in df and df["tpmC"].notna().any()
    unit = "New-Order txns/min (TPC-C-like)" if tpcc else "ops/s"
    cells = list(dict.fromkeys(t["cell"]))
    labels, note = cell_labels(cells, values=axis_values(df))
    distrusted = set(untrusted) | off_untraced(df)
    labels = [lab + UNTRUSTED if c in distrusted else lab for c, lab in zip(cells, labels)]
    label_of = dict(zip(cells, labels))
    t["label"] = t["cell"].map(label_of)
    if not tpcc:
        # one row per cell and benchmark, each bar centred on its own label
        # (benchmarks as slots of a cell's row put a lone bar off its label)
        many = t.groupby("cell", sort=False)["benchmark"].transform("size") > 1
        t["label"] = [f"{lab} · {b}" if m else lab
                      for lab, b, m in zip(t["label"], t["benchmark"], many)]
        labels = list(dict.fromkeys(t["label"]))
    # two y axes with the same rows (not one shared axis: the marks' groups
    # would take slots beside the bars)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.04,
                        subplot_titles=(
                            f"throughput, {unit}:<br>untraced median, range<br>"
                            "(beside: traced / untraced)",
                            "latency, us:<br>mean and p99<br>(untraced medians)"))
    # three short lines each: long row labels leave the left panel narrow,
    # and side-by-side titles of one line overprint each other
    fig.update_annotations(font_size=13)
    if tpcc:
        bars = per_cell_metric(df, "tpmC")
        bars["label"] = bars["cell"].map(label_of)
        groups = [("New-Order txns/min", bars)]
    else:
        bars = t
        groups = [("" if pd.isna(b) else str(b), g)
                  for b, g in t.groupby("benchmark", sort=False, dropna=False)]
    for label, g in groups:
        fig.add_bar(y=g["label"], x=g["ops"], orientation="h",
                    name=f"{label} untraced".strip(),
                    error_x=dict(type="data", symmetric=False,
                                 array=g["ops_hi"] - g["ops"],
                                 arrayminus=g["ops"] - g["ops_lo"]),
                    hovertemplate=f"%{{y}}: %{{x:,.0f}} {unit}<extra>{label}</extra>",
                    row=1, col=1)
    # the traced/untraced ratio as text past the whisker's end, where
    # neither the bar nor its range reaches
    ratio = [f"{tr / o:.2f}x" if tr and o else "" for tr, o in
             zip(bars["traced_ops"], bars["ops"])]
    ends = [h if pd.notna(h) else o for h, o in zip(bars["ops_hi"], bars["ops"])]
    lo, hi = bars["ops"].min(), bars["ops"].max()
    log = bool(lo > 0 and hi / lo > 30)   # cells 100x apart: a linear axis hides the slow ones
    past = _text_room(fig, float(bars["ops_lo"].min()), float(max(ends)), log)
    at = [e * past if log else e + past for e in ends]
    fig.add_scatter(y=bars["label"], x=at, mode="text", text=ratio,
                    textposition="middle right", textfont=dict(size=10),
                    cliponaxis=False, showlegend=False, hoverinfo="skip", row=1, col=1)
    for bench, g in t.groupby("benchmark", sort=False, dropna=False):
        label = "" if pd.isna(bench) else str(bench)
        for stat, sym in (("mean_us", "circle"), ("p99_us", "triangle-right")):
            if g[stat].notna().any():
                # tpmC rows: each benchmark on its own line within the cell's row
                fig.add_scatter(y=g["label"], x=g[stat], mode="markers", orientation="h",
                                offsetgroup=(label or "all") if tpcc else None,
                                marker=dict(symbol=sym, size=9),
                                name=f"{label} {stat[:-3]}".strip(), row=1, col=2)
    n = len(labels)
    fig.update_layout(barmode="group" if tpcc else "overlay",
                      height=max(480, 170 + 26 * n), bargap=0.25,
                      margin=dict(t=130),   # the panels' three-line titles under the figure's
                      scattermode="group" if tpcc else "overlay", scattergap=0.25)
    # the first row on top, no empty slot above or below (the ratio text
    # would pad an autoranged axis)
    fig.update_yaxes(range=[n - 0.5, -0.5], type="category", categoryorder="array",
                     categoryarray=labels)
    fig.update_yaxes(showticklabels=False, row=1, col=2)
    if log:
        fig.update_xaxes(type="log", row=1, col=1,
                         **log_ticks([*bars["ops_lo"], *ends], count_label))
    fig.update_xaxes(type="log", row=1, col=2,
                     **log_ticks([v for c in ("mean_us", "p99_us") for v in t[c].dropna()]))
    add_note(fig, note)
    return fig


def per_cell_metric(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per cell: the untraced median, min and max of a per-run metric (the
    same in every benchmark row of a run: its first is taken) and the traced
    run's, in per_cell's column names."""
    rows = []
    for cell, g in df.groupby("cell", sort=False):
        runs = g.drop_duplicates(subset=[c for c in ("kind", "rep") if c in g])
        base, traced = runs[runs["kind"] == "baseline"], runs[runs["kind"] == "traced"]
        if not len(base):
            continue
        rows.append({"cell": cell, "ops": base[metric].median(), "ops_lo": base[metric].min(),
                     "ops_hi": base[metric].max(),
                     "traced_ops": traced[metric].iloc[0] if len(traced) else None})
    return pd.DataFrame(rows)
