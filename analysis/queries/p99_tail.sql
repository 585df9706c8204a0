-- What the slowest 1% of writes (at or above each run's p99) spend their time in (us)
WITH p AS (
    SELECT host, run, percentile_cont(0.99) WITHIN GROUP (ORDER BY dur_adj_ns) AS p99_ns
    FROM writes
    GROUP BY host, run
)
SELECT w.host, w.run,
       min(p.p99_ns) / 1e3 AS p99_us,
       count(*) AS tail_writes,
       avg(w.dur_adj_ns) / 1e3 AS tail_mean_us,
       avg(w.queue_behind_sync_ns) / 1e3 AS behind_sync_us,
       avg(w.queue_adj_ns) / 1e3 AS queue_us,
       avg(w.wal_sync_io_adj_ns) / 1e3 AS wal_sync_io_us,
       avg(w.sched_runq_adj_ns) / 1e3 AS sched_runq_us,
       avg(w.memtable_adj_ns) / 1e3 AS memtable_us,
       avg(w.other_adj_ns) / 1e3 AS other_us
FROM writes w
JOIN p ON w.host = p.host AND w.run = p.run
WHERE w.dur_adj_ns >= p.p99_ns
GROUP BY w.host, w.run
ORDER BY w.host, w.run
