#!/usr/bin/env python3
"""Render a run folder's folded stacks to SVG flame graphs with inferno.

    walscope flamegraph RUN_DIR                 # phase, offcpu, oncpu SVGs
    walscope flamegraph --diff RUN_A RUN_B -o d.svg   # differential (phase)

inferno (crates.io) is built into .output/inferno by setup.sh; the folded
files are canonical, so FlameGraph's flamegraph.pl reads them too.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from runfolder.files import RunFolder

ROOT = Path(__file__).resolve().parent.parent

TITLES = {"phase": "WAL write phases (us, probe overhead compensated)",
          "offcpu": "Off-CPU: runnable and blocked time (us)",
          "offcpu-stacks": "Off-CPU stacks: blocked and runnable time (us)",
          "oncpu": "On-CPU samples by component and symbol",
          "oncpu-stacks": "On-CPU stacks of the traced threads (samples)"}


class RenderError(RuntimeError):
    pass


def inferno(tool: str) -> str:
    local = ROOT / ".output" / "inferno" / "bin" / tool
    if local.exists():
        return str(local)
    found = shutil.which(tool)
    if not found:
        raise RenderError(f"{tool} not found: run ./setup.sh (it builds inferno)")
    return found


def render(folded: Path, svg: Path, title: str, countname: str = "us") -> Path:
    with open(folded) as src, open(svg, "w") as dst:
        p = subprocess.run([inferno("inferno-flamegraph"), "--title", title,
                            "--countname", countname], stdin=src, stdout=dst,
                           stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RenderError(f"inferno-flamegraph failed on {folded}: {p.stderr.strip()}")
    return svg


def folded_files(run_dir: Path) -> dict[str, Path]:
    """kind -> the run's *.folded file (the analysis wrote them)."""
    folder = RunFolder(run_dir)
    return {k: folder.folded(k) for k in TITLES if folder.folded(k).exists()}


def render_run(run_dir: Path) -> dict[str, Path]:
    """flame-<kind>.svg beside each folded file of the run folder."""
    out = {}
    for kind, folded in folded_files(run_dir).items():
        out[kind] = render(folded, RunFolder(run_dir).flame_svg(kind), TITLES[kind],
                           "samples" if kind.startswith("oncpu") else "us")
    return out


def render_diff(a: Path, b: Path, svg: Path, kind: str = "phase") -> Path:
    fa, fb = folded_files(a).get(kind), folded_files(b).get(kind)
    if not fa or not fb:
        raise RenderError(f"no {kind} stacks in one of {a}, {b}")
    diff = svg.with_suffix(".folded")
    with open(diff, "w") as dst:
        p = subprocess.run([inferno("inferno-diff-folded"), str(fa), str(fb)],
                           stdout=dst, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RenderError(f"inferno-diff-folded failed: {p.stderr.strip()}")
    return render(diff, svg, f"{kind}: {b.name} vs {a.name} (red grew)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="walscope flamegraph",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--diff", action="store_true", help="differential of two runs")
    ap.add_argument("-o", "--output", type=Path, help="SVG for --diff")
    a = ap.parse_args(argv)
    try:
        for r in a.runs:
            if not RunFolder(r).writes_parquet.exists():
                raise RenderError(f"{r}: not a walscope run folder")
        if a.diff:
            if len(a.runs) != 2:
                raise RenderError("--diff takes exactly two run folders")
            out = a.output or Path(f"diff-{a.runs[0].name}-{a.runs[1].name}.svg")
            print(render_diff(a.runs[0], a.runs[1], out))
        else:
            for r in a.runs:
                for p in render_run(r).values():
                    print(p)
    except RenderError as e:
        print(f"flamegraph.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
