-- Probe overhead removed and events lost, per run
SELECT host, run, mode, engine, writes,
       overhead_per_write_ns / 1e3 AS overhead_per_write_us,
       overhead_share,
       lost_events, tracking_gaps, partial_run,
       kernel, cpu_model,
       -- each engine's version; `make docs` writes them from engines/
       -- gen:engine_versions
       rocksdb_version, sqlite_version, postgres_version, innodb_version, logsync_version
       -- /gen:engine_versions
FROM runs
ORDER BY host, run
