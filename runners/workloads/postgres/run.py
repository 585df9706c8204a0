"""run DIR: the prepared cluster's postmaster as this process's child,
pgbench against it, and the server's counters before and after, into
RESULT.json.

Order: start the postmaster, wait until it accepts connections, read the
counters (`before`), run pgbench, wait until the run's counters are all
reported (stats.settle), read them (`after`), shut the postmaster down
(fast) and wait for it.  Whatever happens, the postmaster is stopped
before this returns; if this process is killed outright it gets SIGINT
from the kernel (cluster.start)."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from runners.workloads.postgres import cluster, owner as owners, pgbench, stats
from runners.workloads.postgres.session import Session

NAME = "runners.workloads.postgres"    # the prefix of its messages
RESULT_NAME = "pgbench-result.json"
FORMAT = "walscope-pgbench-result/1"
# the settings a reader of the result needs, as the runner's session sees
# them (its connection gets the same PGOPTIONS as pgbench's)
SHOWN = ("server_version", "synchronous_commit", "fsync", "wal_level",
         "wal_sync_method", "wal_writer_delay", "commit_delay", "full_page_writes",
         "shared_buffers", "wal_segment_size", "track_wal_io_timing", "autovacuum")


def default_result(data_dir: Path) -> Path:
    """$WALSCOPE_RUN_DIR/pgbench-result.json under trace_wal.py (the run
    folder), else pgbench-result.json beside DIR."""
    run_dir = os.environ.get("WALSCOPE_RUN_DIR")
    return (Path(run_dir) if run_dir else data_dir.parent) / RESULT_NAME


def pgbench_folder(beside: Path, owner: owners.Owner) -> Path:
    """A new folder for pgbench's own files (-l logs), the owner's."""
    beside.mkdir(parents=True, exist_ok=True)
    d = Path(tempfile.mkdtemp(prefix="pgbench-", dir=beside))
    if owner.is_other:
        os.chown(d, owner.uid, owner.gid)
    return d


def settings(session: Session) -> dict[str, str]:
    names = ", ".join(f"'{n}'" for n in SHOWN)
    return {name: value for name, value in session.query(
        f"select name, current_setting(name) from pg_settings where name in ({names})")}


def summary_line(out: pgbench.Outcome, delta: dict[str, dict[str, float]]) -> str:
    """pgbench 100/100 ok, 1482 tps, 1.35 ms; WAL 734 records, 101 writes, 101 syncs"""
    done = "?" if out.processed is None else str(out.processed)
    if out.expected is not None:
        done += f"/{out.expected}"
    failed, tps = out.report.get("failed", 0), out.report.get("tps")
    lat = out.report.get("latency_average_ms")
    w = delta["wal"]
    return (f"pgbench {done} ok" + (f", {failed} failed" if failed else "")
            + (f", {tps:.0f} tps" if tps is not None else "")
            + (f", {lat:.2f} ms" if lat is not None else "")
            + f"; WAL {w['wal_records']} records, {w['wal_write']} writes, "
            f"{w['wal_sync']} syncs")


def run(data_dir: Path, args: list[str], out_path: Path | None) -> int:
    data_dir = data_dir.absolute()
    if not (data_dir / "PG_VERSION").exists():
        raise cluster.ClusterError(f"{data_dir}: not a cluster (no PG_VERSION); "
                                   "make one with prepare")
    owner = owners.of_folder(data_dir)
    port = cluster.port_of(data_dir, owner)
    result = (out_path or default_result(data_dir)).absolute()
    workdir: Path | None = None
    proc = cluster.start(data_dir, owner)
    try:
        workdir = pgbench_folder(result.parent, owner)
        cluster.wait_ready(proc, data_dir, port, owner)
        with Session(data_dir, port, owner) as s:
            stats.begin(s)
            shown = settings(s)
            before = stats.snapshot(s, pgbench.DATABASE)
            outcome = pgbench.run(data_dir, port, owner, args, workdir)
            settled = stats.settle(s, pgbench.DATABASE)
        doc = result_doc(data_dir, port, proc.pid, args, shown, before, settled, outcome)
    finally:
        code = cluster.stop(proc)
        if workdir is not None and not any(workdir.iterdir()):
            workdir.rmdir()
    doc["postmaster_exit"] = code
    doc["pgbench_logs"] = sorted(str(p) for p in workdir.glob("*")) if workdir else []
    result.write_text(json.dumps(doc, indent=1) + "\n")
    if not settled.settled or not settled.backends_gone:
        print(f"{NAME}: warning: the server's counters were still moving "
              f"after {settled.waited_ns / 1e9:.1f} s; the deltas may be short",
              file=sys.stderr)
    if outcome.returncode != 0:
        print(f"{NAME}: pgbench failed (exit {outcome.returncode}): "
              f"{outcome.error_line()}", file=sys.stderr)
        return outcome.returncode
    print(summary_line(outcome, doc["delta"]))
    print(f"result: {result}", file=sys.stderr)
    return 0


def result_doc(data_dir: Path, port: int, pm_pid: int, args: list[str],
               shown: dict[str, str], before: stats.Snapshot, settled: stats.Settled,
               outcome: pgbench.Outcome) -> dict[str, Any]:
    after = settled.after
    return {
        "format": FORMAT,
        "data_dir": str(data_dir),
        "port": port,
        "postmaster_pid": pm_pid,
        "database": pgbench.DATABASE,
        "args": args,
        "pgoptions": os.environ.get("PGOPTIONS", ""),
        "settings": shown,
        "pgbench": outcome.to_json(),
        "before": before.to_json(),
        "after": after.to_json(),
        "delta": stats.delta(before, after),
        "new_wal_segment": before.walfile != after.walfile,
        "settle": {"settled": settled.settled, "backends_gone": settled.backends_gone,
                   "reads": settled.reads, "interval_s": settled.interval_s,
                   "waited_ns": settled.waited_ns},
    }
