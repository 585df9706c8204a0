"""The report across hosts: a dataset's runs side by side, drawn from the
named queries (analysis/queries), so the page shows what `walscope query`
answers.

    walscope report --dataset DATASET [-o fleet.html]
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from analysis import components
from analysis import query as Q
from analysis.components import COLORS


def drawn_components(df: pd.DataFrame) -> list[str]:
    """The components of a query's rows (components_per_run's, p99_tail's
    <component>_us columns) that some row has a value of, in the queries'
    column order: an engine no run of the dataset traced draws nothing."""
    return [c for c in components.column_order()
            if f"{c}_us" in df and df[f"{c}_us"].notna().any()]


def component_bars(df: pd.DataFrame, title: str, how: str) -> go.Figure:
    """Stacked components per run, runs grouped by host."""
    fig = go.Figure()
    x = [df["host"].tolist(), df["run"].tolist()]
    for c in drawn_components(df):
        fig.add_bar(x=x, y=df[f"{c}_us"].fillna(0), name=c, marker_color=COLORS.get(c))
    fig.update_layout(barmode="stack", title=title, height=460, yaxis_title="us",
                      annotations=[dict(text=how, showarrow=False, xref="paper",
                                        yref="paper", x=0, y=-0.25, align="left")])
    return fig


def build(dataset: Path, out: Path) -> dict[str, Any]:
    """fleet.html from the dataset; returns the queries' rows it drew."""
    con = Q.duckdb_connection(dataset)
    comps = Q.run_duckdb(dataset, "components_per_run", con)
    tail = Q.run_duckdb(dataset, "p99_tail", con)
    runs = Q.run_duckdb(dataset, "overhead_and_losses", con)
    figs = [
        ("Mean write latency by component", component_bars(
            comps, "mean compensated latency per write (us)",
            "Each bar is a run, grouped by host; its segments add up to the mean write.")),
        ("The p99 tail by component", component_bars(
            tail, "writes at or above their run's p99 (us)",
            "The mean of the slowest 1% of writes, split the same way: what grows in the tail.")),
    ]
    parts = [f"<h2>{html.escape(t)}</h2>" + f.to_html(full_html=False, include_plotlyjs=False,
                                                      div_id=f"fleet{i}")
             for i, (t, f) in enumerate(figs)]
    table = runs.to_html(index=False, na_rep="-", float_format=lambda v: f"{v:.3g}")
    payload = {"components_per_run": comps.to_dict("records"),
               "p99_tail": tail.to_dict("records"),
               "overhead_and_losses": runs.to_dict("records")}
    hosts = sorted(runs["host"].unique())
    page = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>walscope fleet report</title>
<style>body{{font-family:sans-serif;margin:2em}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:3px 8px}}</style>
<script type="text/javascript">{get_plotlyjs()}</script></head><body>
<h1>walscope: {len(runs)} runs on {len(hosts)} hosts</h1>
<p>Hosts: {html.escape(', '.join(hosts))}. Every figure is a named query
(<code>walscope query NAME {html.escape(str(dataset))}</code>).</p>
{''.join(parts)}
<h2>Overhead removed and events lost (overhead_and_losses)</h2>{table}
<script id="walscope-data" type="application/json">{json.dumps(payload, default=str)}</script>
</body></html>"""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(page)
    tmp.replace(out)
    return payload
