/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * logsync.bpf.h - the log-sync engine's BPF unit: rows from a log's
 * syscalls alone (logsync.h says which), for the processes of an object
 * whose engine is found but unnamed; an attach line of kind "rows" turns
 * it on (syscall_rows).  A log written LS_BURST times, or for LS_BURST_NS,
 * with no sync ends its row at that write (a log not synced on commit:
 * rows are write bursts).  A row begins at its first log write, so a
 * lock wait before it (a busy handler's) is not in it.
 */
#ifndef __WS_LOGSYNC_BPF_H
#define __WS_LOGSYNC_BPF_H

#define LS_BURST	64
/* ... or this long after its start (a window's drain would cut it) */
#define LS_BURST_NS	20000000ULL

static __always_inline void logsync_sys_outside(struct thread_state *t, int cls,
						long nr, __u32 tgid, __u32 tid,
						__u64 now)
{
	if (!(syscall_rows >> WS_ENGINE_LOGSYNC & 1) ||
	    (cls != IOC_WRITE && cls != IOC_SYNC) || !is_log_kind(t->sys_kind) ||
	    !window_admits(&now))
		return;
	begin_write(t, tgid, tid, now, WS_ENGINE_LOGSYNC);
	t->eng.logsync.log_writes = 0;
	if (cls == IOC_SYNC && t->sys_kind == FK_WAL)
		t->rec.flags |= WS_WF_CHECKPOINT;	/* no commit's write before it */
}

static __always_inline __u8 logsync_sys_comp(struct thread_state *t, int cls,
					     long nr)
{
	bool log = is_log_kind(t->sys_kind);

	if (cls == IOC_WRITE || cls == IOC_SYNC) {
		/* a write to a log opened O_DSYNC or O_SYNC syncs it */
		bool durable = log && cls == IOC_WRITE && fd_is_dsync(t->sys_fd);
		__u8 c;

		if (cls == IOC_WRITE)
			t->rec.flags |= WS_WF_WROTE;
		if (log)	/* unsynced writes of the log, since its last sync */
			t->eng.logsync.log_writes = cls == IOC_WRITE && !durable ?
				t->eng.logsync.log_writes + 1 : 0;
		t->eng.logsync.durable = durable;
		/* a durable write is busy as a write: its bytes count */
		c = log_or_data_io(t, cls, log, LS_LOG_WRITE_IO, LS_LOG_SYNC_IO,
				   LS_DATA_WRITE_IO, LS_DATA_SYNC_IO);
		if (!durable)
			return c;
		t->rec.flags |= WS_WF_LEADER;	/* it synced the log itself */
		return LS_LOG_SYNC_IO;
	}
	t->eng.logsync.durable = 0;
	switch (nr) {
	case WS_NR_fcntl:
	case WS_NR_flock:
	case WS_NR_nanosleep:
	case WS_NR_clock_nanosleep:
		return LS_LOCK_WAIT;
	case WS_NR_openat:
	case WS_NR_unlink:
	case WS_NR_unlinkat:
		return WS_COMP_PENDING;	/* its file's kind is known at exit */
	}
	if (log)
		return LS_LOG_LIFECYCLE;
	return t->sys_kind == FK_DIR ? LS_DATA_SYNC_IO : 0xff;
}

/* an open or unlink: the log's lifecycle, or the rest */
static __always_inline void logsync_sys_exit(struct thread_state *t, __u16 kind,
					     long ret)
{
	__u64 v = t->rec.comp_ns[WS_COMP_PENDING];
	__u8 to = is_log_kind(kind) ? LS_LOG_LIFECYCLE : LS_OTHER;

	/* a log write's bytes: the generic exit counts them (sys_busy 2) */
	if (t->sys_comp != WS_COMP_PENDING || !v)
		return;
	t->rec.comp_ns[to] += v;
	t->rec.comp_ns[WS_COMP_PENDING] = 0;
	t->rec.sys_in[to] += t->rec.sys_in[WS_COMP_PENDING];
	t->rec.sys_in[WS_COMP_PENDING] = 0;
}

/* what makes the commit durable ends its row: a WAL's sync; a write to a
 * log opened O_DSYNC or O_SYNC; a rollback journal's unlink or truncation
 * (DELETE, TRUNCATE); LS_BURST unsynced writes of the log */
static __always_inline int logsync_sys_ends_row(struct thread_state *t,
						__u16 kind, long ret)
{
	int cls = io_class(t->sys_nr);

	kind = t->sys_kind;	/* the fd's, or the path's of an unlink */
	if (cls == IOC_SYNC && kind == FK_WAL)
		return 0;
	if (cls == IOC_WRITE && t->eng.logsync.durable)	/* O_DSYNC, O_SYNC */
		return 0;
	if (kind == FK_JOURNAL && (t->sys_nr == WS_NR_unlink ||
				   t->sys_nr == WS_NR_unlinkat ||
				   t->sys_nr == WS_NR_ftruncate))
		return 0;
	/* a burst of unsynced writes: at a log write, LS_BURST of them or
	 * LS_BURST_NS since the row began */
	if (t->eng.logsync.log_writes &&
	    (t->eng.logsync.log_writes >= LS_BURST ||
	     (cls == IOC_WRITE && bpf_ktime_get_ns() - t->write_start >= LS_BURST_NS)))
		return 0;
	return -1;
}

#endif /* __WS_LOGSYNC_BPF_H */
