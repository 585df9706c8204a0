"""walscope analyse RUN_DIR...: analyse run folders again, offline.

For a folder copied from another host, or one whose tracer died before it
analysed: writes the Parquet tables, folded stacks and summary.json, and
prints the breakdown table.  Needs no root.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis.heap import keep_heap_small
from analysis.run import AnalysisError, analyse
from analysis.table import format_table
from collectors.records import LayoutError


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="walscope analyse",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, help="run folders")
    ap.add_argument("-q", "--quiet", action="store_true", help="no table")
    a = ap.parse_args(argv)
    keep_heap_small()
    for run in a.runs:
        try:
            summary = analyse(run)
        except (AnalysisError, LayoutError, OSError) as e:
            print(f"analysis: {e}", file=sys.stderr)
            return 1
        if not a.quiet:
            print(f"{run}:")
            print(format_table(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
