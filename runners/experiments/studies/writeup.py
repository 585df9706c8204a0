"""A study's folder: results.json, environment.json, the pictures (the
report's own figures, as PNG), flame graphs of the cells that differ most,
and README.md with the table and the claim-by-claim verdicts."""
from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
from pathlib import Path
from typing import Any

from runfolder.files import RunFolder
from runners.experiments.studies.judge import (COVERAGE, MIN_ROUNDS, beside_untraced, trust_note,
                                               truth_note)
from runners.experiments.studies.model import UNTESTABLE, Study, Verdict
from runners.experiments.studies.results import Results
from viz import export, figures, matrix
from viz.runs import Run

ROOT = Path(__file__).resolve().parents[3]
PNG_WIDTH = 1000


def pictures(study: Study, res: Results, matrix_dir: Path, out: Path) -> list[str]:
    """throughput.png (cells against their untraced repeats), breakdown.png
    (components' shares per cell), and groups/types where they say something."""
    made = []
    df = matrix.read(matrix_dir)
    if df is not None:
        f = matrix.comparison_figure(df, untrusted=[c.name for c in res.cells
                                                    if c.writes and not c.trusted])
        if f is not None:
            export.write_png(f, out / "throughput.png", PNG_WIDTH, None,
                             title="throughput and latency per cell (untraced medians)")
            made.append("throughput.png")
    runs = [Run(matrix_dir / c.run_dir, c.name) for c in res.cells
            if c.run_dir and RunFolder(matrix_dir / c.run_dir).writes_parquet.exists()]
    if runs:
        fig, _ = figures.breakdown_figure(runs)
        export.write_png(fig, out / "breakdown.png", PNG_WIDTH, None,
                         title="where the write goes: shares of the mean and of the p99 tail")
        made.append("breakdown.png")
        for name, make, title in (
                ("groups.png", figures.groups_figure, "group commit: leaders and followers"),
                ("types.png", figures.types_figure, "transactions by type and component")):
            g = make(runs)
            if g is not None:
                export.write_png(g, out / name, PNG_WIDTH, None, title=title)
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
        ["traced/untraced", "traced mean write, us [rounds' range] (lens) / p99"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in res.cells:
        for i, (bench, per) in enumerate(c.metrics.items()):
            row = [str(c.values[a]) for a in axes] + [bench]
            row += [fmt(m.fmt, per.get(m.column)) for m in study.metrics]
            base, tr = per.get("ops_sec"), c.traced_ops.get(bench)
            row.append(f"{tr / base.median:.2f}" if base and tr and base.median else "-")
            # the traced run's rows are all its writes, whatever benchmark
            # made them: printed once, on the cell's first row
            traced = traced_cell(c) if c.writes else "no rows"
            row.append(traced + (" (all its benchmarks)" if len(c.metrics) > 1 else "")
                       if i == 0 else "")
            lines.append("| " + " | ".join(row) + " |")
    notes = [f"No rows in `{c.name}`: {c.no_rows or 'see its traced run'}."
             for c in res.cells if not c.writes]
    notes += [n for c in res.cells if (n := trust_note(c))]
    notes += [n for c in res.cells if (n := truth_note(c))]
    notes += study.table_notes(res) if study.table_notes else []
    return "\n".join(lines + ([""] + notes if notes else []))


def traced_cell(c: Any) -> str:
    """The traced mean write of the cell's lens, with its rounds' range where
    it was traced in several, the lens (and "not trusted"), and the rows' p99
    where their self-check trusts them (a percentile needs each write's own
    time), else "-"."""
    rng = (f" [{c.lens_mean_range[0]:,.1f}-{c.lens_mean_range[1]:,.1f}]"
           if len(c.lens_mean_range) == 2 else "")
    rows_ok = bool((c.extra.get("self_check") or {}).get("trusted"))
    return (f"{c.lens_mean_us:,.1f}{rng} ({c.lens}{'' if c.trusted else ', not trusted'}) / "
            + (f"{c.p99_us:,.1f}" if rows_ok else "-"))


def rule_text(env: dict[str, Any]) -> str:
    """How the runs were ordered and how a difference is judged."""
    n = env.get("repeats")
    if env.get("aa_cell") is None:   # a matrix from before the rule
        return (f"Each cell ran {n} times untraced, one cell after another, and once "
                "traced; these results predate the verdict rule of docs/matrices.md.")
    fams = env.get("aa_cells") or {}
    if fams:
        pairs = "; ".join(f"{f}: " + ", ".join(f"`{c}`" for c in cells)
                          for f, cells in fams.items())
        aa = (f"the A/A cells ran twice a round untraced, two to a family of cells "
              f"(by `{env.get('aa_by') or 'none'}`), and each family's band is the range "
              f"of its pairs' per-round ratios ({pairs})")
    else:
        aa = (f"`{env['aa_cell']}` ran twice a round untraced, the A/A pair that "
              "measures this machine's noise, one band for every cell")
    k = int(env.get("traced_rounds") or 1)
    traced = ("the traced runs in the middle round" if k <= 1 else
              f"every cell traced as well in {k} of the rounds (its traced figures are the "
              "medians across them, with their ranges: intervals from repeats, at the "
              "price of a traced run for each untraced one)")
    return (f"Each cell ran {n} times untraced, in {n} rounds: every cell once a round, "
            f"in a shuffled order (seed {env.get('order_seed')}), {traced}; {aa}. "
            "The table gives the untraced medians "
            "and [ranges]; \"traced/untraced\" is the traced run's throughput over the "
            "untraced median. A difference between two cells counts only when the "
            f"interval of their per-round ratio (its median's distribution-free interval, "
            f">= {COVERAGE:.0%}, from >= {MIN_ROUNDS} rounds) lies wholly outside the A/A "
            "band (the range of the A/A pair's per-round ratios): "
            "[docs/matrices.md](../../docs/matrices.md#the-verdict-rule).")


def gap_sections(vs: list[Verdict], res: Results) -> str:
    """For each pair of cells a claim compares, walscope diff of their
    traced runs: the gap in the mean and in the p99, component by
    component (a pair several claims compare, once)."""
    by_name = {c.name: c for c in res.cells}
    claims: dict[tuple[str, str], list[int]] = {}
    for i, v in enumerate(vs, 1):
        for pair in v.pairs:
            claims.setdefault(tuple(pair), []).append(i)   # type: ignore[arg-type]
    out = []
    for (a, b), nums in claims.items():
        which = ", ".join(map(str, nums))
        out.append(f"**Claim{'s' if len(nums) > 1 else ''} {which}**: A = `{a}`, "
                   f"B = `{b}` (B - A).")
        d = res.diff(a, b)
        empty = [by_name[n] for n in (a, b) if n in by_name and not by_name[n].writes]
        if empty:
            out.append("Not decomposed: " + "; ".join(
                f"`{c.name}` has no traced rows ({c.no_rows})" for c in empty) + ".")
        elif d is None or "text" not in d:
            out.append("Not decomposed: " + (d or {}).get("error", "no diff made") + ".")
        else:
            out.append("```text\n" + d["text"].rstrip() + "\n```")
            out.append("Beside it: " + beside_untraced(by_name[a], by_name[b],
                                                       d["delta_mean_ns"] / 1e3) + "."
                       + rounds_beside(by_name[a], by_name[b]))
    return "\n\n".join(out) if out else "No claim compares two traced cells."


def rounds_beside(a: Any, b: Any) -> str:
    """The diff above is of one traced round's pair (its intervals come from
    the writes of those two runs); across the rounds each cell was traced
    in, the mean write of each, median [range]: the spread a repeat gives."""
    if len(a.rounds) < 2 or len(b.rounds) < 2:
        return ""

    def spread(c: Any) -> str:
        m = [r["mean_us"] for r in c.rounds]
        return (f"{statistics.median(m):,.1f} us [{min(m):,.1f}-{max(m):,.1f}] "
                f"({c.lens} lens{'' if c.trusted else ', not trusted'})")
    return (f" The table is one traced round's pair; across {len(a.rounds)} and "
            f"{len(b.rounds)} traced rounds the mean write of A was {spread(a)}, of B "
            f"{spread(b)}.")


def environment_lines(env: dict[str, Any]) -> str:
    keys = ("kernel", "cpu_model", "cpu_types", "cpu_types_source", "db_device", "db_fs",
            "rocksdb", "sqlite", "mode", "repeats")
    return "\n".join(f"- {k}: `{env.get(k)}`" for k in keys if env.get(k) is not None)


def head_commit() -> str:
    """The checkout's commit, short ("" outside git)."""
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()


def readme(study: Study, res: Results, pics: list[str], svgs: list[str],
           minutes: float | None, runs_commit: str | None = None) -> str:
    vs = verdicts(study, res)
    commit = head_commit()
    claims = "\n".join(f"{i}. {c.text}" for i, c in enumerate(study.claims, 1))
    checked = "\n".join(
        f"| {i} | **{v.outcome}** | {v.evidence}"
        + (f" See [{v.figure}]({v.figure})." if v.figure and v.figure in pics else "") + " |"
        for i, v in enumerate(vs, 1))
    pics_md = "\n\n".join(f"![{p[:-4]}]({p})" for p in pics)
    flames_md = ", ".join(f"[{s[6:-4]}]({s})" for s in svgs) or "none"
    quick = " (**--quick**: a pipeline check, not a result)" if res.quick else ""
    took = f" It took {minutes:.0f} minutes here." if minutes else ""
    made = f"Made from commit `{commit}`" if runs_commit in (None, commit) else \
        f"Runs made at commit `{runs_commit}`, written at `{commit}`"
    return f"""# {study.id}: {study.title}{quick}

<!-- generated by runners/study.py {study.id} from results.json; edit runners/experiments/studies/s{study.id}.py -->

## Question

{study.question}

**Answer.** {answer(study, res)}

## What the seed did

Seed: `../shared/seeds/{study.seed}`. {study.seed_says}

## The seed's claims (translated)

{claims}

## Setup here

{study.setup}

{rule_text(res.environment)}

{environment_lines(res.environment)}

## Results

{table(study, res)}

## The claims, checked

| # | verdict | evidence |
|---|---|---|
{checked}

## The gaps, component by component

`walscope diff` of the two cells' traced runs for each claim that compares
two cells: the mean and the p99 of the compensated write latency, B - A,
by component, with the residual (what the components do not account for),
and the I/O per write side by side. These are the traced runs' rows; the
verdicts above rest on the untraced runs.

{gap_sections(vs, res)}

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
{made}; the runs themselves stay in
`runs/study-{study.id}{'-quick' if res.quick else ''}/`.
"""


def answer(study: Study, res: Results) -> str:
    if study.answer is None:
        return "(no answer written for this study)"
    try:
        return study.answer(res)
    except (KeyError, ZeroDivisionError) as e:
        return f"(not answerable from these runs: {e})"


def attach_diffs(study: Study, res: Results, matrix_dir: Path) -> None:
    """walscope diff of the traced runs of every pair of cells a verdict
    compares, kept in results.json (so the folder renders without the runs)."""
    from analysis.diff import DiffError, diff_runs
    from viz.diff import format_table
    by_name = {c.name: c for c in res.cells}
    for v in verdicts(study, res):
        for a, b in v.pairs:
            key = f"{a} vs {b}"
            ca, cb = by_name.get(a), by_name.get(b)
            if key in res.diffs or not (ca and cb and ca.writes and cb.writes
                                        and ca.run_dir and cb.run_dir):
                continue
            try:
                d = diff_runs(matrix_dir / ca.run_dir, matrix_dir / cb.run_dir)
            except (DiffError, OSError, ValueError) as e:
                res.diffs[key] = {"a": a, "b": b, "error": str(e)}
                continue
            res.diffs[key] = {"a": a, "b": b, "text": format_table(d),
                              "delta_mean_ns": d["mean"]["delta_ns"],
                              "residual_ns": d["mean"]["residual_ns"],
                              "delta_p99_ns": d["p99"]["delta_ns"],
                              "components_ns": {r["component"]: r["delta_ns"]
                                                for r in d["mean"]["components"]}}


PICTURES = ("throughput.png", "breakdown.png", "groups.png", "types.png")


def rejudge(study: Study, folder: Path) -> Path:
    """README.md again from the folder's own results.json, the runs gone:
    the verdicts, answer and notes by the rule as it is now; the pictures,
    flame graphs, run time and the commit that made the runs as they were."""
    res = Results.load(folder / "results.json")
    old = (folder / "README.md").read_text() if (folder / "README.md").exists() else ""
    took = re.search(r"It took (\d+) minutes here", old)
    made = re.search(r"(?:Made from|Runs made at) commit `(\w+)`", old)
    pics = [p for p in PICTURES if (folder / p).exists()]
    svgs = sorted(f.name for f in folder.glob("flame-*.svg"))
    res.save(folder / "results.json")
    (folder / "README.md").write_text(readme(study, res, pics, svgs,
                                             float(took.group(1)) if took else None,
                                             made.group(1) if made else None))
    return folder / "README.md"


def write(study: Study, res: Results, matrix_dir: Path, out: Path,
          minutes: float | None = None, runs_commit: str | None = None) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    attach_diffs(study, res, matrix_dir)
    res.save(out / "results.json")
    (out / "environment.json").write_text(json.dumps(res.environment, indent=1) + "\n")
    pics = pictures(study, res, matrix_dir, out)
    svgs = flames(study, res, matrix_dir, out)
    (out / "README.md").write_text(readme(study, res, pics, svgs, minutes, runs_commit))
    return out / "README.md"
