"""One traced run: plan, collect, record.

trace_wal.py and the runners both go through ``trace()``, the one place
that drives every layer, in order: runners/command/plan.py checks the input and
decides what to collect, runners/command/collect.py runs the collector (live,
root) and the workload, runners/command/record.py writes what analysing the raw
records needs (run.json, calibration.json, symbols.json, fds.json,
perf-script.txt), runs the analysis (Parquet, summary.json) and the
views (flame graphs, report.html) and decides the exit status.
"""
from __future__ import annotations

import time

from runners.command.collect import collect
from runners.command.plan import TraceOptions, prepare
from runners.command.record import TraceResult, finish, start_folder


def trace(opts: TraceOptions) -> TraceResult:
    plan = prepare(opts)
    start_folder(plan)
    t0 = time.monotonic()
    got = collect(plan)
    elapsed = time.monotonic() - t0
    return finish(plan, got, elapsed)
