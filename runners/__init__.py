"""What runs walscope, split by job; tests/test_layers.py keeps the imports
one way (experiments may import command; command imports neither of the
others; workloads import nothing of walscope's):

    workloads/    the programs traced: SQLite TPC-C-like, PostgreSQL with
                  pgbench, the RocksDB drivers (zipf_writer, ack_writer);
                  standard library only, nothing of walscope's
    command/      what ./trace_wal.py and ./walscope run: trace() (plan,
                  collect, record), the command lines, `walscope analyse`
    experiments/  matrices, the studies, the durability check: command's
                  trace() on workloads, many times

At the top: study.py (`sudo ./runners/study.py`, as documented: it runs
experiments/study.py) and docs.py (`make docs`, which reads all three).
"""
