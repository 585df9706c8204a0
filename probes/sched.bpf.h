/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sched.bpf.h - scheduler effects: run-queue waits charged to sched_runq,
 * migrations between core types, and off-CPU periods summed per stack.
 */
#ifndef __WS_SCHED_H
#define __WS_SCHED_H

static __always_inline void emit_sched(__u32 ev, struct task_struct *p,
				       __u64 now, __u64 dur, __u32 from,
				       __u32 to, __u8 in_write, __u8 preempted)
{
	struct ws_sched_rec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count(CNT_LOST_SCHED);
		return;
	}
	r->rec_type = WS_REC_SCHED;
	r->pid = p->tgid;
	r->tid = p->pid;
	r->ev = ev;
	r->ts_ns = now;
	r->dur_ns = dur;
	r->from_cpu = from;
	r->to_cpu = to;
	r->from_type = cpu_type(from);
	r->to_type = cpu_type(to);
	r->in_write = in_write;
	r->preempted = preempted;
	r->__pad = 0;
	bpf_ringbuf_submit(r, rb_flags());
}

/* a stack map id; a stack that could not be stored is counted, not hidden
 * (-EFAULT: no stack to walk, e.g. a user stack of a kernel-only moment;
 * else -EEXIST: another stack holds its hash bucket, as nothing replaces
 * a stored stack, the map's elements never run out) */
static __always_inline __s32 stack_id(void *ctx, __u64 flags)
{
	long id = bpf_get_stackid(ctx, &stacks, flags);

	if (id < 0 && id != -EFAULT)
		count(CNT_LOST_STACK);
	return id;
}

/* the user-mode IP a task entered the kernel from */
static __always_inline __u64 user_ip(struct task_struct *task)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	return regs ? BPF_CORE_READ(regs, ip) : 0;
}

/* an off-CPU period of a traced thread ends: sum it under its stacks */
static __always_inline void offcpu_end(struct thread_state *t,
				       struct task_struct *p, __u64 now)
{
	struct ws_offcpu_key key = {};
	struct ws_offcpu_val *v, zero = {};
	__u64 woke = t->runnable_since, off = now - t->off_since, blocked;

	if (t->preempted)	/* runnable all along */
		blocked = 0;
	else if (woke >= t->off_since && woke <= now)
		blocked = woke - t->off_since;
	else			/* no wakeup seen: all blocked */
		blocked = off;
	key.pid = p->tgid;
	key.kstack_id = t->off_kstack;
	key.ustack_id = t->off_ustack;
	key.user_ip = t->off_uip;
	key.in_write = t->off_in_write;
	key.comp = t->off_comp;
	key.sys_nr = t->off_sys_nr;
	key.sys_kind = t->off_sys_kind;
	BPF_CORE_READ_STR_INTO(&key.comm, p, comm);
	v = bpf_map_lookup_elem(&offcpu, &key);
	if (!v) {	/* EEXIST from a racing insert is fine */
		bpf_map_update_elem(&offcpu, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&offcpu, &key);
		if (!v) {
			count(CNT_LOST_OFFCPU);
			return;
		}
	}
	__sync_fetch_and_add(&v->blocked_ns, blocked);
	__sync_fetch_and_add(&v->runnable_ns, off - blocked);
	__sync_fetch_and_add(&v->count, 1);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ws_sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns(), from, wait;
	__u32 cpu = bpf_get_smp_processor_id(), pid, last;
	struct thread_state *t;
	__u8 ft, tt;
	bool walk;

	if (is_traced(prev->tgid)) {
		count(CNT_TRACEPOINT);
		pid = prev->pid;
		t = bpf_map_lookup_elem(&threads, &pid);
		if (t) {
			add_cpu_slice(t, now);
			t->oncpu_since = 0;
			if (prev_state == 0) {	/* TASK_RUNNING: preempted */
				t->runnable_since = now;
				t->preempted = 1;
			} else {
				t->runnable_since = 0;
			}
			if (offcpu_stacks) {	/* prev is current here */
				walk = offcpu_stack_every <= 1 ||
				       bpf_get_prandom_u32() % offcpu_stack_every == 0 ||
				       now - t->last_walk > WS_STACK_FLOOR_NS;
				if (walk)
					t->last_walk = now;
				t->off_since = now;
				t->off_kstack = !offcpu_kstacks ? WS_NO_STACK :
						walk ? stack_id(ctx, 0) :
						WS_STACK_UNSAMPLED;
				t->off_ustack = WS_NO_STACK;
				if (t->in_sys) {
					t->off_sys_nr = t->sys_nr;
					t->off_sys_kind = t->sys_kind;
				} else if (regs_syscalls) {
					t->off_sys_nr = saved_syscall(prev,
							&t->off_sys_kind);
				} else {
					t->off_sys_nr = -1;
					t->off_sys_kind = FK_OTHER;
				}
				/* the user IP always: an unsampled period is
				 * grouped with sampled ones by it */
				t->off_uip = user_ip(prev);
				if (offcpu_user_stacks)
					t->off_ustack = walk ?
						stack_id(ctx, BPF_F_USER_STACK) :
						WS_STACK_UNSAMPLED;
				t->off_in_write = t->write_start != 0;
				t->off_comp = t->write_start ? cur_comp(t) : 0;
			}
		}
	}
	if (!is_traced(next->tgid))
		return 0;
	t = get_thread(next->pid, next->tgid, true);
	if (!t)
		return 0;
	if (offcpu_stacks && t->off_since) {
		offcpu_end(t, next, now);
		t->off_since = 0;
	}
	if (t->runnable_since) {
		from = t->runnable_since;
		if (t->write_start) {
			if (from < t->last_ts)
				from = t->last_ts;
			charge(t, from);
			if (now > from) {
				t->rec.comp_ns[WS_COMP_SCHED_RUNQ] += now - from;
				t->last_ts = now;
			}
		}
		wait = now - t->runnable_since;
		if (wait >= min_runq_ns)
			emit_sched(SE_RUNQ, next, now, wait, cpu, cpu,
				   t->write_start != 0, t->preempted);
		t->runnable_since = 0;
	}
	last = t->last_cpu;
	if (last && last - 1 != cpu) {
		ft = cpu_type(last - 1);
		tt = cpu_type(cpu);
		if (t->write_start)
			t->rec.mig[ft & 3][tt & 3]++;
		emit_sched(SE_MIGRATE, next, now, 0, last - 1, cpu,
			   t->write_start != 0, 0);
	}
	t->last_cpu = cpu + 1;
	t->oncpu_since = now;
	t->preempted = 0;
	return 0;
}

static __always_inline int on_wakeup(struct task_struct *p)
{
	struct thread_state *t;
	__u32 pid;

	if (!is_traced(p->tgid))
		return 0;
	pid = p->pid;
	t = get_thread(pid, p->tgid, true);
	if (t && !t->runnable_since && !t->oncpu_since) {
		t->runnable_since = bpf_ktime_get_ns();
		t->preempted = 0;
	}
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(ws_sched_wakeup, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(ws_sched_wakeup_new, struct task_struct *p)
{
	return on_wakeup(p);
}

#endif /* __WS_SCHED_H */
