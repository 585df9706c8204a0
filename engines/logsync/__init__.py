"""The log-sync engine: a commit as its write-ahead log shows it, from
syscalls alone, where an engine is found in an object that names none of
its functions (a SQLite compiled into a stripped library or program).
probes/logsync.h and probes/logsync.bpf.h are its BPF part; it has no
probes, so it splits no CPU time: what is not the log's or the database's
I/O, a lock wait or a run-queue wait is "other".

A row begins at a write or sync of a log by a thread in no other row and
ends at what makes the commit durable: the WAL's sync, a write to a log
opened O_DSYNC or O_SYNC (its own sync: its time is log_sync_io), or the
rollback journal's unlink or truncation.  A WAL sync with no write before it is a
checkpoint's row (during_checkpoint).  A log written 64 times with no
sync ends its row there: a log not synced on commit (SQLite's WAL with
synchronous=NORMAL, RocksDB's default) gives rows of write bursts, not
commits.

It also turns on where no engine is found at all and the user names the
log (--log-file GLOB, collectors/log_files.py): an application's own
log, or an engine walscope does not know."""
from __future__ import annotations

from engines.base import Component, Engine


def io_component(io: str, kind: str) -> str | None:
    """probes/logsync.bpf.h's logsync_sys_comp: the log, anything else."""
    if kind in ("wal", "journal"):
        return f"log_{io}_io"
    return f"data_{io}_io"


ENGINE = Engine(
    order=1000,   # last: only an object no named engine resolves
    name="logsync", title="Log-sync", ws_engine="WS_ENGINE_LOGSYNC",
    comp_enum="ws_logsync_comp", comp_prefix="LS_", phase_enum="",
    row="commit", mark=b"",
    components=(
        Component("log_sync_io", "#d62728",
                  "fsync/fdatasync of the log (a WAL, a rollback journal)"),
        Component("log_write_io", "#ff7f0e", "write(2) family on the log"),
        Component("data_write_io", "#e7969c", "writes to any other file: the database"),
        Component("data_sync_io", "#843c39", "syncs of any other file or a directory"),
        Component("log_lifecycle", "#c49c94",
                  "open, close, unlink, truncate of the log (a rollback journal's end)"),
        Component("lock_wait", "#bcbd22", "fcntl/flock locks and sleeps (a busy handler)"),
    ),
    io_component=io_component,
    other="the engine's own work between its syscalls: from syscalls alone, no CPU split",
    resolver="engines.logsync.resolve",
    log_kinds=("wal", "journal"),
    wal_io=False,   # its log is a WAL or a journal: its components say its I/O
    flag_columns=(("during_checkpoint", "checkpoint"),),
    log_files=True,
    flame_root="commit",
    roles=("synced the log itself", "did not sync it"),
    frames=(
        ("other", ("[between its syscalls]",)),
        ("log_write_io", ("log", "write")),
        ("log_sync_io", ("log", "fsync")),
        ("data_write_io", ("[database write]",)),
        ("data_sync_io", ("[database sync]",)),
        ("log_lifecycle", ("log", "[open, unlink, truncate]")),
        ("lock_wait", ("[lock wait]",)),
        ("sched_runq", ("[runnable]",)),
    ),
)
