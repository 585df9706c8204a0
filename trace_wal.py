#!/usr/bin/env python3
"""trace_wal.py - where does each write's latency go?

Traces a RocksDB, SQLite or PostgreSQL workload (a command it starts, or -p PID) with
walscope's libbpf probes, splits every write (or transaction) into its
components, prints a breakdown table and writes a run folder.  The man
page is docs/trace_wal.8.md; `trace_wal.py --help` lists the options.
"""
import sys

# Python puts this file's folder (links resolved) first on sys.path
from runners.command.entry import honour_interrupts, in_venv

try:
    honour_interrupts()
    in_venv(__file__)
    if __name__ == "__main__":
        from runners.command.cli import main
        sys.exit(main())
except KeyboardInterrupt:   # Ctrl-C while Python was still loading walscope
    print("walscope: interrupted before tracing began", file=sys.stderr)
    sys.exit(130)
