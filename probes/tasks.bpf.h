/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tasks.bpf.h - the traced process set and its threads' lives: fork,
 * exit (a write cut short is emitted partial), the kernel's own time
 * accounting by a task iterator, and timed sampling.
 */
#ifndef __WS_TASKS_H
#define __WS_TASKS_H

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ws_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = child->tgid;
	__u8 one = 1;

	if (parent->tgid != child->tgid && is_traced(parent->tgid))
		bpf_map_update_elem(&traced, &tgid, &one, BPF_ANY);
	return 0;
}

/*
 * A thread's on-CPU and run-queue time as the scheduler accounts it anyway
 * (sum_exec_runtime, sched_info): the off-CPU split with nothing attached
 * to the context switch.
 */
static __always_inline void emit_task(struct task_struct *p, __u32 phase)
{
	struct ws_task_rec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count(CNT_LOST_TASK);
		return;
	}
	r->rec_type = WS_REC_TASK;
	r->pid = BPF_CORE_READ(p, tgid);
	r->tid = BPF_CORE_READ(p, pid);
	r->phase = phase;
	r->ts_ns = bpf_ktime_get_ns();
	r->start_ns = BPF_CORE_READ(p, start_time);
	r->oncpu_ns = BPF_CORE_READ(p, se.sum_exec_runtime);
	r->runq_ns = BPF_CORE_READ(p, sched_info.run_delay);
	r->runs = BPF_CORE_READ(p, sched_info.pcount);
	r->nvcsw = BPF_CORE_READ(p, nvcsw);
	r->nivcsw = BPF_CORE_READ(p, nivcsw);
	BPF_CORE_READ_STR_INTO(&r->comm, p, comm);
	bpf_ringbuf_submit(r, rb_flags());
}

/* every thread of the traced processes (the collector reads the iterator
 * with sweep_phase set: when a process is added, and when tracing stops) */
SEC("iter/task")
int ws_task_sweep(struct bpf_iter__task *ctx)
{
	struct task_struct *p = ctx->task;

	if (p && is_traced(p->tgid))
		emit_task(p, sweep_phase);
	return 0;
}

#define PF_EXITING	0x00000004	/* set before sched_process_exit fires */

/* a task's own write syscalls; 0 where the kernel keeps none
 * (CONFIG_TASK_XACCT unset) */
static __always_inline __u64 task_syscw(struct task_struct *p)
{
	if (!bpf_core_field_exists(p->ioac.syscw))
		return 0;
	return BPF_CORE_READ(p, ioac.syscw);
}

/* the live threads' own write syscalls: an exiting thread (a zombie
 * leader too) is counted in exited_syscw, at its exit */
SEC("iter/task")
int ws_syscw_sweep(struct bpf_iter__task *ctx)
{
	struct task_struct *p = ctx->task;

	if (p && !(p->flags & PF_EXITING) && is_traced(p->tgid))
		live_syscw += task_syscw(p);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(ws_exit, struct task_struct *p)
{
	__u32 pid = p->pid;
	struct thread_state *t;

	if (!is_traced(p->tgid))
		return 0;
	emit_task(p, WS_TASK_EXIT);
	__sync_fetch_and_add(&exited_syscw, task_syscw(p));
	bpf_map_delete_elem(&log_syncs, &pid);
	t = bpf_map_lookup_elem(&threads, &pid);
	if (t) {
		/* a row whose window's probes left before it ended was let
		 * go, not cut short at the exit: a SQLite client's BEGIN that
		 * waited 1.6 s in its busy handler past the last window read
		 * 7.8 s, to its thread's exit (drop_cut_row in a later one) */
		if (t->write_start && window_mode &&
		    (!window_open || t->win_gen != window_gen)) {
			count(CNT_ROWS_CUT);
			clear_row(t);
		} else if (t->write_start) {
			end_write(t, bpf_ktime_get_ns(), WS_WF_PARTIAL);
		}
		bpf_map_delete_elem(&threads, &pid);
	}
	/* the process's last thread (do_exit counted it out of signal->live
	 * before this tracepoint): the process is traced no more, so its pid,
	 * reused, is another process's (a long serve meets thousands) */
	if (BPF_CORE_READ(p, signal, live.counter) == 0) {
		__u32 tgid = p->tgid;

		bpf_map_delete_elem(&traced, &tgid);
	}
	return 0;
}

/* the user stack from the sample's stack pointer, for the tracer to unwind
 * with the objects' call frame information (a sample in user code only:
 * one in the kernel is placed by its syscall); near a stack's top fewer
 * words are there to read (a failed read zeroes what it was given) */
static __always_inline void copy_user_stack(struct bpf_perf_event_data *ctx,
					    struct ws_sample_rec *r)
{
	r->__pad0 = 0;
	r->stack_words = 0;
	r->sp = 0;
	r->bp = 0;
	if (!r->ip)
		return;
	r->sp = PT_REGS_SP(&ctx->regs);
	r->bp = PT_REGS_FP(&ctx->regs);
	r->stack_words = WS_SAMPLE_STACK_WORDS;
	if (bpf_probe_read_user(r->stack, sizeof(r->stack), (void *)r->sp) == 0)
		return;
	r->stack_words = WS_SAMPLE_STACK_WORDS / 8;
	if (bpf_probe_read_user(r->stack, sizeof(r->stack) / 8, (void *)r->sp))
		r->stack_words = 0;
}

/* timed sampling of traced threads: --mode sample and on-CPU flame graphs */
SEC("perf_event")
int ws_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct thread_state *t;
	struct ws_sample_rec *r;

	if (!tgid || !is_traced(tgid))
		return 0;
	count(CNT_SAMPLES);
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(CNT_LOST_SAMPLE);
		return 0;
	}
	r->rec_type = WS_REC_SAMPLE;
	r->pid = tgid;
	r->tid = tid;
	r->cpu = bpf_get_smp_processor_id();
	r->ts_ns = bpf_ktime_get_ns();
	r->ip = PT_REGS_IP(&ctx->regs);
	if (r->ip >= 0xffff800000000000ULL)	/* kernel half on x86_64 */
		r->ip = 0;
	r->sys_nr = -1;
	r->sys_kind = 0;
	r->in_write = 0;
	r->comp = 0;
	t = bpf_map_lookup_elem(&threads, &tid);
	/* in the kernel: the syscall in progress from the saved registers
	 * (no syscall tracepoint is attached in --mode sample, nor between
	 * windows); a traced syscall's own record says it better, below */
	if (!r->ip)
		r->sys_nr = saved_syscall(bpf_get_current_task_btf(),
					  &r->sys_kind);
	if (t) {
		if (t->in_sys) {
			r->sys_nr = t->sys_nr;
			r->sys_kind = t->sys_kind;
		}
		r->in_write = t->write_start != 0;
		r->comp = cur_comp(t);
	}
	r->ustack_id = -1;
	r->kstack_id = -1;
	if (sample_stacks) {	/* --stacks bpf: the on-CPU flame graph */
		r->ustack_id = stack_id(ctx, BPF_F_USER_STACK);
		r->kstack_id = r->ip ? -1 : stack_id(ctx, 0);
	}
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	copy_user_stack(ctx, r);
	bpf_ringbuf_submit(r, rb_flags());
	return 0;
}

#endif /* __WS_TASKS_H */
