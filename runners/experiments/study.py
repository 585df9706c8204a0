#!/usr/bin/env python3
"""Redo one of the studies walscope grew out of, from scratch, and write its
folder: studies/<id>-<slug>/ (README.md with the table and the verdicts,
results.json, environment.json, PNG pictures, flame graph SVGs).

    sudo ./runners/study.py 000 [001 ...]    # or: all
    sudo ./runners/study.py 002 --quick      # a small variant (CI), written
                                             # under runs/, never into studies/

The runs go to runs/study-<id>[-quick]/ (a matrix folder: an interrupted
study resumes at the same commit; otherwise its runs start from scratch);
--render-only writes the folder again from those runs.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402
in_venv(str(ROOT / "trace_wal.py"), __file__)   # the project's .venv, whoever starts it

from collectors import topology  # noqa: E402
from probepoints import modes  # noqa: E402
from runners.experiments import run_matrix  # noqa: E402
from runners.experiments.scenario import SCENARIOS, Scenario, ScenarioError, load  # noqa: E402
from runners.experiments.studies import STUDIES  # noqa: E402
from runners.experiments.studies.model import Study  # noqa: E402
from runners.experiments.studies.results import collect  # noqa: E402
from runners.experiments.studies.writeup import head_commit, rejudge, write  # noqa: E402
from runners.command.plan import TraceError  # noqa: E402
from viz.export import ExportError  # noqa: E402


class StudyError(RuntimeError):
    pass


def scenario_for(study: Study, quick: bool) -> Scenario:
    """The study's matrix: its scenario file with the full or quick
    overrides, traced in the study's mode (trace_wal's default if none)."""
    sc = load(SCENARIOS / study.scenario)
    over = study.quick if quick else study.full
    for key in over.get("fixed", {}):
        if key not in sc.fixed:
            raise StudyError(f"study {study.id}: {key!r} is not a fixed value of "
                             f"{study.scenario}")
    for key, vals in over.get("axes", {}).items():
        if key not in sc.axes or not set(map(str, vals)) <= set(map(str, sc.axes[key])):
            raise StudyError(f"study {study.id}: axis {key}={vals} is not in {study.scenario}")
    return dataclasses.replace(
        sc, fixed={**sc.fixed, **over.get("fixed", {})},
        axes={**sc.axes, **over.get("axes", {})},
        fixed_by={**sc.fixed_by, **over.get("fixed_by", {})},
        repeats=over.get("repeats", sc.repeats), mode=study.mode or modes.DEFAULT,
        # a full study traces every round: its traced figures get intervals
        # from repeats, as the untraced ones do
        traced_rounds=over.get("traced_rounds",
                               1 if quick else over.get("repeats", sc.repeats)))


def begin_runs(work: Path, commit: str) -> dict:
    """made.json for a study's runs about to be made in work: they resume
    an interrupted run of this same commit, or else start from scratch (the
    runs of another commit, of a finished run, or of an unknown one are
    removed), so that the commit a README names made every run in it."""
    made_json = work / "made.json"
    made = json.loads(made_json.read_text()) if made_json.exists() else None
    # made.json without "complete" was written after a finished run
    resume = made is not None and made.get("commit") == commit and made.get("complete") is False
    if not resume:
        if work.exists():
            shutil.rmtree(work)
        made = {"minutes": 0.0, "commit": commit, "complete": False}
    work.mkdir(parents=True, exist_ok=True)
    made_json.write_text(json.dumps(made) + "\n")
    return made


def run_study(study: Study, quick: bool, render_only: bool, out: Path | None,
              from_results: bool = False) -> Path:
    if from_results:
        folder = out or ROOT / "studies" / study.folder
        if not (folder / "results.json").exists():
            raise StudyError(f"study {study.id}: no results.json in {folder}")
        return rejudge(study, folder)
    work = ROOT / "runs" / f"study-{study.id}{'-quick' if quick else ''}"
    dest = out or (work / "writeup" if quick else ROOT / "studies" / study.folder)
    t0 = time.monotonic()
    # how long the runs took and the commit that made them, kept beside
    # them for a later --render-only
    made_json = work / "made.json"
    if render_only:
        if not (work / "matrix.parquet").exists():
            raise StudyError(f"study {study.id}: no runs in {work} to render")
        made = json.loads(made_json.read_text()) if made_json.exists() else {}
    else:
        made = begin_runs(work, head_commit())
        run_matrix.run(scenario_for(study, quick), work, study.cpu_types, report=True)
        made.update(minutes=made["minutes"] + (time.monotonic() - t0) / 60, complete=True)
        made_json.write_text(json.dumps(made) + "\n")
    res = collect(study.id, quick, work)
    if dest.exists() and not quick:   # what the runs no longer make must go
        for f in dest.iterdir():
            if f.suffix in (".png", ".svg", ".json"):
                f.unlink()
    return write(study, res, work, dest, made.get("minutes"), made.get("commit"))


def write_index() -> Path:
    """studies/README.md: each study with its claims' verdicts, from the
    folders the full runs wrote."""
    from runners.experiments.studies.results import Results
    from runners.experiments.studies.writeup import verdicts
    lines = ["# Studies", "",
             "<!-- generated by runners/study.py; each folder by its own run -->", "",
             "The five studies walscope grew out of (`../shared/seeds/`), redone on this "
             "project's machine with per-write attribution. Each folder has the question, "
             "the seed's claims and whether they held here, the table (medians of repeated "
             "untraced runs), what the per-write rows add, pictures, and the command that "
             "regenerates it.", "",
             "| study | claims: verdicts here |", "|---|---|"]
    for st in STUDIES.values():
        res_path = ROOT / "studies" / st.folder / "results.json"
        if not res_path.exists():
            lines.append(f"| {st.id}: {st.title} | not run yet |")
            continue
        vs = verdicts(st, Results.load(res_path))
        lines.append(f"| [{st.id}: {st.title}]({st.folder}/README.md) | "
                     + "; ".join(f"{i}. {v.outcome}" for i, v in enumerate(vs, 1)) + " |")
    lines += ["", "Regenerate one with `sudo ./runners/study.py 000` (or all of them: "
              "`make studies`)."]
    path = ROOT / "studies" / "README.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def build_parser() -> argparse.ArgumentParser:
    # the docstring's first paragraph: one sentence over several lines
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("studies", nargs="+", help=f"study ids ({', '.join(STUDIES)}) or all")
    ap.add_argument("--quick", action="store_true",
                    help="a small variant that checks the pipeline (written under runs/)")
    ap.add_argument("--render-only", action="store_true",
                    help="write the study folder again from the runs already made")
    ap.add_argument("--from-results", action="store_true",
                    help="write the study's README again from its folder's results.json "
                         "alone (the runs gone): verdicts and answer by the current rule")
    ap.add_argument("-o", "--output", type=Path,
                    help="write the study folder here (one study only)")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    a = ap.parse_args(argv)
    ids = list(STUDIES) if a.studies == ["all"] else a.studies
    unknown = [i for i in ids if i not in STUDIES]
    if unknown:
        ap.error(f"unknown study {', '.join(unknown)} (choose from {', '.join(STUDIES)} or all)")
    if a.output and len(ids) > 1:
        ap.error("-o takes one study")
    from analysis.heap import keep_heap_small
    keep_heap_small()
    try:
        for i in ids:
            print(run_study(STUDIES[i], a.quick, a.render_only, a.output, a.from_results))
        if not a.quick and not a.output:
            print(write_index())
    except (StudyError, ScenarioError, run_matrix.MatrixError, TraceError,
            topology.TopologyError, ExportError) as e:
        print(f"study: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("study: interrupted; finished cells are kept, rerun to resume",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
