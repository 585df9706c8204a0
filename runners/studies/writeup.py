"""A study's folder: results.json, environment.json, the pictures (the
report's own figures, as PNG), flame graphs of the cells that differ most,
and README.md with the table and the claim-by-claim verdicts."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from collectors.run_folder import RunFolder
from runners.studies.model import UNTESTABLE, Study, Verdict
from runners.studies.results import Results
from viz import export, figures, matrix
from viz.runs import Run

ROOT = Path(__file__).resolve().parent.parent.parent
PNG_WIDTH = 1000


def pictures(study: Study, res: Results, matrix_dir: Path, out: Path) -> list[str]:
    """throughput.png (cells against their untraced repeats), breakdown.png
    (components' shares per cell), and groups/types where they say something."""
    made = []
    df = matrix.read(matrix_dir)
    if df is not None:
        f = matrix.comparison_figure(df)
        if f is not None:
            export.write_png(f, out / "throughput.png", PNG_WIDTH, 520,
                             title="throughput and latency per cell (untraced medians)")
            made.append("throughput.png")
    runs = [Run(matrix_dir / c.run_dir, c.name) for c in res.cells
            if c.run_dir and RunFolder(matrix_dir / c.run_dir).writes_parquet.exists()]
    if runs:
        fig, _ = figures.breakdown_figure(runs)
        fig.update_layout(xaxis_tickangle=30, xaxis2_tickangle=30)
        export.write_png(fig, out / "breakdown.png", PNG_WIDTH, 600,
                         title="where the write goes: shares of the mean and of the p99 tail")
        made.append("breakdown.png")
        for name, make, title in (
                ("groups.png", figures.groups_figure, "group commit: leaders and followers"),
                ("types.png", figures.types_figure, "transactions by type and component")):
            g = make(runs)
            if g is not None:
                export.write_png(g, out / name, PNG_WIDTH, 520, title=title)
                made.append(name)
    return made


def flames(study: Study, res: Results, matrix_dir: Path, out: Path) -> list[str]:
    names = []
    try:
        cells = study.flames(res) if study.flames else []
    except KeyError:
        cells = []
    for name in cells:
        c = next(c for c in res.cells if c.name == name)
        src = RunFolder(matrix_dir / (c.run_dir or "")).flame_svg("phase")
        if c.run_dir and src.exists():
            dst = out / f"flame-{name}.svg"
            shutil.copyfile(src, dst)
            names.append(dst.name)
    return names


def verdicts(study: Study, res: Results) -> list[Verdict]:
    out = []
    for cl in study.claims:
        try:
            out.append(cl.decide(res))
        except KeyError as e:
            out.append(Verdict(UNTESTABLE, f"the cells it needs were not run ({e})"))
        except ZeroDivisionError:
            out.append(Verdict(UNTESTABLE, "a cell it needs has no traced rows"))
    return out


def findings(study: Study, res: Results) -> list[str]:
    try:
        return study.findings(res)
    except KeyError as e:
        return [f"(the cells these need were not run: {e})"]


def fmt(metric_fmt: str, s: Any) -> str:
    if s is None:
        return "-"
    v = metric_fmt.format(s.median)
    if s.n > 1:
        v += f" [{metric_fmt.format(s.lo)}-{metric_fmt.format(s.hi)}]"
    return v


def table(study: Study, res: Results) -> str:
    axes = list(res.cells[0].values) if res.cells else []
    head = axes + ["benchmark"] + [m.label for m in study.metrics] + \
        ["traced/untraced", "mean / p99 (traced, us)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in res.cells:
        for bench, per in c.metrics.items():
            row = [str(c.values[a]) for a in axes] + [bench]
            row += [fmt(m.fmt, per.get(m.column)) for m in study.metrics]
            base, tr = per.get("ops_sec"), c.traced_ops.get(bench)
            row.append(f"{tr / base.median:.2f}" if base and tr and base.median else "-")
            row.append(f"{c.mean_us:,.1f} / {c.p99_us:,.1f}" if c.writes else "-")
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def environment_lines(env: dict[str, Any]) -> str:
    keys = ("kernel", "cpu_model", "cpu_types", "cpu_types_source", "db_device", "db_fs",
            "rocksdb", "sqlite", "mode", "repeats")
    return "\n".join(f"- {k}: `{env.get(k)}`" for k in keys if env.get(k) is not None)


def readme(study: Study, res: Results, pics: list[str], svgs: list[str],
           minutes: float | None) -> str:
    vs = verdicts(study, res)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    claims = "\n".join(f"{i}. {c.text}" for i, c in enumerate(study.claims, 1))
    checked = "\n".join(
        f"| {i} | **{v.outcome}** | {v.evidence}"
        + (f" See [{v.figure}]({v.figure})." if v.figure and v.figure in pics else "") + " |"
        for i, v in enumerate(vs, 1))
    pics_md = "\n\n".join(f"![{p[:-4]}]({p})" for p in pics)
    flames_md = ", ".join(f"[{s[6:-4]}]({s})" for s in svgs) or "none"
    quick = " (**--quick**: a pipeline check, not a result)" if res.quick else ""
    took = f" It took {minutes:.0f} minutes here." if minutes else ""
    return f"""# {study.id}: {study.title}{quick}

<!-- generated by runners/study.py {study.id} from results.json; edit runners/studies/s{study.id}.py -->

Seed: `../shared/seeds/{study.seed}`.

## Question

{study.question}

## The seed's claims (translated)

{claims}

## Setup here

{study.setup}

Each cell ran {res.environment.get('repeats')} times untraced (the table's medians and
[ranges]) and once traced with walscope in `{res.environment.get('mode')}` mode (the
per-write attribution; "traced/untraced" is that run's throughput over the untraced
median). A claim counts as held only where the repeats' ranges do not overlap. The
cells ran one after another, so a difference between cells smaller than this VM's
drift over minutes (its untraced-against-untraced noise reaches +-10%,
[bench/results/overhead.md](../../bench/results/overhead.md)) is not a finding.

{environment_lines(res.environment)}

## Results

{table(study, res)}

## The claims, checked

| # | verdict | evidence |
|---|---|---|
{checked}

## What per-write attribution adds

{chr(10).join('- ' + f for f in findings(study, res))}

## Pictures

{pics_md}

Flame graphs (per-write phases, compensated) of the cells that differ most: {flames_md}.

## Regenerate

```sh
sudo ./runners/study.py {study.id}          # the full runs, into this folder
sudo ./runners/study.py {study.id} --quick  # a small variant, as CI runs it
```
{took}
Made from commit `{commit}`; the runs themselves stay in
`runs/study-{study.id}{'-quick' if res.quick else ''}/`.
"""


def write(study: Study, res: Results, matrix_dir: Path, out: Path,
          minutes: float | None = None) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    res.save(out / "results.json")
    (out / "environment.json").write_text(json.dumps(res.environment, indent=1) + "\n")
    pics = pictures(study, res, matrix_dir, out)
    svgs = flames(study, res, matrix_dir, out)
    (out / "README.md").write_text(readme(study, res, pics, svgs, minutes))
    return out / "README.md"
