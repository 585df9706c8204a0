#!/usr/bin/env python3
"""trace_wal.py - where does each write's latency go?

Traces a RocksDB or SQLite workload (a command it starts, or -p PID) with
walscope's libbpf probes, splits every write (or transaction) into its
components, prints a breakdown table and writes a run folder.  The man
page is docs/trace_wal.8.md; `trace_wal.py --help` lists the options.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from runners.entry import in_venv  # noqa: E402

in_venv(__file__)
from runners.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
