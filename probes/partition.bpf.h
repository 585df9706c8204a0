/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * partition.bpf.h - the core: a write's duration partitioned into
 * components.  Time is charged lazily at every transition to the component
 * that was current, so the components add up to the duration exactly; the
 * queue's overlap with leaders' WAL syncs and writes is kept beside it.
 */
#ifndef __WS_PARTITION_H
#define __WS_PARTITION_H

static __always_inline __u8 phase_comp(__u8 phase)
{
	switch (phase) {
#define WS_PC_CASE(p, c)	case p: return c;
	WS_PHASE_COMPS(WS_PC_CASE)
#undef WS_PC_CASE
	default:
		return WS_COMP_OTHER;
	}
}

static __always_inline __u8 stack_comp(struct thread_state *t)
{
	__u8 d = t->depth;

	if (d == 0 || d > WS_MAX_DEPTH)
		return WS_COMP_OTHER;
	return phase_comp(t->stack[(d - 1) & (WS_MAX_DEPTH - 1)]);
}

static __always_inline __u8 cur_comp(struct thread_state *t)
{
	if (t->in_sys && t->sys_comp != 0xff)
		return t->sys_comp;
	return stack_comp(t);
}

/* charge [last_ts, now) to the current component */
static __always_inline void charge(struct thread_state *t, __u64 now)
{
	__u8 c;

	if (!t->write_start)
		return;
	if (now > t->last_ts) {
		c = cur_comp(t);
		if (c < WS_MAX_COMP) {
			barrier_var(c);	/* keep the mask: the verifier's bound */
			t->rec.comp_ns[c & (WS_MAX_COMP - 1)] +=
				now - t->last_ts;
		}
		t->last_ts = now;
	}
}

static __always_inline __u64 busy_now(struct busy_clock *b, int i, __u64 now)
{
	__u64 v;

	i &= 1;
	v = b->cum[i];
	if (b->active[i] > 0 && now > b->since[i])
		v += now - b->since[i];
	return v;
}

/* the busy clocks of the write's database; made on first use if create.
 * The key is the row's process unless its engine says otherwise (a
 * database of its own in the process, or processes sharing one log) */
static __always_inline struct busy_clock *busy_of(struct thread_state *t,
						  bool create)
{
	struct busy_key k = { .tgid = t->rec.pid };
	struct busy_clock zero = {}, *b;

	engine_busy_key(t, &k);

	b = bpf_map_lookup_elem(&busy, &k);
	if (b || !create)
		return b;
	bpf_map_update_elem(&busy, &k, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&busy, &k);
}

static __always_inline void busy_enter(struct thread_state *t, int i, __u64 now)
{
	struct busy_clock *b = busy_of(t, true);

	if (!b)
		return;
	i &= 1;
	if (__sync_fetch_and_add(&b->active[i], 1) == 0)
		b->since[i] = now;
}

static __always_inline void busy_exit(struct thread_state *t, int i, __u64 now)
{
	struct busy_clock *b = busy_of(t, false);

	if (!b)
		return;
	i &= 1;
	if (__sync_fetch_and_add(&b->active[i], -1) == 1 && now > b->since[i])
		__sync_fetch_and_add(&b->cum[i], now - b->since[i]);
}

/* the current component changes from old to new: queue overlap bookkeeping */
static __always_inline void comp_switch(struct thread_state *t, __u8 old,
					__u8 new, __u64 now)
{
	__u8 q = engine_queue_comp(t->rec.engine);
	struct busy_clock *b;

	if (q == 0xff || (old == q) == (new == q))
		return;
	/* made here too: a queue that begins before the database's first sync
	 * must see that sync */
	b = busy_of(t, true);
	if (!b)
		return;
	if (new == q) {
		t->q_snap[0] = busy_now(b, 0, now);
		t->q_snap[1] = busy_now(b, 1, now);
	} else {
		t->rec.q_behind_sync_ns += busy_now(b, 0, now) - t->q_snap[0];
		t->rec.q_behind_walw_ns += busy_now(b, 1, now) - t->q_snap[1];
	}
}

static __always_inline void add_cpu_slice(struct thread_state *t, __u64 now)
{
	__u64 from = t->oncpu_since;
	__u8 ct;

	if (!t->write_start || !from || !t->last_cpu)
		return;
	if (from < t->write_start)
		from = t->write_start;
	if (now <= from)
		return;
	ct = cpu_type(t->last_cpu - 1);
	t->rec.cpu_ns[ct & 3] += now - from;
}

/*
 * --mode window: may a write begin now (a window is open)?  A write that
 * may is counted in flight until it ends, so the collector can tell when
 * the window's last write is done.
 */
/*
 * May a write begin now?  One admitted inside a window starts when it was
 * admitted (*now, read again): the collector stamps a window's open_ns
 * before it sets window_open, so a time read before the check could
 * precede the window it is admitted to (a write seen outside every window).
 */
static __always_inline bool window_admits(__u64 *now)
{
	if (!window_mode)
		return true;
	if (!window_open)
		return false;
	__sync_fetch_and_add(&window_in_flight, 1);
	*now = bpf_ktime_get_ns();
	return true;
}

static __always_inline void window_done(struct thread_state *t)
{
	if (window_mode && t->win_gen == window_gen)
		__sync_fetch_and_add(&window_in_flight, -1);
}

static __always_inline void begin_write(struct thread_state *t, __u32 tgid,
					__u32 tid, __u64 now, __u16 engine)
{
	/* a row still open goes: its end was never seen, or another engine's
	 * row opens inside it (MyRocks' write inside a server's commit), which
	 * is the thread's row from now */
	if (t->write_start)
		window_done(t);
	__builtin_memset(&t->rec, 0, sizeof(t->rec));
	t->rec.rec_type = WS_REC_WRITE;
	t->rec.pid = tgid;
	t->rec.tid = tid;
	t->rec.engine = engine;
	t->rec.start_ns = now;
	t->rec.cpu_start = bpf_get_smp_processor_id();
	t->rec.cold_hits = t->hit_cold;	/* the hit that begins it */
	t->write_start = now;
	t->win_gen = window_gen;
	t->last_ts = now;
	t->depth = 0;
	if (!t->oncpu_since) {	/* first sight of this thread */
		t->oncpu_since = now;
		t->last_cpu = t->rec.cpu_start + 1;
	}
}

static __always_inline void end_write(struct thread_state *t, __u64 now,
				      __u16 flags)
{
	charge(t, now);
	comp_switch(t, cur_comp(t), WS_COMP_OTHER, now);
	add_cpu_slice(t, now);
	t->rec.dur_ns = now - t->write_start;
	t->rec.cpu_end = bpf_get_smp_processor_id();
	t->rec.flags |= flags;
	if (engine_is_kept(&t->rec) &&
	    bpf_ringbuf_output(&events, &t->rec, sizeof(t->rec), rb_flags()))
		count(CNT_LOST_WRITE);
	window_done(t);
	clear_row(t);
}

/* a phase opens: from now its time is its component's */
static __always_inline void open_phase(struct thread_state *t, __u8 phase,
				       __u64 now)
{
	__u8 parent = cur_comp(t);

	charge(t, now);
	if (t->depth >= WS_MAX_DEPTH) {
		count(CNT_DEPTH_OVERFLOW);
		t->rec.flags |= WS_WF_TRUNC;
		return;
	}
	t->stack[t->depth & (WS_MAX_DEPTH - 1)] = phase;
	t->depth++;
	if (!t->in_sys)
		comp_switch(t, parent, phase_comp(phase), now);
}

/* a probe pair's phase opens: the pair's inside is charged to the phase,
 * its outside to the component that was current */
static __always_inline void push_phase(struct thread_state *t, __u8 phase,
				       __u64 now)
{
	__u8 parent = cur_comp(t), comp = phase_comp(phase);

	barrier_var(comp);	/* keep the masks: the verifier's bound */
	barrier_var(parent);
	t->rec.hits_par[parent & (WS_MAX_COMP - 1)]++;
	t->rec.hits_in[comp & (WS_MAX_COMP - 1)]++;
	open_phase(t, phase, now);
}

/* the phase on top of the stack, 0xff if none */
static __always_inline __u8 top_phase(struct thread_state *t)
{
	if (t->depth == 0 || t->depth > WS_MAX_DEPTH)
		return 0xff;
	return t->stack[(t->depth - 1) & (WS_MAX_DEPTH - 1)];
}

/* the phase on top closes: the time goes back to the one below */
static __always_inline void close_phase(struct thread_state *t, __u64 now)
{
	__u8 old;

	charge(t, now);
	old = cur_comp(t);
	t->depth--;
	if (!t->in_sys)
		comp_switch(t, old, cur_comp(t), now);
}

/* a probe pair's return: its phase closes; any other phase on top
 * desynchronised the stack */
static __always_inline void pop_phase(struct thread_state *t, __u8 phase,
				      __u64 now)
{
	if (top_phase(t) != phase) {
		count(CNT_PHASE_MISMATCH);
		t->rec.flags |= WS_WF_TRUNC;
		return;
	}
	close_phase(t, now);
}

/* a probe hit: cold if the thread's previous one was long enough ago */
static __always_inline void note_hit(struct thread_state *t, __u64 now)
{
	t->hit_cold = now - t->last_hit > WS_WARM_GAP_NS;
	t->last_hit = now;
	if (t->write_start)
		t->rec.cold_hits += t->hit_cold;
}

#endif /* __WS_PARTITION_H */
