"""What an engine unit declares: the one place walscope learns an engine.

An engine is a folder, ``engines/<name>/``: its ``__init__.py`` holds an
``ENGINE`` (this module's ``Engine``: names, components, how an object is
recognised, which syscalls are which component) and imports nothing of
walscope's but this package, so every layer may read it; its
``resolve.py`` finds its probe points in an object (the collectors'
layer: it reads ELF files).  Its BPF part is ``probes/<name>.h`` (the
enums the records use) and, where its probes need more than the generic
phase stack, ``probes/<name>.bpf.h``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Component:
    name: str        # lower-case enum name after the engine's prefix
    color: str       # display colour (figures, flame graphs' legend)
    meaning: str     # what its time is, for tables and docs
    # where the BPF side takes its time, for docs/components.md, if neither
    # the unit's probe table (resolve.py) nor its syscall rule says
    where: str = ""


# slots every engine's partition has: the scheduler's and the residual
SCHED_RUNQ = Component("sched_runq", "#1f77b4",
                       "runnable but waiting for a CPU (sched_wakeup to sched_switch)",
                       "`sched_switch`, `sched_wakeup` tracepoints")
OTHER = Component("other", "#7f7f7f", "the rest of the write: time in no other component",
                  "the residual")


@dataclass(frozen=True)
class IoSum:
    """One of summary.json's I/O sums: which syscalls ("write" or "sync":
    the groups the records' layout names; or syscall names), on which file
    kinds, and whether only those inside rows count."""
    syscalls: str | tuple[str, ...]
    kinds: tuple[str, ...]
    inside_rows: bool


# summary.json's "wal" section: the write path's syncs (what
# rocksdb.wal.synced counts), every WAL sync, every WAL write, and
# directory syncs
WAL_IO_SUMS: tuple[tuple[str, IoSum], ...] = (
    ("wal_sync_in", IoSum("sync", ("wal",), True)),
    ("wal_sync_all", IoSum("sync", ("wal",), False)),
    ("wal_write", IoSum("write", ("wal",), False)),
    ("dir_sync", IoSum("sync", ("dir",), False)),
)


@dataclass(frozen=True)
class Section:
    """A unit's own summary.json section (under its name) and table lines.
    ``build`` gets the run's totals: ``rows``, ``flags`` (its flag columns'
    sums), ``calls`` (its calls column's sum), ``io`` (each of io_sums:
    count, sum_ns, bytes) and ``rows_with`` (per component named in
    rows_with: the rows with time in it).  ``lines`` gets the whole
    summary.json and returns the table's lines about it."""
    io_sums: tuple[tuple[str, IoSum], ...]
    rows_with: tuple[str, ...]
    build: Callable[[dict[str, Any]], dict[str, Any]]
    lines: Callable[[dict[str, Any]], list[str]]


@dataclass(frozen=True)
class Engine:
    name: str                 # the records' engine column, summary keys
    title: str                # how a person names it
    ws_engine: str            # its enum ws_engine member (records' engine field)
    comp_enum: str            # the enum of its comp_ns slots ...
    comp_prefix: str          # ... and that enum's member prefix
    phase_enum: str           # the enum its probes' phases come from
    row: str                  # what one row is ("write", "transaction")
    mark: bytes               # bytes found in every object that holds it
    # its own components in display order (SCHED_RUNQ and OTHER follow);
    # a name two engines share keeps one colour (the first unit's)
    components: tuple[Component, ...]
    # (io "write"|"sync", file kind) -> the component of such a syscall's
    # time inside a row, None where it has none: the same rule as its BPF
    # part's syscall classification
    io_component: Callable[[str, str], str | None]
    # what "other" (the residual) holds for this engine
    other: str = OTHER.meaning
    resolver: str = ""        # module with resolve(objects, mode, ...) -> Resolution
    # the component in which a row waits for another row's WAL I/O (split
    # into QUEUE_PARTS by what that writer was doing), None if none
    queue: str | None = None
    # writes.parquet columns from the record's flags: column -> flag name
    # (enum ws_write_flag, WS_WF_<NAME>)
    flag_columns: tuple[tuple[str, str], ...] = ()
    # writes.parquet column of the record's nr_calls, if it means something
    calls_column: str | None = None
    # calibrated costs of its boundary probe pair ("pair" or "sql_pair":
    # sqlite3_step's reads the statement text)
    pair_cost: str = "pair"
    # flame graphs: the frame a row is drawn under, how rows are grouped
    # ("role": leader/follower, "label": the workload's transaction type
    # or the commit style), and each component's frames below the group
    flame_root: str = "write"
    flame_group: str = "role"
    frames: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # what a leader (WS_WF_LEADER) and a follower are, where roles exist
    roles: tuple[str, str] | None = None
    # the component in which a follower waits for its leaders from the start
    # of its row (RocksDB's JoinBatchGroup): the wait-for chain charges it
    # the leaders' probe delay inside it, and the self-check counts it as a
    # wait others' probes lengthen (analysis/chain.py, selfcheck.py; both
    # measured on RocksDB).  None: no such wait, or one the chain cannot
    # place in the row (PostgreSQL's WALWriteLock wait comes at the commit)
    leader_wait: str | None = None
    # where summary.json's groups.source says roles came from: (the probe
    # that names a leader, what --mode writes takes instead); None: no source
    role_sources: tuple[str, str] | None = None
    # its rows carry the WAL I/O sums (WAL_IO_SUMS) in summary.json's "wal";
    # an engine whose section holds its own I/O says False
    wal_io: bool = True
    # the file kinds its log is written to: a row's wal_bytes are theirs
    # (SQLite's rollback journal or its WAL file, by journal mode)
    log_kinds: tuple[str, ...] = ("wal",)
    # its own summary.json section and table lines, if any
    section: Section | None = None
    # its rows are what a workload's own transaction log (txlog.csv) labels
    txlog_labels: bool = False
    # sampling: a demangled-name fragment -> its component (first match wins)
    sample_rules: tuple[tuple[str, str], ...] = ()
    # a sampled split's symbols, where narrower than its component's rules
    split_symbols: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the write path's on-CPU work in groups that samples and windows both
    # tell apart: group -> its components
    cpu_groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the name prefix of the engine's own background threads (not the
    # application's, which issue the rows)
    background_threads: str | None = None
    # its place in the registry: the resolution order (an object holding
    # two engines is taken for the lower) and its enum ws_engine id's
    order: int = 100
    # its rows form groups: a leader does the log I/O its followers wait
    # for (the budget counts the followers: the collector's --grouped-engines)
    grouped: bool = False
    # the prefixes of its API's symbols, as a program using a shared build
    # of it imports them: such a program holds its marks (a shell's
    # messages) without holding the engine, which its library does
    imports: tuple[str, ...] = ()
    # its own report in a workload's output: a module (stdlib only) whose
    # throughput(command_output) -> {"ops_per_s", "source", ...} | None
    # reads it (db_bench's benchmarks)
    report: str = ""
    # a row's style where no workload labels it, for the flame graphs'
    # "label" group: (its flag column, the label where set, where not)
    styles: tuple[str, str, str] | None = None
    # where no engine is found, its rows come from the logs --log-file
    # names (from their syscalls alone): one engine says so
    log_files: bool = False

    def component_names(self) -> list[str]:
        """Display order: its own, then the run queue, then the residual."""
        return [c.name for c in self.components] + [SCHED_RUNQ.name, OTHER.name]

    def meaning(self, comp: str) -> str:
        if comp == OTHER.name:
            return self.other
        if comp == SCHED_RUNQ.name:
            return SCHED_RUNQ.meaning
        return next(c.meaning for c in self.components if c.name == comp)

    @property
    def total_label(self) -> str:
        """The label of a table's line for the whole row (its components'
        sum): "write (total)", "txn (total)"."""
        return "txn (total)" if self.row == "transaction" else f"{self.row} (total)"
