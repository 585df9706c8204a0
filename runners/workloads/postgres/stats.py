"""The server's own counters around a run: pg_stat_wal, the bench
database's transactions, the checkpointer and background writer, and the
WAL position, each read with its CLOCK_MONOTONIC window; their deltas;
and waiting until a finished run's counters have all been reported.

When a run's counters are complete (PostgreSQL 15, shared-memory stats):
- a backend flushes its pending counters (WAL usage, transactions) when it
  exits, forced (pgstat_shutdown_hook -> pgstat_report_stat(true)), in a
  before_shmem_exit callback, which runs before the on_shmem_exit callback
  that takes it out of pg_stat_activity (pgstat_beshutdown_hook).  While
  it lives it flushes at most once a second (PGSTAT_MIN_INTERVAL, 1000 ms).
  So: once pg_stat_activity lists no client backend but ours, every
  pgbench backend's counters are in.  pgbench does not wait for its
  backends to exit, so the runner does.
- the WAL writer reports its own writes and syncs after every loop
  (walwriter.c: XLogBackgroundFlush(), then pgstat_report_wal(false),
  then a sleep of wal_writer_delay, 25 times longer only after 50 loops
  with nothing to do).  A report can be deferred one loop when the stats
  lock is busy (it does not wait).  An asynchronous commit's WAL is
  written and synced by it within a few loops.
  So: two reads of the counters taken more than a loop apart (twice
  wal_writer_delay: a loop is its sleep plus its own write and fsync) and
  equal mean the WAL writer had nothing left to write or report.
The rule (settle): wait for the backends, then read every SETTLE_LOOPS x
wal_writer_delay until two consecutive reads are equal, at most
SETTLE_TIMEOUT_S; the last read is the run's `after`.
Not covered: the background writer's own WAL flushes (when it writes a
buffer whose WAL is not yet flushed) are not in pg_stat_wal in PostgreSQL
15 as we read its sources (its loop reports only its buffer counters;
PostgreSQL 16 added pgstat_report_wal there).  With the prepared
cluster's data smaller than shared_buffers it has nothing to write
(`bgwriter.buffers_clean` in the deltas says whether it did)."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from runners.workloads.postgres.session import Session

WAL = ("wal_records", "wal_fpi", "wal_bytes", "wal_buffers_full", "wal_write",
       "wal_sync", "wal_write_time", "wal_sync_time")
XACT = ("xact_commit", "xact_rollback")
BGWRITER = ("checkpoints_timed", "checkpoints_req", "buffers_checkpoint",
            "buffers_clean", "buffers_backend", "buffers_backend_fsync")
LSN = ("insert_lsn", "flush_lsn")
FLOATS = {"wal_write_time", "wal_sync_time"}       # milliseconds

SETTLE_LOOPS = 2
SETTLE_TIMEOUT_S = 30.0
BACKENDS_TIMEOUT_S = 60.0
POLL_S = 0.02


def snapshot_sql(database: str) -> str:
    db = database.replace("'", "''")
    return ("select " + ", ".join(f"w.{c}" if c not in FLOATS else f"w.{c}::float8"
                                  for c in WAL) + ", "
            + ", ".join(f"d.{c}" for c in XACT) + ", "
            + ", ".join(f"b.{c}" for c in BGWRITER) + ", "
            "(pg_current_wal_insert_lsn() - '0/0')::bigint, "
            "(pg_current_wal_flush_lsn() - '0/0')::bigint, "
            "pg_walfile_name(pg_current_wal_insert_lsn()) "
            "from pg_stat_wal w, pg_stat_bgwriter b, pg_stat_database d "
            f"where d.datname = '{db}'")


@dataclass(frozen=True)
class Snapshot:
    wal: dict[str, float]
    xact: dict[str, int]
    bgwriter: dict[str, int]
    lsn: dict[str, int]
    walfile: str
    t0_ns: int          # time.monotonic_ns() just before the query was sent
    t1_ns: int          # ... and just after its row came back

    def counters(self) -> tuple:
        return (tuple(self.wal.values()), tuple(self.xact.values()),
                tuple(self.bgwriter.values()), tuple(self.lsn.values()))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def begin(session: Session) -> None:
    """All views in a statement read one snapshot of the counters."""
    session.query("set stats_fetch_consistency = snapshot")


def snapshot(session: Session, database: str) -> Snapshot:
    rows, t0, t1 = session.timed(snapshot_sql(database))
    if len(rows) != 1:
        raise RuntimeError(f"no database {database!r} in pg_stat_database")
    v = rows[0]
    n_wal, n_x, n_b = len(WAL), len(XACT), len(BGWRITER)
    wal = {c: (float(x) if c in FLOATS else int(x)) for c, x in zip(WAL, v)}
    xact = {c: int(x) for c, x in zip(XACT, v[n_wal:])}
    bgw = {c: int(x) for c, x in zip(BGWRITER, v[n_wal + n_x:])}
    rest = v[n_wal + n_x + n_b:]
    return Snapshot(wal=wal, xact=xact, bgwriter=bgw,
                    lsn={"insert_lsn": int(rest[0]), "flush_lsn": int(rest[1])},
                    walfile=rest[2], t0_ns=t0, t1_ns=t1)


def delta(a: Snapshot, b: Snapshot) -> dict[str, dict[str, float]]:
    def d(x: dict, y: dict) -> dict:
        return {k: round(y[k] - x[k], 3) if k in FLOATS else y[k] - x[k] for k in x}
    return {"wal": d(a.wal, b.wal), "xact": d(a.xact, b.xact),
            "bgwriter": d(a.bgwriter, b.bgwriter), "lsn": d(a.lsn, b.lsn)}


def other_backends(session: Session) -> int:
    rows = session.query("select count(*) from pg_stat_activity "
                         "where backend_type = 'client backend' "
                         "and pid <> pg_backend_pid()")
    return int(rows[0][0])


def wait_for_backends(session: Session, timeout: float = BACKENDS_TIMEOUT_S) -> bool:
    """Until no client backend but ours is left (each has flushed its
    counters on the way out); False after timeout."""
    end = time.monotonic() + timeout
    while other_backends(session):
        if time.monotonic() > end:
            return False
        time.sleep(POLL_S)
    return True


def wal_writer_delay_s(session: Session) -> float:
    rows = session.query("select setting::int from pg_settings "
                         "where name = 'wal_writer_delay'")
    return int(rows[0][0]) / 1000.0


@dataclass(frozen=True)
class Settled:
    after: Snapshot
    settled: bool          # two reads a loop apart were equal
    backends_gone: bool    # no client backend but ours was left
    reads: int
    interval_s: float
    waited_ns: int


def settle(session: Session, database: str,
           timeout: float = SETTLE_TIMEOUT_S) -> Settled:
    """The counters once the finished run's are all in (the rule in this
    module's docstring)."""
    t0 = time.monotonic_ns()
    gone = wait_for_backends(session)
    interval = SETTLE_LOOPS * wal_writer_delay_s(session)
    end = time.monotonic() + timeout
    last = snapshot(session, database)
    reads = 1
    while True:
        time.sleep(interval)
        now = snapshot(session, database)
        reads += 1
        if now.counters() == last.counters():
            return Settled(now, True, gone, reads, interval, time.monotonic_ns() - t0)
        last = now
        if time.monotonic() > end:
            return Settled(now, False, gone, reads, interval, time.monotonic_ns() - t0)
