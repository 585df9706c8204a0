"""walscope: every user command behind one program (installed into .venv
by `make venv` as a console script, which setup.sh links from
/usr/local/bin; ./walscope runs it from a clone).

    walscope trace [OPTIONS] -- COMMAND...       trace_wal.py: trace a workload (root)
    walscope analyse RUN...                      analyse run folders again, offline
    walscope report RUN... [-o report.html]      one page comparing runs
    walscope flamegraph RUN... | --diff A B      flame graph SVGs with inferno
    walscope diff A B [-o FILE.html|DIR] [--json]  where two runs differ, by component
    walscope study ID... | all                   regenerate studies/ (root)
    walscope serve -p PID [--listen HOST:PORT]   /metrics for Prometheus, until stopped (root)
    walscope export RUN... DATASET [--host H]    run folders into a dataset
    walscope query NAME DATASET [--engine duckdb|spark] [--format table|csv|parquet] [-o FILE]
    walscope query --list                        the named queries
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Callable

from analysis import dataset as D
from analysis import query as Q
from runfolder.files import RunFolder
from runners.command.entry import quiet_broken_pipe
from runners.command.version import VersionAction

EXAMPLES = """\
examples:
  sudo walscope trace -- db_bench --benchmarks=fillrandom --num=20000 --sync=true
  walscope analyse runs/demo
  walscope report runs/A runs/B -o report.html
  walscope diff runs/A runs/B -o diff.html
  walscope export runs/* fleet/ --host db-17
  walscope query components_per_run fleet/
  walscope query p99_tail fleet/ --format csv -o tail.csv
  walscope query queue_behind_sync fleet/ --engine spark
  walscope query overhead_and_losses s3a://bucket/walscope --engine spark --master spark://head:7077
"""


def _main_of(module: str) -> Callable[[list[str]], int]:
    """The main() of the module a command hands its arguments to,
    imported only when that command runs."""
    def run(argv: list[str]) -> int:
        return importlib.import_module(module).main(argv)
    return run


# command -> (what it does, the module whose main() parses and runs it)
DELEGATED: dict[str, tuple[str, str]] = {
    "trace": ("trace a workload: trace_wal.py's options (root)", "runners.command.cli"),
    "analyse": ("analyse run folders again, offline (no root)", "runners.command.analyse"),
    "report": ("build report.html from run folders, or --dataset", "viz.report"),
    "flamegraph": ("render a run folder's flame graphs (or --diff A B)", "viz.flamegraph"),
    "study": ("run a study from studies/ again (root)", "runners.study"),
    "serve": ("serve a running server's write latency at /metrics, for Prometheus "
              "(root)", "runners.command.serve"),
}


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="walscope", description="Where does each write's latency "
                      "go: trace, analyse, report, and gather runs into a dataset.",
                      epilog=EXAMPLES,
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=VersionAction)
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=OneLineParser,
                           metavar="COMMAND")
    for name, (what, _) in DELEGATED.items():
        d = sub.add_parser(name, help=what, add_help=False)
        d.add_argument("args", nargs=argparse.REMAINDER,
                       help=f"see `walscope {name} --help`")
    e = sub.add_parser("export", help="copy analysed run folders into a dataset")
    e.add_argument("paths", nargs="+", type=Path, metavar="RUN... DATASET")
    e.add_argument("--host", help="host name (default: the one the tracer recorded)")
    f = sub.add_parser("diff", help="where two runs' latencies differ, by component")
    f.add_argument("runs", nargs=2, type=Path, metavar="RUN", help="run folders A and B")
    f.add_argument("-o", "--output", type=Path, help="FILE.svg, FILE.html (table and "
                   "differential flame graph) or a folder")
    f.add_argument("--json", action="store_true", help="print JSON, not the table")
    f.add_argument("--kind", choices=("phase", "offcpu", "offcpu-stacks"), default="phase",
                   help="the folded stacks the flame graph compares (default phase)")
    f.add_argument("--band", type=float, default=0.001, metavar="F",
                   help="the p99's writes: ranks within +-F of it, 3 a side at least "
                   "(default 0.001)")
    q = sub.add_parser("query", help="run a named query (or SQL) on a dataset")
    q.add_argument("name", nargs="?", help=f"one of: {', '.join(Q.names())}; or SQL")
    q.add_argument("dataset", nargs="?", help="dataset folder (Spark: also a URL)")
    q.add_argument("--list", action="store_true", help="list the named queries")
    q.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb")
    q.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    q.add_argument("--format", choices=("table", "csv", "parquet"), default="table",
                   help="table (default; leaves out the columns with no value in any "
                   "row, such as other engines' components), csv or parquet")
    q.add_argument("-o", "--output", type=Path, help="file (default: stdout; "
                   "parquet needs one)")
    return p


def not_a_run(path: Path) -> str | None:
    """Why path is no run folder (`walscope export runs/* DIR` meets study
    folders and plain files), or None."""
    if not path.is_dir():
        return "not a folder" if path.exists() else "no such file or folder"
    f = RunFolder(path)
    if not (f.has_records() or f.run_json.exists() or f.summary_json.exists()):
        return "not a run folder (no records, run.json or summary.json)"
    return None


def export(args: argparse.Namespace) -> int:
    if len(args.paths) < 2:
        raise D.DatasetError("give one or more run folders and then the dataset folder")
    *paths, dataset = args.paths
    runs = []
    for r in paths:     # each skipped, said so, before any is exported
        why = not_a_run(r)
        if why:
            print(f"walscope export: skipping {r}: {why}", file=sys.stderr)
        else:
            runs.append(r)
    if not runs:
        raise D.DatasetError("no run folder to export")
    for r in runs:
        rows = D.export(r, dataset, host=args.host)
        print(f"{r} -> {dataset}: " + ", ".join(f"{t} {n}" for t, n in rows.items()))
    return 0


def query(args: argparse.Namespace) -> int:
    if args.list:
        for n in Q.names():
            print(f"{n:<24}{Q.describe(n)}")
        return 0
    if not args.name or not args.dataset:
        raise Q.QueryError("give a query name (or SQL) and a dataset (--list names them)")
    text = Q.text_of(args.name)     # an unknown name, before any engine starts
    if args.engine == "spark":
        df = Q.run_spark(args.dataset, text, Q.spark_session(args.master))
    else:
        df = Q.run_duckdb(Path(args.dataset), text)
    if args.format == "parquet":
        if not args.output:
            raise Q.QueryError("--format parquet needs -o FILE")
        df.to_parquet(args.output, index=False)
    elif args.format == "csv":
        text = df.to_csv(index=False)
        args.output.write_text(text) if args.output else sys.stdout.write(text)
    else:
        # a column no row has a value in (another engine's component) is
        # left out of the table, and said so; csv and parquet keep them all
        shown = df.dropna(axis=1, how="all") if len(df) else df
        text = shown.to_string(index=False) + "\n"
        args.output.write_text(text) if args.output else sys.stdout.write(text)
        if len(shown.columns) < len(df.columns):
            print(f"({len(df.columns) - len(shown.columns)} columns with no value in any row "
                  "left out, such as the components of engines no run traced: "
                  "--format csv has them)", file=sys.stderr)
    return 0


def diff(args: argparse.Namespace) -> int:
    from analysis import diff as DF
    from viz import diff as VD, flamegraph
    a, b = DF.load_run(args.runs[0]), DF.load_run(args.runs[1])
    DF.check_comparable(a, b)
    for r in args.runs if args.output else ():   # the flame graph's input, first
        VD.folded_of(r, args.kind)
    d = {"answers": DF.answers(a.summary, b.summary), **DF.decompose(a, b, band=args.band)}
    table = VD.format_table(d)
    sys.stdout.write(VD.to_json(d) if args.json else table + "\n")
    if args.output:
        try:
            for p in VD.write_outputs(d, table, *args.runs, args.output, args.kind):
                print(p, file=sys.stderr)
        except flamegraph.RenderError as e:
            raise DF.DiffError(str(e)) from None
    return 0


@quiet_broken_pipe
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    if not argv:
        parser.print_help(sys.stderr)
        return 2
    if argv[0] in DELEGATED:
        return _main_of(DELEGATED[argv[0]][1])(argv[1:])
    args = parser.parse_args(argv)
    if args.cmd == "diff":
        from analysis.diff import DiffError
        try:
            return diff(args)
        except DiffError as e:
            print(f"walscope diff: {e}", file=sys.stderr)
            return 1
    try:
        return export(args) if args.cmd == "export" else query(args)
    except (D.DatasetError, Q.QueryError) as e:
        print(f"walscope: {e}", file=sys.stderr)
        return 1
