"""A throwaway PostgreSQL cluster and a pgbench run against it, with the
server's own WAL and transaction counters before and after: the workload
walscope traces, and the truth its PostgreSQL figures are checked against.

    python3 -m runners.workloads.postgres prepare DIR [--scale N]
    python3 -m runners.workloads.postgres run DIR [--out RESULT.json] -- PGBENCH_ARGS...
    python3 -m runners.workloads.postgres bench [--keep] [--scale N] -- PGBENCH_ARGS...
    python3 -m runners.workloads.postgres start DIR | stop DIR

Stdlib only.  docs/postgres.md says what each command does and what the
result file holds.
"""
