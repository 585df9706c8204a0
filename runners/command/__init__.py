"""What ./trace_wal.py and ./walscope run: one traced run (trace.py:
plan, collect, record), the command lines (cli.py, walscope.py) and
`walscope analyse` (analyse.py)."""
