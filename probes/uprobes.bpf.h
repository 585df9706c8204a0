/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * uprobes.bpf.h - the two generic uprobe programs: every probe point
 * attaches one of them with its phase in the attach cookie's byte 0 and its
 * engine (enum ws_engine) in byte 1.  The engine's unit sees the probe
 * first (engine_enter, engine_exit); what it leaves is the generic phase
 * stack's: inside an open row, a phase pushed at entry, popped at return.
 */
#ifndef __WS_UPROBES_H
#define __WS_UPROBES_H

/* a probe's entry, for both programs below */
static __always_inline int phase_enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now, cookie;
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct thread_state *t;
	int rc;

	if (!is_traced(tgid))
		return 0;
	count(CNT_UPROBE);
	now = bpf_ktime_get_ns();
	cookie = bpf_get_attach_cookie(ctx);
	if (cookie == WS_COOKIE_LOG_SYNC) {	/* libc's fdatasync, fsync */
		if (is_log_kind(fd_kind(bpf_get_current_task_btf(),
					(int)PT_REGS_PARM1_CORE(ctx)))) {
			count(CNT_WAL_SYNC_MARKS);
			count_log_sync(tid);
		}
		return 0;
	}
	t = get_thread(tid, tgid, true);
	if (!t)
		return 0;
	note_hit(t, now);
	rc = engine_enter(ctx, t, tgid, tid, now, cookie);
	if (rc >= 0)
		return rc;
	if (!t->write_start)
		return 0;
	push_phase(t, (__u8)cookie, now);
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
 * engine's counting probe, libc's syncs): a link of its own, never one of
 * a window's (a one-offset uprobe_multi link in window mode, a classic
 * uprobe otherwise) */
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
	int rc;

	if (!is_traced(tgid))
		return 0;
	count(CNT_URETPROBE);
	now = bpf_ktime_get_ns();
	cookie = bpf_get_attach_cookie(ctx);
	t = get_thread(tid, tgid, false);
	if (!t)
		return 0;
	note_hit(t, now);
	rc = engine_exit(ctx, t, now, cookie);
	if (rc >= 0)
		return rc;
	if (!t->write_start)
		return 0;
	pop_phase(t, (__u8)cookie, now);
	return 0;
}

#endif /* __WS_UPROBES_H */
