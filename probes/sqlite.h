/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sqlite.h - SQLite's part of the record interface: the components a
 * transaction is split into, its phases, and the component each of them
 * is charged to.  Python reads the enum from BTF
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

_Static_assert(SC_OTHER == WS_COMP_OTHER && SC_SCHED_RUNQ == WS_COMP_SCHED_RUNQ &&
	       SC_NR < WS_COMP_PENDING, "the shared slots");

/* the phases its probes open (the attach cookie's byte 0; bits 16.. of
 * PH_SQL_STEP's: the offset of zSql in a Vdbe) */
enum ws_sqlite_phase {
	PH_SQL_STEP = 10,	/* sqlite3_step: boundary and sql_exec */
	PH_CHECKPOINT = 11,	/* sqlite3WalCheckpoint */
};

#define WS_SQLITE_PHASE_COMPS(X)	\
	X(PH_SQL_STEP, SC_SQL_EXEC)	\
	X(PH_CHECKPOINT, SC_CHECKPOINT)

/* a thread's SQLite state (struct thread_state's eng.sqlite) */
struct ws_sqlite_state {
	__u8 txn_end_depth;	/* end the transaction below this depth */
	__u8 txn_end_flags;	/* ... with these flags */
};

#endif /* __WS_SQLITE_H */
