#!/usr/bin/env python3
"""Redo one of the studies walscope grew out of, from scratch, and write its
folder: studies/<id>-<slug>/ (README.md with the table and the verdicts,
results.json, environment.json, PNG pictures, flame graph SVGs).

    sudo ./runners/study.py 000 [001 ...]    # or: all
    sudo ./runners/study.py 002 --quick      # a small variant (CI), written
                                             # under runs/, never into studies/

The runs go to runs/study-<id>[-quick]/ (a matrix folder: finished cells are
kept, so an interrupted study resumes); --render-only writes the folder
again from those runs.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_PY = ROOT / ".venv" / "bin" / "python"
if VENV_PY.exists() and Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
    os.execv(str(VENV_PY), [str(VENV_PY), str(Path(__file__).resolve())] + sys.argv[1:])
sys.path.insert(0, str(ROOT))

from collectors import topology  # noqa: E402
from runners import defaults, run_matrix  # noqa: E402
from runners.scenario import Scenario, ScenarioError, load  # noqa: E402
from runners.studies import STUDIES  # noqa: E402
from runners.studies.model import Study  # noqa: E402
from runners.studies.results import collect  # noqa: E402
from runners.studies.writeup import write  # noqa: E402
from runners.trace import TraceError  # noqa: E402
from viz.export import ExportError  # noqa: E402


class StudyError(RuntimeError):
    pass


def scenario_for(study: Study, quick: bool) -> Scenario:
    """The study's matrix: its scenario file with the full or quick
    overrides, traced in the study's mode (trace_wal's default if none)."""
    sc = load(ROOT / "runners" / "scenarios" / study.scenario)
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
        repeats=over.get("repeats", sc.repeats), mode=study.mode or defaults.MODE)


def run_study(study: Study, quick: bool, render_only: bool, out: Path | None) -> Path:
    work = ROOT / "runs" / f"study-{study.id}{'-quick' if quick else ''}"
    dest = out or (work / "writeup" if quick else ROOT / "studies" / study.folder)
    t0 = time.monotonic()
    if render_only:
        if not (work / "matrix.parquet").exists():
            raise StudyError(f"study {study.id}: no runs in {work} to render")
    else:
        run_matrix.run(scenario_for(study, quick), work, study.cpu_types, report=True)
    minutes = None if render_only else (time.monotonic() - t0) / 60
    res = collect(study.id, quick, work)
    if dest.exists() and not quick:   # what the runs no longer make must go
        for f in dest.iterdir():
            if f.suffix in (".png", ".svg", ".json"):
                f.unlink()
    return write(study, res, work, dest, minutes)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("studies", nargs="+", help=f"study ids ({', '.join(STUDIES)}) or all")
    ap.add_argument("--quick", action="store_true",
                    help="a small variant that checks the pipeline (written under runs/)")
    ap.add_argument("--render-only", action="store_true",
                    help="write the study folder again from the runs already made")
    ap.add_argument("-o", "--output", type=Path,
                    help="write the study folder here (one study only)")
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
            print(run_study(STUDIES[i], a.quick, a.render_only, a.output))
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
