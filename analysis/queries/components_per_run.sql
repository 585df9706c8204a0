-- Mean compensated latency and each component per host, run and engine (us)
SELECT host, run, engine,
       count(*) AS writes,
       avg(dur_adj_ns) / 1e3 AS mean_us,
       -- every engine's components, RocksDB's first (NULL where the row's
       -- engine has no such component); `make docs` writes them from engines/
       -- gen:component_means
       avg(queue_adj_ns) / 1e3 AS queue_us,
       avg(wal_sync_io_adj_ns) / 1e3 AS wal_sync_io_us,
       avg(wal_write_io_adj_ns) / 1e3 AS wal_write_io_us,
       avg(wal_append_adj_ns) / 1e3 AS wal_append_us,
       avg(crc_adj_ns) / 1e3 AS crc_us,
       avg(memtable_adj_ns) / 1e3 AS memtable_us,
       avg(sched_runq_adj_ns) / 1e3 AS sched_runq_us,
       avg(other_adj_ns) / 1e3 AS other_us,
       avg(journal_sync_io_adj_ns) / 1e3 AS journal_sync_io_us,
       avg(journal_write_io_adj_ns) / 1e3 AS journal_write_io_us,
       avg(db_sync_io_adj_ns) / 1e3 AS db_sync_io_us,
       avg(db_write_io_adj_ns) / 1e3 AS db_write_io_us,
       avg(dir_sync_io_adj_ns) / 1e3 AS dir_sync_io_us,
       avg(journal_lifecycle_adj_ns) / 1e3 AS journal_lifecycle_us,
       avg(checkpoint_adj_ns) / 1e3 AS checkpoint_us,
       avg(lock_wait_adj_ns) / 1e3 AS lock_wait_us,
       avg(sql_exec_adj_ns) / 1e3 AS sql_exec_us,
       avg(wal_lock_wait_adj_ns) / 1e3 AS wal_lock_wait_us,
       avg(wal_flush_adj_ns) / 1e3 AS wal_flush_us,
       avg(wal_insert_adj_ns) / 1e3 AS wal_insert_us,
       avg(executor_adj_ns) / 1e3 AS executor_us,
       avg(buffer_write_io_adj_ns) / 1e3 AS buffer_write_io_us,
       avg(data_sync_io_adj_ns) / 1e3 AS data_sync_io_us,
       avg(lwlock_wait_adj_ns) / 1e3 AS lwlock_wait_us,
       avg(sleep_adj_ns) / 1e3 AS sleep_us,
       avg(client_wait_adj_ns) / 1e3 AS client_wait_us,
       avg(log_sync_io_adj_ns) / 1e3 AS log_sync_io_us,
       avg(log_write_io_adj_ns) / 1e3 AS log_write_io_us,
       avg(data_write_io_adj_ns) / 1e3 AS data_write_io_us,
       avg(log_lifecycle_adj_ns) / 1e3 AS log_lifecycle_us
       -- /gen:component_means
FROM writes
GROUP BY host, run, engine
ORDER BY host, run, engine
