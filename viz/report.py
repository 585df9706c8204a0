#!/usr/bin/env python3
"""Build report.html from any number of walscope run folders (or folders of them).

    walscope report RUN_OR_MATRIX_DIR... [-o report.html]
    walscope report --dataset DATASET [-o fleet.html]      (viz/fleet.py)

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

from plotly.offline import get_plotlyjs

from runfolder.files import REPORT_HTML, RunFolder
from viz import export, figures, headline, matrix
from viz.figures import breakdown_figure
from viz.flameframe import flame_frame
from analysis.losses import losses
from viz.runs import COMPONENTS, ReportError, Run, find_runs  # noqa: F401

# flame graphs embedded in the page (the rest are linked): at most this many
EMBEDDED_FLAMES = 12

def overhead_table(runs: list[Run]) -> str:
    rows = []
    for r in runs:
        s = r.summary
        cal = s.get("calibration", {})
        rows.append(
            f"<tr><td>{html.escape(r.name)}</td><td>{s.get('mode', '')}</td>"
            f"<td>{s['writes']['count']}</td>"
            f"<td>{s['probe_hits']['per_write']:.1f}</td>"
            f"<td>{cal.get('pair_in_ns', 0) / 1e3:.1f} / {cal.get('one_ns', 0) / 1e3:.1f}</td>"
            f"<td>{s.get('estimated_overhead_ns', 0) / 1e6:.1f}</td>"
            f"<td>{html.escape(', '.join(s.get('unreliable_components', [])) or '-')}</td>"
            f"<td>{html.escape(losses(s))}</td>"
            f"<td>{'PARTIAL' if r.partial else 'complete'}</td></tr>")
    return ("<table><tr><th>scenario</th><th>mode</th><th>writes</th>"
            "<th>probe hits/write</th><th>cost/pair, /probe (us)</th>"
            "<th>est. overhead (ms)</th><th>unreliable components</th>"
            "<th>lost</th><th>run</th></tr>" + "".join(rows) + "</table>")


def flames(runs: list[Run], out_dir: Path) -> str:
    """Each run's flame graphs, embedded (an iframe holding the SVG, so its
    own search and zoom work and the page stays one file), then linked."""
    items, embedded = [], 0
    for r in runs:
        for svg in RunFolder(r.path).flame_svgs():
            kind = svg.stem[6:]
            if embedded < EMBEDDED_FLAMES:
                embedded += 1
                items.append(f"<h3>{html.escape(r.name)}: {html.escape(kind)}</h3>"
                             + flame_frame(svg.read_text(errors="replace"),
                                           f"{r.name} {kind}"))
            else:
                items.append(f'<p><a href="{html.escape(os.path.relpath(svg, out_dir))}">'
                             f"{html.escape(r.name)}: {html.escape(kind)}</a></p>")
    return "".join(items) or "<p>(none: run `walscope flamegraph` on the run folders)</p>"


def matrices(paths: list[Path]) -> list[tuple[str, Any]]:
    """(name, matrix.parquet frame) of the matrix folders among paths."""
    out = []
    for p in paths:
        df = matrix.read(p)
        if df is not None:
            out.append((p.name, df))
    return out


def all_figures(runs: list[Run], mats: list[tuple[str, Any]],
                made: dict[str, Any] | None = None) -> list[tuple[str, str, Any]]:
    """(title, caption, figure): matrix comparisons first, then the runs'
    (those in made, by title, are not drawn again)."""
    out = []
    for name, df in mats:
        f = matrix.comparison_figure(df)
        if f is not None:
            out.append((f"Cells of {name}: throughput and latency against untraced runs",
                        matrix.CAPTION, f))
    for title, caption, make in figures.FIGURES:
        f = (made or {}).get(title) or make(runs)
        if f is not None:
            out.append((title, caption, f))
    return out


DIFF_CAPTION = ("Two runs: B - A of the mean and of the p99 write latency, component by "
                "component, each with a 95% bootstrap interval over writes (over windows "
                "where rows come from windows), and the residual the components leave; as "
                "`walscope diff A B` prints it.")


def diff_section(runs: list[Run]) -> tuple[str, dict[str, Any] | None]:
    """walscope diff of exactly two runs (A the first given), or nothing."""
    if len(runs) != 2:
        return "", None
    from analysis.diff import DiffError, diff_runs
    from viz.diff import html_section
    try:
        d = diff_runs(runs[0].path, runs[1].path)
    except (DiffError, OSError, ValueError) as e:
        return (f"<h2>A against B</h2><p class=how>Not compared: "
                f"{html.escape(str(e))}</p>"), None
    return (f"<h2 id=diff>A against B: {html.escape(runs[0].name)} and "
            f"{html.escape(runs[1].name)}</h2><p class=how>{DIFF_CAPTION}</p>"
            + html_section(d)), d


def build(runs: list[Run], out: Path, paths: list[Path] | None = None,
          png_dir: Path | None = None) -> dict[str, Any]:
    out.parent.mkdir(parents=True, exist_ok=True)
    breakdown, data = breakdown_figure(runs)   # its numbers go into the page's data too
    figs = all_figures(runs, matrices(paths or []),
                       {figures.BREAKDOWN: breakdown})
    parts = [f"<h2>{html.escape(t)}</h2><p class=how>{html.escape(c)}</p>"
             + f.to_html(full_html=False, include_plotlyjs=False, div_id=f"fig{i}")
             for i, (t, c, f) in enumerate(figs)]
    if png_dir is not None:
        png_dir.mkdir(parents=True, exist_ok=True)
        for t, _, f in figs:
            export.write_png(f, png_dir / f"{export.slug(t)}.png", title=t)
    # each partial run with what it lost (analysis.run.partial_why)
    partial = [f"{r.name}: " + "; ".join(r.summary.get("partial_why")
                                         or ["records missing (summary.json partial_run)"])
               for r in runs if r.partial]
    sampled = [f"{r.name} (1 in {r.step})" for r in runs if r.sampled]
    if sampled:
        banner_s = ("<p>Long runs: timeline, core and group figures use a sample of "
                    f"their writes: {html.escape(', '.join(sampled))}; means, the CDF "
                    "and the p99 tail use every write.</p>")
    else:
        banner_s = ""
    banner = ("<p class=warn>PARTIAL: not every record the run wrote is here, "
              "so counts and shares are of what is: "
              + "<br>".join(html.escape(p) for p in partial) + "</p>" if partial else "")
    diff_html, diff = diff_section(runs)
    payload = {"scenarios": data,
               "figures": [t for t, _, _ in figs],
               "headline": [headline.row(r) for r in runs],
               "summaries": {r.name: {c: r.summary["components"][c]["mean_ns"]
                                      for c in COMPONENTS if c in r.summary["components"]}
                             for r in runs},
               "thread_time": {r.name: r.summary.get("thread_time", {}).get("roles", {})
                               for r in runs}}
    if diff is not None:
        payload["diff"] = {k: diff[k]["delta_ns"] for k in ("mean", "p99")} | {
            "residual_ns": diff["mean"]["residual_ns"],
            "components_ns": {c["component"]: c["delta_ns"]
                              for c in diff["mean"]["components"]}}
    page = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>walscope report</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:1500px}}
table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:3px 8px}}
.warn{{color:#b00;font-weight:bold}} .how{{color:#444;max-width:60em}}
iframe.flame{{width:100%;border:1px solid #ccc;box-sizing:border-box}}</style>
<script type="text/javascript">{get_plotlyjs()}</script></head><body>
<h1>walscope: where each write's latency goes</h1>{banner}{banner_s}
{headline.headline(runs)}
<p class=how>Latencies are compensated for probe overhead (the "removed" column); see the
overhead table at the end before trusting small components.</p>
{''.join(parts)}
{diff_html}
<h2 id="flames">Flame graphs</h2>{flames(runs, out.parent)}
<h2>Tracing overhead and compensation</h2>{overhead_table(runs)}
<script id="walscope-data" type="application/json">{json.dumps(payload)}</script>
</body></html>"""
    tmp = out.with_suffix(".tmp")
    tmp.write_text(page)
    tmp.replace(out)
    return payload


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="walscope report",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*", type=Path, help="run or matrix folders")
    ap.add_argument("--dataset", type=Path, help="compare the hosts and runs of a "
                    "dataset (walscope export) instead")
    ap.add_argument("--png", type=Path, metavar="DIR",
                    help="also write every figure as a PNG into DIR")
    ap.add_argument("-o", "--output", type=Path,
                    help="HTML file (default: report.html in the only folder given, "
                         "else ./report.html; fleet.html for --dataset)")
    a = ap.parse_args(argv)
    if a.dataset is not None:
        return fleet_report(a.dataset, a.output or Path("fleet.html"))
    if not a.runs:
        ap.error("give run folders, or --dataset DATASET")
    out = a.output or (RunFolder(a.runs[0]).report_html if len(a.runs) == 1
                       else Path(REPORT_HTML))
    from analysis.heap import keep_heap_small
    keep_heap_small()
    try:
        runs = find_runs(a.runs)
        build(runs, out, a.runs, a.png)
    except (ReportError, export.ExportError) as e:
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
