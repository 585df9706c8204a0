/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * postgres.h - PostgreSQL's part of the record interface: the components
 * a transaction is split into, and the phases its probes open (the attach
 * cookie's byte 0, with WS_ENGINE_POSTGRES in byte 1).  Python reads both
 * enums from BTF (engines/postgres names them); included by walscope.h.
 *
 * A row is one transaction that wrote a commit or abort record, from the
 * transaction__start USDT probe (StartTransaction) to transaction__commit
 * (CommitTransaction, after the commit record is flushed) or
 * transaction__abort.
 */
#ifndef __WS_POSTGRES_H
#define __WS_POSTGRES_H

/* PG_OTHER is the residual and must stay 0; PG_SCHED_RUNQ is the
 * scheduler's slot */
enum ws_postgres_comp {
	PG_OTHER = 0,		/* parse, plan, protocol: the backend's rest */
	PG_CLIENT_WAIT = 1,	/* secure_read: the client's next message */
	PG_EXECUTOR = 2,	/* PortalRun, less what is below */
	PG_WAL_INSERT = 3,	/* XLogInsertRecord: records into WAL buffers */
	PG_WAL_LOCK_WAIT = 4,	/* LWLockAcquireOrWait (XLogFlush's
				 * WALWriteLock): behind another's flush */
	PG_WAL_WRITE_IO = 5,	/* write(2) family on a WAL segment */
	PG_WAL_SYNC_IO = 6,	/* fdatasync/fsync of a WAL segment */
	PG_SCHED_RUNQ = 7,
	PG_WAL_FLUSH = 8,	/* XLogFlush's own time (waiting for
				 * insertions to finish, bookkeeping) */
	PG_BUFFER_WRITE_IO = 9,	/* writes to any other file: evicted dirty
				 * buffers, SLRU pages */
	PG_DATA_SYNC_IO = 10,	/* syncs of any other file */
	PG_LWLOCK_WAIT = 11,	/* other semaphore waits: lightweight locks,
				 * group xid clearing (PGSemaphoreLock) */
	PG_LOCK_WAIT = 12,	/* heavyweight (row, table) lock waits (USDT) */
	PG_SLEEP = 13,		/* pg_usleep: commit_delay, spinlock back-off */
	PG_NR = 14,
};

/* phase ids: a range of their own, so the phase stack maps them to
 * PostgreSQL's components (WS_POSTGRES_PHASE_COMPS) */
enum ws_postgres_phase {
	PGP_CLIENT = 40,	/* secure_read */
	PGP_EXEC = 41,		/* PortalRun */
	PGP_WAL_INSERT = 42,	/* XLogInsertRecord */
	PGP_WAL_FLUSH = 43,	/* XLogFlush */
	PGP_WAL_LOCK = 44,	/* LWLockAcquireOrWait */
	PGP_SLEEP = 45,		/* pg_usleep */
	PGP_LWLOCK = 46,	/* PGSemaphoreLock (not inside PGP_WAL_LOCK) */
	PGP_LOCK = 47,		/* lock__wait__start .. lock__wait__done */
	PGP_CHECKPOINT = 48,	/* CreateCheckPoint, in the checkpointer */
	/* entry-only markers (no return probe) */
	PGP_XACT_START = 120,	/* USDT transaction__start: a row begins */
	PGP_XACT_COMMIT = 121,	/* USDT transaction__commit: it ends */
	PGP_XACT_ABORT = 122,	/* USDT transaction__abort: it ends */
	PGP_XACT_RECORD = 123,	/* XactLogCommitRecord/XactLogAbortRecord:
				 * the transaction wrote (a row is kept) */
	PGP_LOCK_START = 126,	/* USDT lock__wait__start (lwlock__wait__*
				 * are behind semaphores: PGSemaphoreLock) */
	PGP_LOCK_DONE = 127,	/* USDT lock__wait__done */
};

#define WS_POSTGRES_PHASE_COMPS(X)		\
	X(PGP_CLIENT, PG_CLIENT_WAIT)		\
	X(PGP_EXEC, PG_EXECUTOR)		\
	X(PGP_WAL_INSERT, PG_WAL_INSERT)	\
	X(PGP_WAL_FLUSH, PG_WAL_FLUSH)		\
	X(PGP_WAL_LOCK, PG_WAL_LOCK_WAIT)	\
	X(PGP_SLEEP, PG_SLEEP)			\
	X(PGP_LWLOCK, PG_LWLOCK_WAIT)		\
	X(PGP_LOCK, PG_LOCK_WAIT)

_Static_assert(PG_OTHER == WS_COMP_OTHER && PG_SCHED_RUNQ == WS_COMP_SCHED_RUNQ &&
	       PG_NR < WS_COMP_PENDING, "the shared slots");

/* a backend's PostgreSQL state (struct thread_state's eng.postgres) */
struct ws_postgres_state {
	__u64 ckpt_seq;		/* checkpoints begun when the row did */
};

#endif /* __WS_POSTGRES_H */
