/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * innodb.bpf.h - InnoDB's BPF unit: a commit is a row from the outermost
 * ha_commit_trans entry to its return; its syscalls take the redo log's or
 * the other files' components by file kind; a futex wait inside it is its
 * queue (the group commit: another thread writing and syncing the log for
 * it).  A row of another engine that opens inside a commit (MyRocks'
 * DBImpl::WriteImpl) takes the thread's row over (begin_write): that
 * engine's write is the commit's WAL write.
 */
#ifndef __WS_INNODB_BPF_H
#define __WS_INNODB_BPF_H

static __always_inline int innodb_enter(struct pt_regs *ctx,
					struct thread_state *t, __u32 tgid,
					__u32 tid, __u64 now, __u64 cookie)
{
	if ((__u8)cookie != IP_COMMIT)
		return -1;
	/* --mode window: a call that began outside a window may return
	 * after the window's probes are gone: no depth kept between rows */
	if (!t->write_start)
		t->eng.innodb.depth = 0;
	if (t->eng.innodb.depth++ == 0 && !t->write_start && window_admits(&now))
		begin_write(t, tgid, tid, now, WS_ENGINE_INNODB);
	return 0;
}

static __always_inline int innodb_exit(struct pt_regs *ctx,
				       struct thread_state *t, __u64 now,
				       __u64 cookie)
{
	if ((__u8)cookie != IP_COMMIT)
		return -1;
	if (t->eng.innodb.depth == 0)	/* its entry was not seen */
		return 0;
	if (--t->eng.innodb.depth == 0 && t->write_start &&
	    t->rec.engine == WS_ENGINE_INNODB)
		end_write(t, now, 0);
	return 0;
}

/* the redo log's I/O or the other files' (log_or_data_io); a sleep */
static __always_inline __u8 innodb_sys_comp(struct thread_state *t, int cls,
					    long nr)
{
	if (cls == IOC_WRITE || cls == IOC_SYNC)
		t->rec.flags |= WS_WF_WROTE;
	if (nr == WS_NR_nanosleep || nr == WS_NR_clock_nanosleep)
		return IC_SLEEP;
	return log_or_data_io(t, cls, t->sys_kind == FK_WAL, IC_LOG_WRITE_IO,
			      IC_LOG_SYNC_IO, IC_DATA_WRITE_IO, IC_DATA_SYNC_IO);
}

static __always_inline bool innodb_queue_wait(struct thread_state *t, long nr,
					      struct pt_regs *regs)
{
	return !t->in_sys && is_wait(nr, regs);
}

static __always_inline __u8 innodb_queue_comp(void)
{
	return IC_QUEUE;
}

/* a commit that wrote nothing and waited for no one's log I/O was a
 * read's (an autocommit SELECT commits too) */
static __always_inline bool innodb_is_kept(const struct ws_write_rec *r)
{
	return (r->flags & WS_WF_WROTE) || r->comp_ns[IC_QUEUE];
}

static __always_inline void innodb_clear_row(struct thread_state *t)
{
	t->eng.innodb.depth = 0;
}

#endif /* __WS_INNODB_BPF_H */
