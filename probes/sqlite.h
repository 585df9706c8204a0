/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sqlite.h - SQLite's part of the record interface: the components a
 * transaction is split into, and the component each of its phases (enum
 * ws_phase, walscope.h) is charged to.  Python reads the enum from BTF
 * (engines/sqlite names it); included by walscope.h.  sqlite.bpf.h is
 * what its probes do.
 */
#ifndef __WS_SQLITE_H
#define __WS_SQLITE_H

/*
 * Components of a SQLite transaction (BEGIN ... COMMIT, or one autocommit
 * statement that wrote).  SC_OTHER is the residual (the application's time
 * between statements); SC_SCHED_RUNQ shares RC_SCHED_RUNQ's slot.
 */
enum ws_sqlite_comp {
	SC_OTHER = 0,
	SC_SQL_EXEC = 1,		/* in sqlite3_step, not in a traced syscall */
	SC_JOURNAL_WRITE_IO = 2,	/* writes to -journal or -wal */
	SC_JOURNAL_SYNC_IO = 3,		/* fsync/fdatasync of -journal or -wal */
	SC_DB_WRITE_IO = 4,		/* writes to the database file */
	SC_DB_SYNC_IO = 5,
	SC_DIR_SYNC_IO = 6,		/* directory open/fsync/close */
	SC_SCHED_RUNQ = 7,
	SC_JOURNAL_LIFECYCLE = 8,	/* open/close/unlink/ftruncate of the journal */
	SC_CHECKPOINT = 9,		/* WAL checkpoint inside the transaction */
	SC_LOCK_WAIT = 10,		/* fcntl/flock locks, busy-handler sleeps */
	SC_NR = 11,
};

#define WS_SQLITE_PHASE_COMPS(X)	\
	X(PH_SQL_STEP, SC_SQL_EXEC)	\
	X(PH_CHECKPOINT, SC_CHECKPOINT)

#endif /* __WS_SQLITE_H */
