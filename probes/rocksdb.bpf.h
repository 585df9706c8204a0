/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocksdb.bpf.h - RocksDB's rules beyond the generic phase stack: which of
 * a write's syscalls are its WAL write and sync, and which are its queue
 * when the write-group calls are not probed (--mode writes).
 */
#ifndef __WS_ROCKSDB_BPF_H
#define __WS_ROCKSDB_BPF_H

/* futex commands that wait (FUTEX_CMD_MASK drops the private and clock
 * flags): WAIT, LOCK_PI, WAIT_BITSET, WAIT_REQUEUE_PI, LOCK_PI2 */
#define FUTEX_CMD_MASK		0x7f
#define FUTEX_WAIT_CMDS		(1u << 0 | 1u << 6 | 1u << 9 | 1u << 11 | 1u << 13)

/*
 * With the write-group probes not attached, a RocksDB write's futex waits
 * and yields outside any probed phase are its queue: a follower's
 * AwaitState yields, then blocks on its writer's condition variable.  A
 * leader's futex wakes of its followers are not waits and stay where they
 * are.
 */
static __always_inline bool rocksdb_queue_wait(struct thread_state *t, long nr,
					       struct pt_regs *regs)
{
	__u32 cmd;

	if (!groups_unprobed || t->depth || t->in_sys ||
	    t->rec.engine != WS_ENGINE_ROCKSDB)
		return false;
	if (nr == WS_NR_sched_yield)
		return true;
	if (nr != WS_NR_futex)
		return false;
	cmd = (__u32)BPF_CORE_READ(regs, si) & FUTEX_CMD_MASK;
	return cmd < 32 && (FUTEX_WAIT_CMDS >> cmd & 1);
}

/*
 * A write's syscall of class cls on its file (t->sys_kind): a write to the
 * WAL is its WAL write, a sync of the WAL or of a directory (a new WAL's
 * entry) its WAL sync; both keep the WAL busy for the writes queued
 * behind it (t->sys_busy: 1 sync, 2 write).  0xff: no component of its own.
 */
static __always_inline __u8 rocksdb_sys_comp(struct thread_state *t, int cls)
{
	if (cls == IOC_WRITE && t->sys_kind == FK_WAL) {
		t->sys_busy = 2;
		return RC_WAL_WRITE_IO;
	}
	if (cls == IOC_SYNC && (t->sys_kind == FK_WAL || t->sys_kind == FK_DIR)) {
		t->sys_busy = 1;
		return RC_WAL_SYNC_IO;
	}
	return 0xff;
}

#endif /* __WS_ROCKSDB_BPF_H */
