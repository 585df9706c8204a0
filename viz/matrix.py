"""A matrix's comparisons across cells, from matrix.parquet (one row per
run and benchmark, untraced baselines and the traced run, as
runners/run_matrix.py writes it): the workload's own throughput and
latency per cell against its untraced repeats, with the traced/untraced
ratio."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

CAPTION = ("Each cell's throughput (left; log scale when cells differ 30-fold) and "
           "latency (right, log scale) as the workload reported them: bars are the median "
           "of the untraced repeats, whiskers their range, and the label over a bar the "
           "traced run's throughput over that median. Compare cells on the bars; the "
           "labels show what tracing cost.")


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


def comparison_figure(df: pd.DataFrame) -> go.Figure | None:
    t = per_cell(df)
    if not len(t):
        return None
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        "throughput, ops/s (untraced median, range; traced/untraced)",
        "latency, us: mean and p99 (untraced medians)"))
    for bench, g in t.groupby("benchmark", sort=False, dropna=False):
        label = "" if pd.isna(bench) else str(bench)
        ratio = [f"{tr / o:.2f}x" if tr and o else "" for tr, o in
                 zip(g["traced_ops"], g["ops"])]
        fig.add_bar(x=g["cell"], y=g["ops"], name=f"{label} untraced",
                    error_y=dict(type="data", symmetric=False,
                                 array=g["ops_hi"] - g["ops"],
                                 arrayminus=g["ops"] - g["ops_lo"]),
                    text=ratio, textposition="outside", row=1, col=1)
        for stat, sym in (("mean_us", "circle"), ("p99_us", "triangle-up")):
            if g[stat].notna().any():
                fig.add_scatter(x=g["cell"], y=g[stat], mode="markers",
                                marker=dict(symbol=sym, size=9),
                                name=f"{label} {stat[:-3]}", row=1, col=2)
    fig.update_layout(barmode="group", height=480)
    lo, hi = t["ops"].min(), t["ops"].max()
    if lo > 0 and hi / lo > 30:   # cells 100x apart: a linear axis hides the slow ones
        fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    return fig
