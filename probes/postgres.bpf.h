/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * postgres.bpf.h - PostgreSQL transactions: the transaction__start USDT
 * probe opens a row in a backend, transaction__commit or __abort closes it,
 * and it is kept if it wrote a commit or abort record.  Phases (postgres.h)
 * split its time; its syscalls take PostgreSQL's components by file kind.
 * The checkpointer's CreateCheckPoint marks the rows it overlapped.
 */
#ifndef __WS_POSTGRES_BPF_H
#define __WS_POSTGRES_BPF_H

/* a checkpoint in progress (CreateCheckPoint entered, not returned), and
 * how many have begun: a row that saw either change ran beside one */
__u32 pg_ckpt_active = 0;
__u64 pg_ckpt_seq = 0;

static __always_inline void pg_begin(struct thread_state *t, __u32 tgid,
				     __u32 tid, __u64 now)
{
	if (t->write_start) {	/* its end was never seen: dropped */
		t->write_start = 0;
		t->depth = 0;
		window_done(t);
	}
	if (!window_admits(&now))
		return;
	begin_write(t, tgid, tid, now, WS_ENGINE_POSTGRES);
	t->rec.hits_one[PG_OTHER]++;
	t->eng.postgres.ckpt_seq = pg_ckpt_seq;
	if (pg_ckpt_active)
		t->rec.flags |= WS_WF_CHECKPOINT;
}

static __always_inline void pg_end(struct thread_state *t, __u64 now,
				   __u16 flags)
{
	charge(t, now);
	t->rec.hits_one[cur_comp(t) & (WS_MAX_COMP - 1)]++;
	if (pg_ckpt_active || pg_ckpt_seq != t->eng.postgres.ckpt_seq)
		flags |= WS_WF_CHECKPOINT;
	end_write(t, now, flags);
}

/* a heavyweight lock wait, bracketed by two USDT probes (entry-only
 * hits: each counted where it fired) */
static __always_inline void pg_lock_start(struct thread_state *t, __u64 now)
{
	t->rec.hits_one[cur_comp(t) & (WS_MAX_COMP - 1)]++;
	open_phase(t, PGP_LOCK, now);
}

static __always_inline void pg_lock_done(struct thread_state *t, __u64 now)
{
	t->rec.hits_one[cur_comp(t) & (WS_MAX_COMP - 1)]++;
	if (top_phase(t) == PGP_LOCK)	/* else its start was not seen */
		close_phase(t, now);
}

/* PGSemaphoreLock: a lightweight-lock wait, unless it is the WALWriteLock
 * wait LWLockAcquireOrWait already names (then its time stays there) */
static __always_inline void pg_sema_enter(struct thread_state *t, __u64 now)
{
	__u8 c = cur_comp(t);

	if (top_phase(t) == PGP_WAL_LOCK) {
		t->rec.hits_par[c & (WS_MAX_COMP - 1)]++;
		t->rec.hits_in[c & (WS_MAX_COMP - 1)]++;
		return;
	}
	push_phase(t, PGP_LWLOCK, now);
}

/* a PostgreSQL probe's entry (or a marker) */
static __always_inline int pg_enter(struct thread_state *t, __u32 tgid,
				    __u32 tid, __u64 now, __u8 phase)
{
	switch (phase) {
	case PGP_CHECKPOINT:
		__sync_fetch_and_add(&pg_ckpt_seq, 1);
		pg_ckpt_active = 1;
		return 0;
	case PGP_XACT_START:
		pg_begin(t, tgid, tid, now);
		return 0;
	case PGP_XACT_RECORD:	/* attached for good: counts every row */
		count(CNT_ROW_MARKS);
		if (t->write_start) {
			t->rec.flags |= WS_WF_LOGGED;
			t->rec.hits_one[cur_comp(t) & (WS_MAX_COMP - 1)]++;
		}
		return 0;
	}
	if (!t->write_start)
		return 0;
	switch (phase) {
	case PGP_XACT_COMMIT:
		pg_end(t, now, 0);
		break;
	case PGP_XACT_ABORT:
		pg_end(t, now, WS_WF_ROLLBACK);
		break;
	case PGP_LOCK_START:
		pg_lock_start(t, now);
		break;
	case PGP_LOCK_DONE:
		pg_lock_done(t, now);
		break;
	case PGP_LWLOCK:
		pg_sema_enter(t, now);
		break;
	default:
		push_phase(t, phase, now);
	}
	return 0;
}

/* a PostgreSQL probe's return */
static __always_inline int pg_exit(struct thread_state *t, __u64 now,
				   __u8 phase)
{
	if (phase == PGP_CHECKPOINT) {
		pg_ckpt_active = 0;
		return 0;
	}
	if (!t->write_start)
		return 0;
	if (phase == PGP_LWLOCK && top_phase(t) != PGP_LWLOCK)
		return 0;	/* pg_sema_enter left it in the WAL lock wait */
	pop_phase(t, phase, now);
	return 0;
}

/*
 * The component of a write or sync syscall inside a PostgreSQL
 * transaction, and whether it makes the cluster's WAL busy (1 sync,
 * 2 write: the busy clocks a WALWriteLock wait is measured against);
 * 0xff charges anything else to the phase stack.  A global function: the
 * verifier checks it once, not on every path of sys_enter.
 */
__noinline int pg_sys_comp(struct thread_state *t, int cls)
{
	if (!t)
		return 0xff;
	return log_or_data_io(t, cls, t->sys_kind == FK_WAL, PG_WAL_WRITE_IO,
			      PG_WAL_SYNC_IO, PG_BUFFER_WRITE_IO, PG_DATA_SYNC_IO);
}

/* the unit's other hooks (hooks.gen.bpf.h) */
static __always_inline int postgres_enter(struct pt_regs *ctx,
					  struct thread_state *t, __u32 tgid,
					  __u32 tid, __u64 now, __u64 cookie)
{
	return pg_enter(t, tgid, tid, now, (__u8)cookie);
}

static __always_inline int postgres_exit(struct pt_regs *ctx,
					 struct thread_state *t, __u64 now,
					 __u64 cookie)
{
	return pg_exit(t, now, (__u8)cookie);
}

/* a transaction that wrote or synced anything is marked so */
static __always_inline __u8 postgres_sys_comp(struct thread_state *t, int cls,
					      long nr)
{
	__u8 c = pg_sys_comp(t, cls);

	if (cls == IOC_WRITE || cls == IOC_SYNC)
		t->rec.flags |= WS_WF_WROTE;
	return c;
}

/* a backend behind another's WAL flush waits for WALWriteLock */
static __always_inline __u8 postgres_queue_comp(void)
{
	return PG_WAL_LOCK_WAIT;
}

/* a transaction with no commit or abort record is a read */
static __always_inline bool postgres_is_kept(const struct ws_write_rec *r)
{
	return r->flags & WS_WF_LOGGED;
}

/* a cluster's backends are processes sharing one WAL: its busy clocks
 * are keyed by the engine alone */
static __always_inline void postgres_busy_key(struct thread_state *t,
					      struct busy_key *k)
{
	k->tgid = 0;
}

#endif /* __WS_POSTGRES_BPF_H */
