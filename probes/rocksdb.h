/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocksdb.h - RocksDB's part of the record interface: the components a
 * write (one DBImpl::WriteImpl call) is split into, and the component
 * each of its phases is charged to.  Python
 * reads the enum from BTF (engines/rocksdb names it); included by
 * walscope.h.
 */
#ifndef __WS_ROCKSDB_H
#define __WS_ROCKSDB_H

/*
 * Components of a RocksDB write (names are part of the interface:
 * Python lower-cases the name after the RC_ prefix).  RC_OTHER is the
 * residual and must stay 0.
 */
enum ws_rocksdb_comp {
	RC_OTHER = 0,
	RC_QUEUE = 1,
	RC_CRC = 2,
	RC_WAL_APPEND = 3,
	RC_WAL_WRITE_IO = 4,
	RC_WAL_SYNC_IO = 5,
	RC_MEMTABLE = 6,
	RC_SCHED_RUNQ = 7,
	RC_NR = 8,
};

_Static_assert(RC_OTHER == WS_COMP_OTHER && RC_SCHED_RUNQ == WS_COMP_SCHED_RUNQ &&
	       RC_NR < WS_COMP_PENDING, "the shared slots");

/* the phases its probes open (the attach cookie's byte 0) */
enum ws_rocksdb_phase {
	PH_WRITE = 0,		/* the row's boundary: DBImpl::WriteImpl */
	PH_QUEUE = 1,
	PH_CRC = 2,
	PH_WAL = 3,
	PH_MEMTABLE = 6,
	PH_LEADER = WS_PH_MARKERS,	/* this write leads its group */
};

#define WS_ROCKSDB_PHASE_COMPS(X)	\
	X(PH_QUEUE, RC_QUEUE)		\
	X(PH_CRC, RC_CRC)		\
	X(PH_WAL, RC_WAL_APPEND)	\
	X(PH_MEMTABLE, RC_MEMTABLE)

/* a thread's RocksDB state (struct thread_state's eng.rocksdb) */
struct ws_rocksdb_state {
	__u64 db;		/* the DBImpl of the write in progress */
};

#endif /* __WS_ROCKSDB_H */
