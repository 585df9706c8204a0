/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * uprobes.bpf.h - the two generic uprobe programs: every probe point
 * attaches one of them with its phase in the attach cookie's byte 0 and its
 * engine (enum ws_engine) in byte 1; an engine with a part of its own
 * (postgres.bpf.h) takes its probes there.
 */
#ifndef __WS_UPROBES_H
#define __WS_UPROBES_H

/* a probe's entry, for both programs below */
static __always_inline int phase_enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now, cookie;
	__u32 tgid = id >> 32, tid = (__u32)id;
	__u8 phase, engine, parent;
	struct thread_state *t;

	if (!is_traced(tgid))
		return 0;
	count(CNT_UPROBE);
	now = bpf_ktime_get_ns();
	cookie = bpf_get_attach_cookie(ctx);
	phase = cookie;
	engine = cookie >> 8;
	t = get_thread(tid, tgid, true);
	if (!t)
		return 0;
	note_hit(t, now);
	if (engine == WS_ENGINE_POSTGRES)
		return pg_enter(t, tgid, tid, now, phase);
	if (phase == PH_SQL_STEP)
		return sql_step_enter(ctx, t, tgid, tid, now, cookie);
	if (phase == PH_WRITE) {
		/* --mode window: a thread not recording keeps no depth (a
		 * write that began outside a window may return after the
		 * window's probes are gone, and its return is never seen) */
		if (window_mode && !t->write_start)
			t->write_depth = 0;
		if (t->write_depth++ == 0 && window_admits(&now)) {
			begin_write(t, tgid, tid, now, engine);
			/* DBImpl::WriteImpl's this: whose leaders it queues
			 * for.  It returns a Status (non-trivial) by value, so
			 * the Itanium C++ ABI passes the return slot first
			 * (rdi) and this second (rsi) */
			t->db = PT_REGS_PARM2(ctx);
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
	push_phase(t, phase, now);
	return 0;
}

/* every probe's entry: attached as a uprobe, or (windows) in a window's
 * uprobe_multi links, which the loader sets its attach type for */
SEC("uprobe")
int BPF_KPROBE(ws_phase_enter)
{
	return phase_enter(ctx);
}

/* an entry attached for the whole run, windows or not (kind "always": an
 * engine's counting probe): a classic uprobe while ws_phase_enter is
 * loaded for uprobe_multi */
SEC("uprobe")
int BPF_KPROBE(ws_phase_always)
{
	return phase_enter(ctx);
}

SEC("uretprobe")
int BPF_KRETPROBE(ws_phase_exit)
{
	__u64 id = bpf_get_current_pid_tgid(), now, cookie;
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct thread_state *t;
	__u8 phase, engine;

	if (!is_traced(tgid))
		return 0;
	count(CNT_URETPROBE);
	now = bpf_ktime_get_ns();
	cookie = bpf_get_attach_cookie(ctx);
	phase = cookie;
	engine = cookie >> 8;
	t = get_thread(tid, tgid, false);
	if (!t)
		return 0;
	note_hit(t, now);
	if (engine == WS_ENGINE_POSTGRES)
		return pg_exit(t, now, phase);
	if (phase == PH_WRITE) {
		if (t->write_depth == 0)
			return 0;
		if (--t->write_depth == 0 && t->write_start)
			end_write(t, now, 0);
		return 0;
	}
	if (!t->write_start)
		return 0;
	if (phase == PH_SQL_STEP)
		return sql_step_exit(ctx, t, now);
	pop_phase(t, phase, now);
	return 0;
}

#endif /* __WS_UPROBES_H */
