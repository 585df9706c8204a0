"""python3 -m runners.workloads.postgres's command line: prepare, run, bench, start,
stop.  Errors are one line on stderr and a non-zero exit status; SIGTERM,
SIGINT or SIGHUP stop the cluster this process started, then exit 128+N."""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from types import FrameType

from runners.workloads.postgres import binaries, cluster, config, owner as owners, run as runs
from runners.workloads.postgres.prepare import prepare
from runners.workloads.postgres.session import QueryError

PROG = "python3 -m runners.workloads.postgres"
EXAMPLES = """examples:
  sudo ./trace_wal.py -- python3 -m runners.workloads.postgres bench -- -c 4 -t 500
  python3 -m runners.workloads.postgres prepare /tmp/pg/data --scale 1
  sudo ./trace_wal.py -- python3 -m runners.workloads.postgres run /tmp/pg/data -- -c 2 -t 50
  python3 -m runners.workloads.postgres run /tmp/pg/data --pgoptions '-c synchronous_commit=off' -- -c 4 -t 200
  python3 -m runners.workloads.postgres start /tmp/pg/data    # prints the postmaster's pid
  python3 -m runners.workloads.postgres stop /tmp/pg/data
everything after -- goes to pgbench (-n, -h DIR and -p PORT are added)"""


class Interrupted(BaseException):
    """A signal asked this process to stop."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def on_signal(signum: int, frame: FrameType | None) -> None:
    """Raise once: a second signal while the cluster stops is ignored."""
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    raise Interrupted(signum)


def scale_value(s: str) -> int:
    v = int(s)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {s}")
    return v


def add_pgoptions(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pgoptions", metavar="OPTIONS",
                   help="PGOPTIONS for the run's sessions, e.g. '-c synchronous_commit=off' "
                   "(default: $PGOPTIONS; trace_wal.py does not pass the environment on)")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A throwaway PostgreSQL cluster and pgbench runs against it, "
        "with the server's WAL and transaction counters before and after "
        "(docs/postgres.md).", epilog=EXAMPLES)
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("prepare", help="make a cluster in DIR (new or empty), "
                       "load pgbench's tables, shut it down")
    p.add_argument("dir", type=Path, metavar="DIR")
    p.add_argument("--scale", type=scale_value, default=1, help="pgbench -i -s (default 1)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a postgresql.conf setting over walscope's (repeatable)")
    r = sub.add_parser("run", help="start DIR's server as a child, run pgbench, "
                       "write RESULT.json, stop the server")
    r.add_argument("dir", type=Path, metavar="DIR")
    r.add_argument("--out", "-o", type=Path, metavar="RESULT.json",
                   help="default: $WALSCOPE_RUN_DIR/pgbench-result.json under "
                   "trace_wal.py, else pgbench-result.json beside DIR")
    add_pgoptions(r)
    b = sub.add_parser("bench", help="prepare in a new temporary folder, run, "
                       "remove the folder")
    add_pgoptions(b)
    b.add_argument("--scale", type=scale_value, default=1, help="pgbench -i -s (default 1)")
    b.add_argument("--keep", action="store_true", help="keep the temporary folder "
                   "(cluster, result, pgbench's logs) and print its name")
    b.add_argument("--out", "-o", type=Path, metavar="RESULT.json",
                   help="default: $WALSCOPE_RUN_DIR/pgbench-result.json under "
                   "trace_wal.py, else in the temporary folder (kept with --keep)")
    s = sub.add_parser("start", help="start DIR's server in the background; print its pid")
    s.add_argument("dir", type=Path, metavar="DIR")
    t = sub.add_parser("stop", help="stop the server started with start")
    t.add_argument("dir", type=Path, metavar="DIR")
    return ap


def split_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """Ours, and pgbench's (everything after the first --)."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def cmd_bench(a: argparse.Namespace, pgbench_args: list[str]) -> int:
    base = Path(tempfile.mkdtemp(prefix="walscope-pg-"))
    try:
        base.chmod(0o711)          # the cluster owner must reach data/
        print(prepare(base / "data", a.scale, {}), file=sys.stderr)
        out = a.out
        if out is None and not os.environ.get("WALSCOPE_RUN_DIR"):
            out = base / runs.RESULT_NAME
        return runs.run(base / "data", pgbench_args, out)
    finally:
        if a.keep:
            print(f"kept: {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
            print(f"removed: {base} (--keep keeps it)", file=sys.stderr)


def cmd_start(data_dir: Path) -> int:
    data_dir = data_dir.absolute()
    owner = owners.of_folder(data_dir)
    port = cluster.port_of(data_dir, owner)
    proc = cluster.start(data_dir, owner, detach=True)
    try:
        cluster.wait_ready(proc, data_dir, port, owner)
    except BaseException:
        cluster.stop(proc)
        raise
    print(proc.pid)
    print(f"postgres {proc.pid} accepting connections: psql -h {data_dir} -p {port} "
          f"-U postgres bench", file=sys.stderr)
    return 0


def cmd_stop(data_dir: Path) -> int:
    pid = cluster.stop_pid(data_dir.absolute())
    if pid is None:
        print(f"{runs.NAME}: {data_dir}: no postmaster running", file=sys.stderr)
        return 1
    print(f"stopped postgres {pid}", file=sys.stderr)
    return 0


def dispatch(a: argparse.Namespace, pgbench_args: list[str]) -> int:
    if a.command == "prepare":
        overrides = dict(config.parse_override(x) for x in a.set)
        print(prepare(a.dir, a.scale, overrides))
        return 0
    if a.command == "run":
        return runs.run(a.dir, pgbench_args, a.out)
    if a.command == "bench":
        return cmd_bench(a, pgbench_args)
    if a.command == "start":
        return cmd_start(a.dir)
    return cmd_stop(a.dir)


def main(argv: list[str] | None = None) -> int:
    ours, pgbench_args = split_args(sys.argv[1:] if argv is None else argv)
    ap = parser()
    a = ap.parse_args(ours)
    if pgbench_args and a.command not in ("run", "bench"):
        ap.error(f"{a.command} takes no pgbench arguments")
    if getattr(a, "pgoptions", None) is not None:
        os.environ["PGOPTIONS"] = a.pgoptions     # pgbench's and our sessions'
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)
    try:
        return dispatch(a, pgbench_args)
    except Interrupted as e:
        print(f"{runs.NAME}: stopped by {signal.Signals(e.signum).name}; "
              "the cluster it started is stopped", file=sys.stderr)
        return 128 + e.signum
    except (cluster.ClusterError, owners.OwnerError, binaries.MissingBinaries,
            QueryError, ValueError, OSError) as e:
        print(f"{runs.NAME}: {e}", file=sys.stderr)
        return 1
