"""Regenerate README.md's generated blocks from the code (`make readme`).

Blocks sit between `<!-- gen:NAME -->` and `<!-- /gen:NAME -->`; a test
fails when README.md differs from what this would write.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def usage() -> str:
    os.environ["COLUMNS"] = "80"
    from runners.cli import build_parser
    return "```\n" + build_parser().format_help().rstrip() + "\n```"


def schema() -> str:
    """Parquet columns of each file: the frames built from no records."""
    import tempfile
    from analysis import io, sampling, sched, threadtime
    from analysis import writes as W
    from analysis.compensation import Calibration
    rows = ["| file | columns |", "|---|---|"]
    with tempfile.TemporaryDirectory() as d:
        frames = {"writes.parquet": W.writes_frame(Path(d), Calibration()),
                  "writes.parquet (SQLite)": W.label_transactions(
                      W.writes_frame(Path(d), Calibration(), "sqlite"),
                      W.read_txlog(Path(d) / "none.csv")),
                  "io.parquet": io.io_frame(Path(d)),
                  "sched.parquet": sched.sched_frame(Path(d), {}),
                  "samples.parquet (sample mode)": sampling.samples_frame(Path(d)),
                  "threads.parquet": threadtime.threads_frame(Path(d))}
    for name, df in frames.items():
        rows.append(f"| {name} | " + ", ".join(f"`{c}`" for c in df.columns) + " |")
    return "\n".join(rows)


def faults() -> str:
    """The fault table, from what tests/test_faults.py last recorded."""
    import json
    rows = ["| fault injected | run survived | records lost | probes left attached |",
            "|---|---|---|---|"]
    try:
        data = json.loads((ROOT / "tests" / "results" / "faults.json").read_text())
    except (OSError, ValueError):
        data = []
    for r in data:
        rows.append(f"| {r['fault']} | {'yes' if r['survived'] else 'NO'} | "
                    f"{r['records_lost']} | {r['probes_left']} |")
    return "\n".join(rows)


BLOCKS = {"usage": usage, "schema": schema, "faults": faults}


def render(text: str) -> str:
    for name, fn in BLOCKS.items():
        pat = re.compile(rf"(<!-- gen:{name} -->\n).*?(\n<!-- /gen:{name} -->)", re.S)
        text = pat.sub(lambda m: m.group(1) + fn() + m.group(2), text)
    return text


def main() -> int:
    p = ROOT / "README.md"
    new = render(p.read_text())
    if "--check" in sys.argv:
        return 0 if new == p.read_text() else 1
    p.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
