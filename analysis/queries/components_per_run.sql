-- Mean compensated latency and RocksDB components per host, run and engine (us)
SELECT host, run, engine,
       count(*) AS writes,
       avg(dur_adj_ns) / 1e3 AS mean_us,
       avg(queue_adj_ns) / 1e3 AS queue_us,
       avg(wal_sync_io_adj_ns) / 1e3 AS wal_sync_io_us,
       avg(wal_write_io_adj_ns) / 1e3 AS wal_write_io_us,
       avg(wal_append_adj_ns) / 1e3 AS wal_append_us,
       avg(crc_adj_ns) / 1e3 AS crc_us,
       avg(memtable_adj_ns) / 1e3 AS memtable_us,
       avg(sched_runq_adj_ns) / 1e3 AS sched_runq_us,
       avg(other_adj_ns) / 1e3 AS other_us
FROM writes
GROUP BY host, run, engine
ORDER BY host, run, engine
