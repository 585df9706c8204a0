"""RocksDB: a row is one DBImpl::WriteImpl call (a write batch)."""
from __future__ import annotations

from engines.base import Component, Engine


def io_component(io: str, kind: str) -> str | None:
    """Writes to the WAL; syncs of the WAL or its directory (probes/
    rocksdb.bpf.h's rocksdb_sys_comp)."""
    if kind == "wal" or (kind == "dir" and io == "sync"):
        return f"wal_{io}_io"
    return None


ENGINE = Engine(
    grouped=True,
    order=10,
    imports=("_ZN7rocksdb", "rocksdb_"),
    name="rocksdb", title="RocksDB", ws_engine="WS_ENGINE_ROCKSDB",
    comp_enum="ws_rocksdb_comp", comp_prefix="RC_", phase_enum="ws_rocksdb_phase",
    row="write", mark=b"rocksdb_build_git_sha",
    components=(
        Component("queue", "#9467bd",
                  "waiting for the write group's leader (JoinBatchGroup, AwaitState; "
                  "--mode writes: a follower's futex waits and sched_yields)"),
        Component("wal_sync_io", "#d62728",
                  "fsync/fdatasync/sync_file_range of the WAL file or its directory"),
        Component("wal_write_io", "#ff7f0e", "write(2) family on the WAL file"),
        Component("wal_append", "#e7ba52", "building and appending the WAL record in user space"),
        Component("crc", "#8c564b",
                  "checksumming the WAL record (crc32c), sampled out of wal_append by default"),
        Component("memtable", "#2ca02c",
                  "inserting the batch into the memtable (WriteBatchInternal::InsertInto)"),
    ),
    io_component=io_component,
    resolver="engines.rocksdb.resolve",
    queue="queue",
    leader_wait="queue",
    flame_root="WriteImpl",
    flame_group="role",
    roles=("leader", "follower"),
    frames=(
        ("other", ()),
        ("queue_behind_sync", ("JoinBatchGroup", "[behind leader sync]")),
        ("queue_behind_wal_write", ("JoinBatchGroup", "[behind leader WAL write]")),
        ("queue_other", ("JoinBatchGroup", "[waiting]")),
        ("crc", ("WriteToWAL", "AddRecord", "crc32c")),
        ("wal_append", ("WriteToWAL", "AddRecord")),
        ("wal_write_io", ("WriteToWAL", "write", "[kernel]")),
        ("wal_sync_io", ("WriteToWAL", "fdatasync", "[blocked]")),
        ("memtable", ("InsertInto",)),
        ("sched_runq", ("[runnable]",)),
    ),
    role_sources=("EnterAsBatchGroupLeader", "wal_calls"),
    sample_rules=(
        ("crc32c", "crc"),
        ("WriteThread::AwaitState", "queue"),
        ("WriteThread::JoinBatchGroup", "queue"),
        ("WriteThread::", "queue"),
        ("log::Writer", "wal_append"),
        ("WriteToWAL", "wal_append"),
        ("WriteGroupToWAL", "wal_append"),     # the group's WAL call, RocksDB 8+
        ("FlushWAL", "wal_append"),
        ("WritableFileWriter", "wal_append"),
        ("MemTable", "memtable"),
        ("InlineSkipList", "memtable"),
        ("SkipList", "memtable"),
        ("InsertInto", "memtable"),
    ),
    split_symbols=(
        # a write's queue outside its futex waits and yields is the spin of
        # a waiting writer (a leader's group bookkeeping in WriteThread::
        # is not queue)
        ("queue", ("WriteThread::AwaitState", "WriteThread::JoinBatchGroup")),
        # what WriteBatchInternal::InsertInto runs (PerfContext's
        # write_memtable_time): the batch's iteration and its inserter, the
        # skip list, its comparator and arena; outside the WAL call, libc's
        # time in a write is the comparator's memcmp and the arena's memcpy
        ("memtable", ("MemTable", "SkipList", "InsertInto", "WriteBatch::Iterate",
                      "WriteBatchInternal::Iterate", "MemTableInserter", "Arena",
                      "GetLengthPrefixedSlice", "[libc.so", "memcmp", "memcpy", "memmove",
                      # RocksDB's own functions it exports no name for, like
                      # the bytewise comparator (an anonymous namespace)
                      "[librocksdb.so")),
    ),
    # crc is inside wal_append where it was not split out
    cpu_groups=(("memtable", ("memtable",)), ("wal_append+crc", ("wal_append", "crc"))),
    # its flush and compaction threads
    background_threads="rocksdb:",
    report="engines.rocksdb.report",
)
