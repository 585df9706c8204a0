"""walscope analyse RUN_DIR...: analyse run folders again, offline.

For a folder copied from another host, or one whose tracer died before it
analysed: writes the Parquet tables, folded stacks and summary.json, and
prints the breakdown table.  Needs no root.  (`walscope analyse` also
renders the flame graph SVGs and report.html again: runners/command/analyse.py.)
"""
from __future__ import annotations

import argparse
import errno
import os
import re
import sys
from pathlib import Path
from typing import Callable

from analysis.heap import keep_heap_small
from analysis.run import AnalysisError, analyse
from analysis.table import format_table
from runfolder.records import LayoutError

# the exit status of a run folder analysed whole but whose records are not
# all the run wrote (the table's PARTIAL lines say what was lost)
PARTIAL = 4

EXIT_STATUS = f"""\
exit status:
  0  every run folder analysed, none partial
  1  a folder could not be analysed (not a run folder, unreadable)
  {PARTIAL}  analysed, but a run is partial: a record file cut short or torn,
     the collector or tracer died (the table's PARTIAL lines say what was lost)
"""


def refused(run: Path, e: PermissionError) -> str:
    """What to do about a file of run the user may not read or write: one
    line naming it (a run folder traced as root, analysed as a user).
    pyarrow's error names the file only in its message, in quotes."""
    quoted = re.findall(r"'([^']+)'", str(e))
    name = e.filename or (quoted[0] if quoted else str(run))
    why = os.strerror(e.errno or errno.EACCES)
    if os.path.exists(name) and not os.access(name, os.R_OK):
        return f"{name}: cannot read it ({why}): run with sudo"
    copy = f"~/{run.resolve().name}"
    return (f"{name}: cannot write it ({why}): analyse a copy of the folder "
            f"(cp -r {run} {copy}, then analyse {copy}) or run with sudo")


def main(argv: list[str] | None = None,
         render: Callable[[Path], None] | None = None) -> int:
    """Analyse each folder (then render(folder): its views); the exit
    status above."""
    ap = argparse.ArgumentParser(prog="walscope analyse",
                                 description=__doc__.splitlines()[0],
                                 epilog=EXIT_STATUS,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="run folders")
    ap.add_argument("-q", "--quiet", action="store_true", help="no table")
    a = ap.parse_args(argv)
    keep_heap_small()
    status = 0
    for run in a.runs:
        if not run.is_dir():
            print(f"analysis: {run}: " + ("not a folder" if run.exists()
                                          else "no such folder"), file=sys.stderr)
            return 1
        try:
            summary = analyse(run)
        except PermissionError as e:
            print(f"analysis: {refused(run, e)}", file=sys.stderr)
            return 1
        except (AnalysisError, LayoutError, OSError) as e:
            print(f"analysis: {e}", file=sys.stderr)
            return 1
        if render is not None:
            render(run)
        if not a.quiet:
            print(f"{run}:")
            print(format_table(summary))
        if summary.get("partial_run"):
            if a.quiet:    # (else the table's first lines say it)
                print(f"analysis: {run}: PARTIAL: "
                      + "; ".join(summary.get("partial_why") or ["summary.json partial_run"]),
                      file=sys.stderr)
            status = PARTIAL
    return status


if __name__ == "__main__":
    raise SystemExit(main())
