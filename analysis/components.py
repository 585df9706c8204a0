"""The components a write (RocksDB) or transaction (SQLite) is split into:
their names, display order and colours, for every consumer.

Names come from probes/walscope.h (enum ws_rocksdb_comp, ws_sqlite_comp,
through collectors.records): a component's column in writes.parquet is
``<name>_ns`` (raw), ``<name>_adj_ns`` (compensated) and
``<name>_overhead_ns``; its key in summary.json's ``components`` is the
name.  Nothing else in walscope spells a component list.
"""
from __future__ import annotations

from collectors import records as R

ENGINES = ("rocksdb", "sqlite")

# a follower's queue, split by what its group's leader was doing meanwhile
QUEUE_PARTS = ("queue_behind_sync", "queue_behind_wal_write", "queue_other")

# display colours; a test checks every component of the header has one
COLORS = {
    # RocksDB
    "queue": "#9467bd", "wal_sync_io": "#d62728", "wal_write_io": "#ff7f0e",
    "wal_append": "#e7ba52", "crc": "#8c564b", "memtable": "#2ca02c",
    # SQLite
    "journal_sync_io": "#d62728", "journal_write_io": "#ff7f0e",
    "db_sync_io": "#843c39", "db_write_io": "#e7969c", "dir_sync_io": "#7b4173",
    "journal_lifecycle": "#bcbd22", "checkpoint": "#17becf",
    "lock_wait": "#9467bd", "sql_exec": "#2ca02c",
    # both
    "sched_runq": "#1f77b4", "other": "#7f7f7f",
}

# one order for every table and figure: RocksDB's I/O and queue first, then
# SQLite's, the components both engines have last (a test checks it holds
# every component of the header, once)
DISPLAY_ORDER = ("queue", "wal_sync_io", "wal_write_io", "wal_append", "crc", "memtable",
                 "journal_sync_io", "journal_write_io", "db_sync_io", "db_write_io",
                 "dir_sync_io", "journal_lifecycle", "checkpoint", "lock_wait", "sql_exec",
                 "sched_runq", "other")


# what each component holds, for tables and docs (where its time is taken
# is in probes/: the phase table WS_PHASE_COMPS, syscalls.bpf.h,
# sqlite.bpf.h, sched.bpf.h)
MEANING = {
    "queue": "waiting for the write group's leader (JoinBatchGroup, AwaitState; "
             "--mode writes: a follower's futex waits and sched_yields)",
    "crc": "checksumming the WAL record (crc32c), sampled out of wal_append by default",
    "wal_append": "building and appending the WAL record in user space",
    "wal_write_io": "write(2) family on the WAL file",
    "wal_sync_io": "fsync/fdatasync/sync_file_range of the WAL file or its directory",
    "memtable": "inserting the batch into the memtable (WriteBatchInternal::InsertInto)",
    "sql_exec": "inside sqlite3_step, not in a traced syscall",
    "journal_write_io": "writes to the -journal or -wal file",
    "journal_sync_io": "fsync/fdatasync of the -journal or -wal file",
    "db_write_io": "writes to the database file",
    "db_sync_io": "fsync/fdatasync of the database file",
    "dir_sync_io": "directory open/fsync/close (DELETE mode makes the journal durable)",
    "journal_lifecycle": "open/close/unlink/ftruncate of the journal",
    "checkpoint": "a WAL checkpoint inside the transaction, all of its I/O",
    "lock_wait": "fcntl/flock locks and the busy handler's sleeps",
    "sched_runq": "runnable but waiting for a CPU (sched_wakeup to sched_switch)",
    "other": "the rest of the write: time in no other component",
}


def names(engine: str = "rocksdb") -> list[str]:
    """An engine's components in slot order (slot i of comp_ns)."""
    return R.components(engine)


def io_component(io: str, kind: str, engine: str = "rocksdb") -> str | None:
    """The component of time in a write (io="write") or sync (io="sync")
    syscall on a file of that kind (enum ws_file_kind name); None where the
    engine's write path has none.  The same rules as the BPF side's
    sys_enter (RocksDB) and sqlite_sys_comp (SQLite)."""
    if engine == "sqlite":
        if kind in ("journal", "wal"):
            comp = f"journal_{io}_io"
        elif kind == "db":
            comp = f"db_{io}_io"
        else:
            comp = "dir_sync_io" if kind == "dir" and io == "sync" else None
    elif kind == "wal" or (kind == "dir" and io == "sync"):
        comp = f"wal_{io}_io"
    else:
        comp = None
    assert comp is None or comp in names(engine), comp
    return comp
