/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * innodb.h - InnoDB's part of the record interface (MariaDB, MySQL): the
 * components a commit is split into and the phase its probe opens (the
 * attach cookie's byte 0, with its enum ws_engine id in byte 1).  Python
 * reads both enums from BTF (engines/innodb names them); included by
 * engines.gen.h.
 *
 * A row is one commit: the server's ha_commit_trans(THD*, bool), exported
 * by mariadbd, from its outermost entry to that call's return, kept if it
 * wrote or synced a file or waited for another thread's log I/O inside.
 * Its I/O is told apart by file kind alone (the redo log: ib_logfile*,
 * #innodb_redo/), so the split is syscalls' and waits', not the storage
 * engine's own functions (InnoDB exports none).
 */
#ifndef __WS_INNODB_H
#define __WS_INNODB_H

/* IC_OTHER is the residual and must stay 0 */
enum ws_innodb_comp {
	IC_OTHER = 0,		/* the server's own work inside the commit */
	IC_QUEUE = 1,		/* futex waits inside the commit: behind
				 * another thread's log write or sync (the
				 * group commit), or a lock */
	IC_LOG_WRITE_IO = 2,	/* write(2) family on the redo log */
	IC_LOG_SYNC_IO = 3,	/* fsync/fdatasync of the redo log */
	IC_DATA_WRITE_IO = 4,	/* writes to any other file (binary log,
				 * data files) */
	IC_DATA_SYNC_IO = 5,	/* syncs of any other file */
	IC_SLEEP = 6,		/* nanosleep inside the commit (a back-off) */
	IC_SCHED_RUNQ = 7,
	IC_NR = 8,
};

_Static_assert(IC_OTHER == WS_COMP_OTHER && IC_SCHED_RUNQ == WS_COMP_SCHED_RUNQ &&
	       IC_NR < WS_COMP_PENDING, "the shared slots");

/* the phases its probes open: a range of their own */
enum ws_innodb_phase {
	IP_COMMIT = 60,		/* ha_commit_trans: the row's boundary */
};

/* a thread's InnoDB state (struct thread_state's eng.innodb) */
struct ws_innodb_state {
	__u8 depth;		/* ha_commit_trans calls open on the thread */
};

#endif /* __WS_INNODB_H */
