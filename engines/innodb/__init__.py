"""InnoDB (MariaDB, MySQL): a row is one commit, the server's
ha_commit_trans(THD*, bool) from its outermost entry to its return, kept
if it wrote or synced a file or waited for another thread's log I/O
inside; probes/innodb.h and probes/innodb.bpf.h are its BPF part.

InnoDB exports none of its own functions, so a commit is split by its
syscalls and waits: the redo log's writes and syncs (ib_logfile*,
#innodb_redo/), any other file's, and futex waits inside the commit (its
queue: the group commit, where one thread writes and syncs the log for
the others).  A MyRocks commit runs RocksDB's write inside the same
call: that write is the row (the RocksDB unit's), not the commit."""
from __future__ import annotations

from engines.base import Component, Engine


def io_component(io: str, kind: str) -> str | None:
    """probes/innodb.bpf.h's innodb_sys_comp: the redo log, anything else."""
    return f"log_{io}_io" if kind == "wal" else f"data_{io}_io"


ENGINE = Engine(
    grouped=True,
    order=40,
    name="innodb", title="InnoDB", ws_engine="WS_ENGINE_INNODB",
    comp_enum="ws_innodb_comp", comp_prefix="IC_", phase_enum="ws_innodb_phase",
    row="commit", mark=b"ib_logfile",
    components=(
        Component("queue", "#9467bd",
                  "futex waits inside the commit: behind another thread's redo log "
                  "write or sync (the group commit), or a lock",
                  "futex waits and yields inside `ha_commit_trans`"),
        Component("log_sync_io", "#d62728", "fsync/fdatasync of the redo log (ib_logfile*)"),
        Component("log_write_io", "#ff7f0e", "write(2) family on the redo log"),
        Component("data_write_io", "#e7969c",
                  "writes to any other file: the binary log, data files"),
        Component("data_sync_io", "#843c39", "syncs of any other file"),
        Component("sleep", "#7b4173", "nanosleep inside the commit: a back-off"),
    ),
    io_component=io_component,
    other="the server's own work inside the commit (InnoDB's included: its "
          "functions are not exported, so only its syscalls and waits are split out)",
    resolver="engines.innodb.resolve",
    queue="queue",
    flame_root="commit",
    roles=("synced the log itself", "found it synced"),
    frames=(
        ("other", ("ha_commit_trans",)),
        ("queue_behind_sync", ("ha_commit_trans", "[behind another's log sync]")),
        ("queue_behind_wal_write", ("ha_commit_trans", "[behind another's log write]")),
        ("queue_other", ("ha_commit_trans", "[waiting]")),
        ("log_write_io", ("ha_commit_trans", "redo log", "write")),
        ("log_sync_io", ("ha_commit_trans", "redo log", "fdatasync")),
        ("data_write_io", ("ha_commit_trans", "[other file write]")),
        ("data_sync_io", ("ha_commit_trans", "[other file sync]")),
        ("sleep", ("ha_commit_trans", "[sleep]")),
        ("sched_runq", ("[runnable]",)),
    ),
)
