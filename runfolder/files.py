"""The run folder's format: every file a run folder can hold, which layer
writes it and what it holds (``FILES``), and ``RunFolder``, a folder's
files by what they hold.

The one place a run-folder file name is spelled in Python.  The C loader
(collectors/*.c) writes its own files by name; tests/test_run_folder.py
checks them against the rows whose writer is ``COLLECTOR``, and that a
real run folder holds nothing this table does not list.  docs/run-folder.md
lists the files from it (`make docs`).

Pure (stdlib only), so that analysis and viz read folders through it too.
"""
from __future__ import annotations

import fnmatch
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


# where run folders go without -o, under the working directory (the plain
# command's; the benchmarks put their traced runs there too)
RUNS_DIR = Path("runs")

# who writes a file
COLLECTOR = "collector"
TRACER = "tracer"
WORKLOAD = "workload"
ANALYSIS = "analysis"
VIZ = "viz"
WRITERS = {
    COLLECTOR: "walscope-collect, the C loader (collectors/*.c)",
    TRACER: "the Python side that drives it (collectors/*.py; runners/command/plan.py, record.py)",
    WORKLOAD: "the traced command itself, which finds the folder in $WALSCOPE_RUN_DIR",
    ANALYSIS: "analysis/ (again offline: `walscope analyse`)",
    VIZ: "viz/ (flame graphs, the report)",
}

# the collector's record files, one per record type (struct ws_*_rec in
# probes/walscope.h), in ws_rec_type order
WRITES_BIN = "writes.bin"
IO_BIN = "io.bin"
SCHED_BIN = "sched.bin"
OPEN_BIN = "open.bin"
SAMPLES_BIN = "samples.bin"
TASKS_BIN = "tasks.bin"
WALL_BIN = "wall.bin"
OBJECTS_BIN = "objects.bin"
# the maps the collector dumps at exit, its report, its windows
STACKS_BIN = "stacks.bin"
OFFCPU_BIN = "offcpu.bin"
COLLECTOR_JSON = "collector.json"
COUNTERS_JSON = "counters.json"       # while it runs, with --live-counters
WINDOWS_TSV = "windows.tsv"
# the tracer's
COLLECTOR_LOG = "collector.log"
# libc's functions probed for good to count every log sync
# (collectors/log_syncs.py); collector.json's attach list names each
# probe "always <function>"
LOG_SYNC_FUNCTIONS = ("fdatasync", "fsync")
ATTACH_TSV = "attach.tsv"
ATTACH_FOUND_TSV = "attach-*.tsv"      # attach-1.tsv, attach-2.tsv, ...
LAYOUT_JSON = "layout.json"
RUN_JSON = "run.json"
CALIBRATION_JSON = "calibration.json"
SYMBOLS_JSON = "symbols.json"
MAPS_JSON = "maps.json"
FDS_JSON = "fds.json"
COMMAND_LOG = "command.log"
PERF_DATA = "perf.data"
PERF_LOG = "perf.log"
PERF_SCRIPT_TXT = "perf-script.txt"
# the workloads' own (runners/workloads/sqlite_tpcc, runners/workloads/postgres)
TXLOG_CSV = "txlog.csv"
TXLOG_JSON = "txlog.json"
PGBENCH_RESULT_JSON = "pgbench-result.json"
PGBENCH_LOGS = "pgbench-*"             # a folder
# the analysis'
WRITES_PARQUET = "writes.parquet"
IO_PARQUET = "io.parquet"
SCHED_PARQUET = "sched.parquet"
SAMPLES_PARQUET = "samples.parquet"
THREADS_PARQUET = "threads.parquet"
SUMMARY_JSON = "summary.json"
# viz's
REPORT_HTML = "report.html"
FLAME_SVGS = "flame-*.svg"

# the record files the analysis reads, by struct name (objects.bin is the
# tracer's: the objects it inspected are in its own report)
RECORD_FILES = {
    "ws_write_rec": WRITES_BIN,
    "ws_io_rec": IO_BIN,
    "ws_sched_rec": SCHED_BIN,
    "ws_open_rec": OPEN_BIN,
    "ws_sample_rec": SAMPLES_BIN,
    "ws_task_rec": TASKS_BIN,
    "ws_wall_rec": WALL_BIN,
}
# the Parquet tables, by table name (the dataset's partitions)
TABLES = {"writes": WRITES_PARQUET, "io": IO_PARQUET, "sched": SCHED_PARQUET,
          "samples": SAMPLES_PARQUET, "threads": THREADS_PARQUET}
# kinds of folded stacks: KIND.folded (analysis), flame-KIND.svg (viz)
FOLDED = {
    "phase": "each write's components as frames (us, compensated)",
    "offcpu": "run-queue waits and syscall latencies per thread (us), from the records",
    "offcpu-stacks": "off-CPU time per kernel (and user) stack, blocked and runnable (us)",
    "oncpu": "on-CPU samples by thread, component and symbol",
    "oncpu-stacks": "on-CPU samples' stacks (--stacks)",
}


@dataclass(frozen=True)
class RunFile:
    """One file of the table: its name (a glob for a family of files),
    which layer writes it, what it holds."""
    name: str
    writer: str
    holds: str

    def matches(self, name: str) -> bool:
        return fnmatch.fnmatchcase(name, self.name)


FILES: tuple[RunFile, ...] = (
    RunFile(WRITES_BIN, COLLECTOR, "write records (struct ws_write_rec), appended as they arrive"),
    RunFile(IO_BIN, COLLECTOR, "syscall records (struct ws_io_rec)"),
    RunFile(SCHED_BIN, COLLECTOR, "run-queue waits and migrations (struct ws_sched_rec)"),
    RunFile(OPEN_BIN, COLLECTOR, "opens, closes and unlinks of files (struct ws_open_rec)"),
    RunFile(SAMPLES_BIN, COLLECTOR, "perf samples of traced threads (struct ws_sample_rec)"),
    RunFile(TASKS_BIN, COLLECTOR, "threads' names, forks, exits and time accounting "
                                  "(struct ws_task_rec)"),
    RunFile(WALL_BIN, COLLECTOR, "wall sweeps: each traced thread's state, syscall in "
                                 "progress and kernel accounting (struct ws_wall_rec)"),
    RunFile(OBJECTS_BIN, COLLECTOR, "executable objects met during the run "
                                    "(struct ws_object_rec)"),
    RunFile(STACKS_BIN, COLLECTOR, "the stack map at exit (struct ws_stack_ent)"),
    RunFile(OFFCPU_BIN, COLLECTOR, "the off-CPU map at exit (struct ws_offcpu_ent)"),
    RunFile(COLLECTOR_JSON, COLLECTOR, "its counters (losses, probe hits), records per file, "
                                       "errors, attach results"),
    RunFile(COUNTERS_JSON, COLLECTOR, "walscope serve: the counters, rewritten every second "
                                      "while it runs"),
    RunFile(WINDOWS_TSV, COLLECTOR, "window and budget modes: the windows as they ran, "
                                    "the budget's estimates"),
    RunFile(COLLECTOR_LOG, TRACER, "the collector's stderr"),
    RunFile(ATTACH_TSV, TRACER, "the uprobes attached at start"),
    RunFile(ATTACH_FOUND_TSV, TRACER, "the uprobes attached for each object found during "
                                      "the run"),
    RunFile(LAYOUT_JSON, TRACER, "the record layouts (BTF of walscope's types) the records "
                                 "were written with"),
    RunFile(RUN_JSON, TRACER, "how the run was traced (engine, mode, sampling, stacks), "
                              "how it ended"),
    RunFile(CALIBRATION_JSON, TRACER, "the probe costs compensation uses (absent with "
                                      "--no-calibrate)"),
    RunFile(SYMBOLS_JSON, TRACER, "names of the addresses the records refer to, resolved "
                                  "while the objects were at hand; each user sample's "
                                  "callers, unwound from its stack copy"),
    RunFile(MAPS_JSON, TRACER, "the processes' memory maps the symbols were read through"),
    RunFile(FDS_JSON, TRACER, "files open when tracing began (-p)"),
    RunFile(COMMAND_LOG, TRACER, "the workload's stdout and stderr"),
    RunFile(PERF_DATA, TRACER, "--stacks dwarf: perf's samples"),
    RunFile(PERF_LOG, TRACER, "--stacks dwarf: perf record's output"),
    RunFile(PERF_SCRIPT_TXT, TRACER, "--stacks dwarf: perf's samples' symbolized stacks"),
    RunFile(TXLOG_CSV, WORKLOAD, "its own transaction log, which labels the rows "
                                 "(the TPC-C-like driver's: tid, start_ns, end_ns, type[, ok])"),
    RunFile(TXLOG_JSON, WORKLOAD, "its own summary of the run (the TPC-C-like driver's), "
                                  "for the throughput"),
    RunFile(PGBENCH_RESULT_JSON, WORKLOAD, "pgbench's result, the server's WAL and "
                                           "transaction counters' deltas (the pgbench runner's)"),
    RunFile(PGBENCH_LOGS, WORKLOAD, "a folder of pgbench's own per-transaction logs "
                                    "(the pgbench runner's, pgbench -l)"),
    RunFile(WRITES_PARQUET, ANALYSIS, "one row per write: each engine's row (a write "
                                      "batch, a transaction, a commit)"),
    RunFile(IO_PARQUET, ANALYSIS, "one row per traced syscall, with file path, kind and "
                                  "thread name"),
    RunFile(SCHED_PARQUET, ANALYSIS, "run-queue waits and migrations of traced threads, "
                                     "with core types"),
    RunFile(SAMPLES_PARQUET, ANALYSIS, "perf samples classified by component (sample mode, "
                                       "sampled splits)"),
    RunFile(THREADS_PARQUET, ANALYSIS, "each traced thread's on-CPU, runnable and blocked "
                                       "time from the kernel's accounting"),
    RunFile(SUMMARY_JSON, ANALYSIS, "the table's figures and more"),
    *(RunFile(f"{kind}.folded", ANALYSIS, f"folded stacks: {what}")
      for kind, what in FOLDED.items()),
    RunFile(FLAME_SVGS, VIZ, "a flame graph of each folded file (flame-KIND.svg)"),
    RunFile(REPORT_HTML, VIZ, "the report"),
)


def file_of(name: str) -> RunFile | None:
    """The table's row for a file or folder name; None if it has none."""
    return next((f for f in FILES if f.matches(name)), None)


def written_by(writer: str) -> list[str]:
    """The names (globs for families) a layer writes, in table order."""
    return [f.name for f in FILES if f.writer == writer]


class RunFolderError(ValueError):
    """A file of the run folder is unreadable: one line."""


class _File:
    """A RunFolder attribute: the path of one file of the table."""

    def __init__(self, name: str):
        if file_of(name) is None or "*" in name:
            raise KeyError(f"{name} is not one file of the run folder's table")
        self.name = name

    def __get__(self, folder: RunFolder, owner: type | None = None) -> Path:
        return folder.dir / self.name


class RunFolder:
    """A run folder: the path of each file by what it holds, and readers of
    its JSON files."""

    writes_bin = _File(WRITES_BIN)
    stacks_bin = _File(STACKS_BIN)
    offcpu_bin = _File(OFFCPU_BIN)
    collector_json = _File(COLLECTOR_JSON)
    counters_json = _File(COUNTERS_JSON)
    windows_tsv = _File(WINDOWS_TSV)
    collector_log = _File(COLLECTOR_LOG)
    attach_tsv = _File(ATTACH_TSV)
    layout_json = _File(LAYOUT_JSON)
    run_json = _File(RUN_JSON)
    calibration_json = _File(CALIBRATION_JSON)
    symbols_json = _File(SYMBOLS_JSON)
    maps_json = _File(MAPS_JSON)
    fds_json = _File(FDS_JSON)
    command_log = _File(COMMAND_LOG)
    perf_data = _File(PERF_DATA)
    perf_script_txt = _File(PERF_SCRIPT_TXT)
    txlog_csv = _File(TXLOG_CSV)
    txlog_json = _File(TXLOG_JSON)
    writes_parquet = _File(WRITES_PARQUET)
    io_parquet = _File(IO_PARQUET)
    sched_parquet = _File(SCHED_PARQUET)
    samples_parquet = _File(SAMPLES_PARQUET)
    threads_parquet = _File(THREADS_PARQUET)
    summary_json = _File(SUMMARY_JSON)
    report_html = _File(REPORT_HTML)

    def __init__(self, path: str | os.PathLike):
        self.dir = Path(path)

    def __repr__(self) -> str:
        return f"RunFolder({str(self.dir)!r})"

    # families of files
    def records(self, struct: str) -> Path:
        """The record file of a record struct (ws_write_rec ...)."""
        return self.dir / RECORD_FILES[struct]

    def table(self, name: str) -> Path:
        """A Parquet table by name (writes, io, sched, samples, threads)."""
        return self.dir / TABLES[name]

    def attach_found(self, n: int) -> Path:
        """The uprobes of the n-th object found during the run (from 1)."""
        return self.dir / ATTACH_FOUND_TSV.replace("*", str(n))

    def folded(self, kind: str) -> Path:
        """KIND.folded: folded stacks of one kind (FOLDED)."""
        if kind not in FOLDED:
            raise KeyError(f"{kind}: not a kind of folded stacks ({', '.join(FOLDED)})")
        return self.dir / f"{kind}.folded"

    def flame_svg(self, kind: str) -> Path:
        """flame-KIND.svg: the flame graph of KIND.folded."""
        self.folded(kind)   # a kind of the table
        return self.dir / FLAME_SVGS.replace("*", kind)

    def flame_svgs(self) -> list[Path]:
        """The flame graphs rendered, by name."""
        return sorted(self.dir.glob(FLAME_SVGS))

    def exists(self, name: str | None = None) -> bool:
        """The folder (name None), or one file of it by name, is there."""
        if name is not None and file_of(name) is None:
            raise KeyError(f"{name} is not a file of the run folder's table")
        return (self.dir / name if name is not None else self.dir).exists()

    def has_records(self) -> bool:
        """Any record file the analysis reads is there."""
        return any(self.records(s).exists() for s in RECORD_FILES)

    # readers
    def run_info(self) -> dict[str, Any]:
        """run.json, or {} for a folder whose tracer wrote none."""
        return self._json_or(self.run_json, {})

    def summary(self) -> dict[str, Any]:
        """summary.json; FileNotFoundError before the folder is analysed,
        ValueError when it is not JSON."""
        return json.loads(self.summary_json.read_text())

    def calibration(self) -> dict[str, Any] | None:
        """calibration.json's figures; None when traced with --no-calibrate."""
        return self._json_or(self.calibration_json, None)

    def collector_report(self) -> dict[str, Any]:
        """collector.json; {} when the collector died before writing it
        (absent, or cut short)."""
        try:
            return json.loads(self.collector_json.read_text())
        except (OSError, ValueError):
            return {}

    def live_counters(self) -> dict[str, Any]:
        """counters.json: {"ts_ns", "counters"} as the collector last wrote
        it while running (walscope serve); {} before the first."""
        try:
            return json.loads(self.counters_json.read_text())
        except (OSError, ValueError):
            return {}

    def open_files(self) -> dict[str, dict[str, str]]:
        """fds.json: pid -> fd -> path; {} without one."""
        return self._json_or(self.fds_json, {})

    def symbols(self) -> dict[str, Any]:
        """symbols.json: {"user": {pid: {hex ip: name}}, "kernel": {hex ip:
        name}}; {} without one (a run whose tracer died)."""
        return self._json_or(self.symbols_json, {})

    @staticmethod
    def _json_or(path: Path, absent: Any) -> Any:
        """The file's JSON, absent when there is no file."""
        try:
            return json.loads(path.read_text())
        except FileNotFoundError:
            return absent
        except (OSError, ValueError) as e:
            raise RunFolderError(f"{path}: unreadable ({e})") from None
