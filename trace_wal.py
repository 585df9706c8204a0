#!/usr/bin/env python3
"""trace_wal.py - where does each write's latency go?

Traces a RocksDB program (a command it starts, or -p PID) with walscope's
libbpf probes and splits every DBImpl::WriteImpl call into components:
queue, crc, wal_append, wal_write_io, wal_sync_io, memtable, sched_runq and
other (the residual).  Prints a breakdown table and writes a run folder:
writes.parquet, io.parquet, sched.parquet, summary.json, command.log.

Overhead: a uprobe pair costs ~1.3 us where the kernel emulates the probed
instruction and ~11 us where it single-steps it (crc32c::Extend) on this
VM; `--mode full` hits ~10 pairs per write, `--mode writes` ~6, `--mode
sample` none (tracepoints and timed sampling only).  Measured costs are stored in summary.json
(calibration.*) and subtracted per component (components vs components_raw).
"""
import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
VENV_PY = os.path.join(HERE, ".venv", "bin", "python")
if (os.path.exists(VENV_PY) and os.path.realpath(sys.prefix)
        != os.path.realpath(os.path.join(HERE, ".venv"))):
    os.execv(VENV_PY, [VENV_PY, os.path.realpath(__file__)] + sys.argv[1:])
sys.path.insert(0, HERE)

from runners.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
