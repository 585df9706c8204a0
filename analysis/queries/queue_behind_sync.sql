-- Runs where waiting behind another writer's WAL sync is the largest share of write time
WITH s AS (
    SELECT host, run,
           count(*) AS writes,
           sum(queue_behind_sync_ns) / sum(dur_ns) AS behind_sync_share,
           sum(wal_sync_io_ns) / sum(dur_ns) AS wal_sync_io_share,
           sum(sched_runq_ns) / sum(dur_ns) AS sched_runq_share,
           -- the largest of every engine's components but the queues
           -- (greatest skips another engine's NULLs); `make docs` writes it
           -- gen:largest_other_share
           greatest(sum(wal_sync_io_ns),
                    sum(wal_write_io_ns),
                    sum(wal_append_ns),
                    sum(crc_ns),
                    sum(memtable_ns),
                    sum(sched_runq_ns),
                    sum(other_ns),
                    sum(journal_sync_io_ns),
                    sum(journal_write_io_ns),
                    sum(db_sync_io_ns),
                    sum(db_write_io_ns),
                    sum(dir_sync_io_ns),
                    sum(journal_lifecycle_ns),
                    sum(checkpoint_ns),
                    sum(lock_wait_ns),
                    sum(sql_exec_ns),
                    sum(wal_flush_ns),
                    sum(wal_insert_ns),
                    sum(executor_ns),
                    sum(buffer_write_io_ns),
                    sum(data_sync_io_ns),
                    sum(lwlock_wait_ns),
                    sum(sleep_ns),
                    sum(client_wait_ns),
                    sum(log_sync_io_ns),
                    sum(log_write_io_ns),
                    sum(data_write_io_ns),
                    sum(log_lifecycle_ns)) / sum(dur_ns) AS largest_other_share
           -- /gen:largest_other_share
    FROM writes
    GROUP BY host, run
)
SELECT host, run, writes, behind_sync_share, wal_sync_io_share, sched_runq_share
FROM s
WHERE behind_sync_share >= largest_other_share
ORDER BY behind_sync_share DESC, host, run
