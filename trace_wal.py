#!/usr/bin/env python3
"""trace_wal.py - where does each write's latency go?

Traces a RocksDB, SQLite or PostgreSQL workload (a command it starts, or -p PID) with
walscope's libbpf probes, splits every write (or transaction) into its
components, prints a breakdown table and writes a run folder.  The man
page is docs/trace_wal.8.md; `trace_wal.py --help` lists the options.
"""
import signal
import sys

# Ctrl-C held from the very first line (a script's background job starts
# with SIGINT ignored; entry.hold_interrupts() says why it is held)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
# Python puts this file's folder (links resolved) first on sys.path
from runners.command.entry import TRACE_WAL, guarded, hold_interrupts, in_venv

if __name__ == "__main__":
    hold_interrupts()    # (pending through the exec into .venv)
    in_venv(__file__)
    sys.exit(guarded(*TRACE_WAL))
