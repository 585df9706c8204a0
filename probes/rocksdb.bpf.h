/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocksdb.bpf.h - RocksDB's BPF unit: a row is one DBImpl::WriteImpl call
 * (PH_WRITE's entry to its return, outermost); a write that leads its
 * group is marked; which of a write's syscalls are its WAL write and sync,
 * and which are its queue when the write-group calls are not probed
 * (--mode writes); its queue's busy clocks are its DBImpl's.  Its hooks
 * (hooks.gen.bpf.h) are the rocksdb_* functions below.
 */
#ifndef __WS_ROCKSDB_BPF_H
#define __WS_ROCKSDB_BPF_H

/* the write-group probes are not attached (--mode writes): a write leads
 * its group if it calls the WAL, and its futex waits and yields outside
 * any probed phase are its queue (AwaitState's yield and block) */
const volatile bool groups_unprobed = false;

/* a probe's entry: PH_WRITE opens a row (the outermost call); PH_LEADER
 * marks the row's leader; the others are the generic phase stack's */
static __always_inline int rocksdb_enter(struct pt_regs *ctx,
					 struct thread_state *t, __u32 tgid,
					 __u32 tid, __u64 now, __u64 cookie)
{
	__u8 phase = cookie, parent;

	if (phase == PH_WRITE) {
		/* --mode window: a thread not recording keeps no depth (a
		 * write that began outside a window may return after the
		 * window's probes are gone, and its return is never seen) */
		if (window_mode && !t->write_start)
			t->write_depth = 0;
		if (t->write_depth++ == 0 && window_admits(&now)) {
			begin_write(t, tgid, tid, now, WS_ENGINE_ROCKSDB);
			t->rec.hits_in[RC_OTHER] = 1;	/* the WriteImpl pair itself */
			/* DBImpl::WriteImpl's this: whose leaders it queues
			 * for.  It returns a Status (non-trivial) by value, so
			 * the Itanium C++ ABI passes the return slot first
			 * (rdi) and this second (rsi) */
			t->eng.rocksdb.db = PT_REGS_PARM2(ctx);
		}
		else if (t->write_start) {	/* nested: all of it inside */
			t->rec.hits_par[cur_comp(t) & (WS_MAX_COMP - 1)]++;
			t->rec.hits_in[cur_comp(t) & (WS_MAX_COMP - 1)]++;
		}
		return 0;
	}
	if (!t->write_start)
		return 0;
	parent = cur_comp(t);
	if (phase == PH_WAL && groups_unprobed)	/* only a leader writes it */
		t->rec.flags |= WS_WF_LEADER;
	if (phase == PH_LEADER) {
		t->rec.flags |= WS_WF_LEADER;
		t->rec.hits_one[parent & (WS_MAX_COMP - 1)]++;
		return 0;
	}
	return -1;
}

/* a probe's return: PH_WRITE's outermost return ends the row */
static __always_inline int rocksdb_exit(struct pt_regs *ctx,
					struct thread_state *t, __u64 now,
					__u64 cookie)
{
	if ((__u8)cookie != PH_WRITE)
		return -1;
	if (t->write_depth == 0)
		return 0;
	/* ... its own: a write nested in another engine's row (MyRocks' in
	 * the server's commit, not admitted to a window) ends none */
	if (--t->write_depth == 0 && t->write_start &&
	    t->rec.engine == WS_ENGINE_ROCKSDB)
		end_write(t, now, 0);
	return 0;
}

/* a follower waits for its leaders in its queue, on its own DBImpl's
 * busy clocks */
static __always_inline __u8 rocksdb_queue_comp(void)
{
	return RC_QUEUE;
}

static __always_inline void rocksdb_busy_key(struct thread_state *t,
					     struct busy_key *k)
{
	k->db = t->eng.rocksdb.db;
}

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
	return groups_unprobed && !t->depth && !t->in_sys && is_wait(nr, regs);
}

/*
 * A write's syscall of class cls on its file (t->sys_kind): a write to the
 * WAL is its WAL write, a sync of the WAL or of a directory (a new WAL's
 * entry) its WAL sync; both keep the WAL busy for the writes queued
 * behind it (t->sys_busy: 1 sync, 2 write).  0xff: no component of its own.
 */
static __always_inline __u8 rocksdb_sys_comp(struct thread_state *t, int cls,
					     long nr)
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
