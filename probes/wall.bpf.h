/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * wall.bpf.h - the wall sweep: each traced thread's state and the
 * kernel's accounting of it, read by a task iterator that the collector
 * runs at a fixed rate (--wall-hz) and at each window's edges.  Nothing is
 * attached to the threads' own paths, so what it reads between windows is
 * the workload untouched (analysis/untouched.py, the untouched lens).
 */
#ifndef __WS_WALL_H
#define __WS_WALL_H

#define WS_TASK_RUNNING	0x00000000	/* __state of a runnable task */

/* bytes the task passed to write syscalls; 0 where the kernel keeps none
 * (CONFIG_TASK_XACCT unset) */
static __always_inline __u64 task_wchar(struct task_struct *p)
{
	if (!bpf_core_field_exists(p->ioac.wchar))
		return 0;
	return BPF_CORE_READ(p, ioac.wchar);
}

static __always_inline __u32 wall_state(struct task_struct *p)
{
	if (BPF_CORE_READ(p, on_cpu))
		return WS_WALL_ONCPU;
	if (BPF_CORE_READ(p, __state) == WS_TASK_RUNNING)
		return WS_WALL_RUNQ;
	return WS_WALL_BLOCKED;
}

SEC("iter/task")
int ws_wall_sweep(struct bpf_iter__task *ctx)
{
	struct task_struct *p = ctx->task;
	struct ws_wall_rec *r;
	struct pt_regs *regs;
	__u32 tid;
	__u64 *syncs;

	if (!p || (p->flags & PF_EXITING) || !is_traced(p->tgid))
		return 0;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(CNT_LOST_WALL);
		return 0;
	}
	r->rec_type = WS_REC_WALL;
	r->pid = p->tgid;
	r->tid = p->pid;
	r->ts_ns = bpf_ktime_get_ns();
	r->oncpu_ns = BPF_CORE_READ(p, se.sum_exec_runtime);
	r->runq_ns = BPF_CORE_READ(p, sched_info.run_delay);
	r->syscw = task_syscw(p);
	r->wchar = task_wchar(p);
	tid = p->pid;
	syncs = bpf_map_lookup_elem(&log_syncs, &tid);
	r->log_syncs = syncs ? *syncs : 0;
	r->state = wall_state(p);
	r->sys_nr = -1;
	r->sys_kind = 0;
	r->__pad0 = 0;
	r->user_ip = 0;
	r->born_ns = BPF_CORE_READ(p, start_time);
	/* blocked or runnable: in which syscall, from where in user code (a
	 * preempted thread's user IP; a woken one's syscall, not yet back) */
	if (r->state != WS_WALL_ONCPU) {
		r->sys_nr = saved_syscall(p, &r->sys_kind);
		regs = (struct pt_regs *)bpf_task_pt_regs(p);
		if (regs)
			r->user_ip = BPF_CORE_READ(regs, ip);
	}
	BPF_CORE_READ_STR_INTO(&r->comm, p, comm);
	bpf_ringbuf_submit(r, rb_flags());
	return 0;
}

#endif /* __WS_WALL_H */
