"""PostgreSQL: a row is one transaction of a backend that wrote a commit
or abort record, from StartTransaction to the end of its commit (USDT
transaction__start .. transaction__commit/abort); probes/postgres.h and
probes/postgres.bpf.h are its BPF part.

Group commit, PostgreSQL's way: the backend that gets WALWriteLock
writes and syncs the WAL for everyone whose commit record is in the
buffers; the others wait in LWLockAcquireOrWait (wal_lock_wait) and find
their record flushed.  The queue split (queue_behind_sync ...) measures
that wait against the other backends' WAL I/O, as for RocksDB's
followers."""
from __future__ import annotations

from engines.base import Component, Engine


def io_component(io: str, kind: str) -> str | None:
    """probes/postgres.bpf.h's postgres_sys_comp: WAL segments, anything else."""
    if kind == "wal":
        return f"wal_{io}_io"
    return "buffer_write_io" if io == "write" else "data_sync_io"


ENGINE = Engine(
    grouped=True,
    order=30,
    name="postgres", title="PostgreSQL", ws_engine="WS_ENGINE_POSTGRES",
    comp_enum="ws_postgres_comp", comp_prefix="PG_", phase_enum="ws_postgres_phase",
    row="transaction", mark=b"XLogInsertRecord",
    components=(
        Component("wal_lock_wait", "#9467bd",
                  "waiting for WALWriteLock in XLogFlush (LWLockAcquireOrWait): another "
                  "backend is writing and syncing the WAL, usually this commit's too"),
        Component("wal_sync_io", "#d62728", "fdatasync/fsync of a WAL segment (pg_wal/)"),
        Component("wal_write_io", "#ff7f0e", "write(2) family on a WAL segment"),
        Component("wal_flush", "#e7ba52",
                  "XLogFlush's own time: waiting for WAL insertions to finish, bookkeeping"),
        Component("wal_insert", "#8c564b",
                  "XLogInsertRecord: copying WAL records into the WAL buffers"),
        Component("executor", "#2ca02c", "PortalRun: executing statements, less what is above"),
        Component("buffer_write_io", "#e7969c",
                  "writes to relation or SLRU files: dirty buffers this backend evicted"),
        Component("data_sync_io", "#843c39", "fsync of a relation or other non-WAL file"),
        Component("lock_wait", "#bcbd22",
                  "heavyweight (row, table) lock waits: lock__wait__start to __done",
                  "USDT `lock__wait__start`..`lock__wait__done`"),
        Component("lwlock_wait", "#17becf",
                  "lightweight-lock waits (PGSemaphoreLock: WAL insertion locks, "
                  "buffer content locks, group xid clearing), not WALWriteLock's"),
        Component("sleep", "#7b4173",
                  "pg_usleep inside the transaction: commit_delay, spinlock back-off"),
        Component("client_wait", "#c7c7c7",
                  "secure_read: waiting for the client's next statement (BEGIN ... END)"),
    ),
    io_component=io_component,
    other="parse, plan, the protocol and the rest of the backend's own work",
    resolver="engines.postgres.resolve",
    queue="wal_lock_wait",
    flag_columns=(("rollback", "rollback"), ("during_checkpoint", "checkpoint")),
    flame_root="transaction",
    flame_group="role",
    roles=("synced its own commit", "found it synced"),
    frames=(
        ("other", ("[parse, plan, protocol]",)),
        ("client_wait", ("[waiting for the client]",)),
        ("executor", ("PortalRun",)),
        ("wal_insert", ("PortalRun", "XLogInsertRecord")),
        ("lwlock_wait", ("[lightweight lock wait]",)),
        ("lock_wait", ("PortalRun", "[lock wait]")),
        ("wal_flush", ("CommitTransaction", "XLogFlush")),
        ("queue_behind_sync", ("CommitTransaction", "XLogFlush", "WALWriteLock",
                               "[behind another's sync]")),
        ("queue_behind_wal_write", ("CommitTransaction", "XLogFlush", "WALWriteLock",
                                    "[behind another's WAL write]")),
        ("queue_other", ("CommitTransaction", "XLogFlush", "WALWriteLock", "[waiting]")),
        ("wal_write_io", ("CommitTransaction", "XLogFlush", "XLogWrite", "write")),
        ("wal_sync_io", ("CommitTransaction", "XLogFlush", "issue_xlog_fsync", "fdatasync")),
        ("buffer_write_io", ("[buffer write]",)),
        ("data_sync_io", ("[data file sync]",)),
        ("sleep", ("pg_usleep",)),
        ("sched_runq", ("[runnable]",)),
    ),
)
