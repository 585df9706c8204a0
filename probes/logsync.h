/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * logsync.h - the log-sync engine's part of the record interface: a
 * commit as its write-ahead log shows it, from syscalls alone, for an
 * engine found in an object that names none of its functions (a stripped
 * SQLite).  Python reads the enum from BTF (engines/logsync names it);
 * included by engines.gen.h.  It has no probes, so no phases.
 *
 * A row begins at a write or sync of a log (file kind FK_WAL or
 * FK_JOURNAL: SQLite's -wal and -journal, RocksDB's *.log, InnoDB's
 * ib_logfile*) by a thread in no other row, and ends at what makes the
 * commit durable: a sync of a WAL, or the unlink or truncation of a
 * rollback journal (SQLite's DELETE and TRUNCATE modes); a write to a log
 * opened O_DSYNC or O_SYNC is its own sync and ends its row too.  A WAL
 * sync with no write before it in the row is a checkpoint's
 * (WS_WF_CHECKPOINT).
 */
#ifndef __WS_LOGSYNC_H
#define __WS_LOGSYNC_H

/* LS_OTHER is the residual and must stay 0 */
enum ws_logsync_comp {
	LS_OTHER = 0,		/* between its syscalls: the engine's work, unsplit */
	LS_LOG_WRITE_IO = 1,	/* write(2) family on the log */
	LS_LOG_SYNC_IO = 2,	/* fsync/fdatasync of the log */
	LS_DATA_WRITE_IO = 3,	/* writes to any other file (the database) */
	LS_DATA_SYNC_IO = 4,	/* syncs of any other file or a directory */
	LS_LOG_LIFECYCLE = 5,	/* open, close, unlink, truncate of the log */
	LS_LOCK_WAIT = 6,	/* fcntl/flock locks, sleeps (a busy handler) */
	LS_SCHED_RUNQ = 7,
	LS_NR = 8,
};

_Static_assert(LS_OTHER == WS_COMP_OTHER && LS_SCHED_RUNQ == WS_COMP_SCHED_RUNQ &&
	       LS_NR < WS_COMP_PENDING, "the shared slots");

/* a thread's log-sync state (struct thread_state's eng.logsync) */
struct ws_logsync_state {
	__u16 log_writes;	/* the row's writes to its log, none synced yet */
	__u8 durable;		/* the syscall in progress writes a log opened
				 * O_DSYNC or O_SYNC: its own sync */
};

#endif /* __WS_LOGSYNC_H */
