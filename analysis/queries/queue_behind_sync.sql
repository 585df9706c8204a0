-- Runs where waiting behind a group leader's WAL sync is the largest share of write time
WITH s AS (
    SELECT host, run,
           sum(queue_behind_sync_ns) / sum(dur_ns) AS behind_sync_share,
           sum(wal_sync_io_ns) / sum(dur_ns) AS wal_sync_io_share,
           sum(sched_runq_ns) / sum(dur_ns) AS sched_runq_share,
           sum(memtable_ns) / sum(dur_ns) AS memtable_share,
           sum(wal_append_ns + crc_ns + wal_write_io_ns) / sum(dur_ns) AS wal_cpu_share,
           sum(other_ns) / sum(dur_ns) AS other_share,
           count(*) AS writes
    FROM writes
    WHERE engine = 'rocksdb'
    GROUP BY host, run
)
SELECT host, run, writes, behind_sync_share, wal_sync_io_share, sched_runq_share
FROM s
WHERE behind_sync_share >= greatest(wal_sync_io_share, sched_runq_share, memtable_share,
                                    wal_cpu_share, other_share)
ORDER BY behind_sync_share DESC, host, run
