/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * syscalls.bpf.h - sys_enter/sys_exit: a traced syscall inside a write is
 * charged to the component its engine's rule gives it (engine_sys_comp:
 * its WAL write or sync, its journal's I/O), any other one is counted for
 * compensation; io records for every traced syscall.
 */
#ifndef __WS_SYSCALLS_H
#define __WS_SYSCALLS_H

/* a traced syscall begins: no file, no component, nothing busy yet */
static __always_inline void sys_begin(struct thread_state *t, long nr,
				      __u64 now)
{
	t->sys_nr = nr;
	t->sys_start = now;
	t->sys_fd = -1;
	t->sys_kind = FK_OTHER;
	t->sys_ino = 0;
	t->sys_comp = 0xff;
	t->sys_busy = 0;
}

/* a syscall began inside a write: count it where its cost lands */
static __always_inline void count_sys(struct thread_state *t, __u8 parent)
{
	__u8 own = cur_comp(t);

	t->rec.sys_par[parent & (WS_MAX_COMP - 1)]++;
	t->rec.sys_in[own & (WS_MAX_COMP - 1)]++;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(ws_sys_enter, struct pt_regs *regs, long nr)
{
	__u64 id, now, key;
	__u32 tgid, tid;
	struct thread_state *t;
	struct fd_info *fi;
	int cls = io_class(nr);
	__u8 old, q;

	if (cls == IOC_NONE) {	/* count it if it is inside a write */
		if (nr == WS_NR_uretprobe || nr == WS_NR_uprobe)
			return 0;
		id = bpf_get_current_pid_tgid();
		tid = (__u32)id;
		if (nr == WS_NR_mmap && follow_objects && is_traced(id >> 32))
			map_enter(regs, tid);
		t = bpf_map_lookup_elem(&threads, &tid);
		if (!t)
			return 0;
		count(CNT_TRACEPOINT);	/* a traced thread's slow path */
		if (!t->write_start)
			return 0;
		q = engine_queue_comp(t->rec.engine);
		if (q == 0xff || !engine_queue_wait(t, nr, regs)) {
			t->rec.sys_ign[cur_comp(t) & (WS_MAX_COMP - 1)]++;
			return 0;
		}
		now = bpf_ktime_get_ns();
		charge(t, now);
		old = cur_comp(t);
		sys_begin(t, nr, now);
		t->sys_comp = q;
		t->in_sys = 1;
		count_sys(t, old);
		comp_switch(t, old, q, now);
		return 0;
	}
	id = bpf_get_current_pid_tgid();
	tgid = id >> 32;
	tid = (__u32)id;
	if (!is_traced(tgid))
		return 0;
	count(CNT_TRACEPOINT);
	t = get_thread(tid, tgid, true);
	if (!t)
		return 0;
	if (t->write_start && (nr == WS_NR_nanosleep || nr == WS_NR_clock_nanosleep))
		count(CNT_WRITE_SLEEPS);
	now = bpf_ktime_get_ns();
	sys_begin(t, nr, now);
	if (has_fd(nr)) {
		t->sys_fd = (__s32)BPF_CORE_READ(regs, di);
		key = (__u64)tgid << 32 | (__u32)t->sys_fd;
		fi = bpf_map_lookup_elem(&fds, &key);
		if (t->sys_fd >= 0) {
			bool is_dir;
			__u64 ino = fd_inode(t->sys_fd, &is_dir);

			/* an entry whose inode is not the fd's own: the fd was
			 * closed and reused where nothing saw it (between
			 * windows), so its kind is the old file's */
			if (fi && fi->ino != ino)
				fi = NULL;
			if (fi) {
				t->sys_kind = fi->kind;
				t->sys_ino = fi->ino;
			} else {
				/* opened where nothing saw it (before -p attach, in
				 * a parent before fork, between windows): its kind
				 * from its name, once */
				struct fd_info nfi = {};

				nfi.kind = fd_kind(bpf_get_current_task_btf(), t->sys_fd);
				nfi.ino = ino;
				if (bpf_map_update_elem(&fds, &key, &nfi, BPF_ANY) == -E2BIG)
					count(CNT_FDS_FULL);
				t->sys_kind = nfi.kind;
				t->sys_ino = nfi.ino;
			}
		}
	} else if (nr == WS_NR_unlink) {
		t->sys_arg = BPF_CORE_READ(regs, di);
	} else {
		t->sys_arg = BPF_CORE_READ(regs, si);
	}
	if (!t->write_start)	/* a row of its log's syscalls may begin */
		engine_sys_outside(t, cls, nr, tgid, tid, now);
	if (t->write_start) {
		charge(t, now);
		old = cur_comp(t);
		t->sys_comp = engine_sys_comp(t, cls, nr);
		if (t->sys_busy)
			busy_enter(t, t->sys_busy - 1, now);
		t->in_sys = 1;
		count_sys(t, old);
		comp_switch(t, old, cur_comp(t), now);
	} else {
		t->in_sys = 1;
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(ws_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 id = bpf_get_current_pid_tgid(), now, key;
	__u32 tgid = id >> 32, tid = (__u32)id, cpu;
	struct thread_state *t;
	struct ws_io_rec *r;
	__u8 old, in_write;
	__u16 kind = FK_OTHER;
	bool named;
	int ends;

	if (follow_objects && BPF_CORE_READ(regs, orig_ax) == WS_NR_mmap) {
		map_exit(ret, tid);
		return 0;
	}
	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t || !t->in_sys)
		return 0;
	count(CNT_TRACEPOINT);
	now = bpf_ktime_get_ns();
	named = t->sys_nr == WS_NR_openat || t->sys_nr == WS_NR_unlink ||
		t->sys_nr == WS_NR_unlinkat;
	if (named) {
		kind = emit_open(t, tgid, tid, now, ret);
		t->sys_kind = kind;	/* the io record's kind: unlink too */
	}
	in_write = t->write_start != 0;
	if (in_write) {
		charge(t, now);
		old = cur_comp(t);
		engine_sys_exit(t, kind, ret);
		if (t->sys_busy)
			busy_exit(t, t->sys_busy - 1, now);
		if (t->sys_busy == 2 && ret > 0)	/* a WAL write */
			t->rec.wal_bytes += ret;
		t->rec.nr_syscalls++;
		t->in_sys = 0;
		comp_switch(t, old, cur_comp(t), now);
		ends = engine_sys_ends_row(t, kind, ret);
		if (ends >= 0)
			end_write(t, now, ends);
	}
	t->in_sys = 0;

	/* a queue wait (is_queue_wait) is accounted for, not an I/O record */
	if (t->sys_nr == WS_NR_futex || t->sys_nr == WS_NR_sched_yield)
		return 0;
	if (!named && t->sys_nr == WS_NR_close && ret == 0) {
		key = (__u64)tgid << 32 | (__u32)t->sys_fd;
		bpf_map_delete_elem(&fds, &key);
	}
	if (!io_all && !in_write)
		return 0;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(CNT_LOST_IO);
		return 0;
	}
	cpu = bpf_get_smp_processor_id();
	r->rec_type = WS_REC_IO;
	r->pid = tgid;
	r->tid = tid;
	r->nr = t->sys_nr;
	r->ts_ns = t->sys_start;
	r->lat_ns = now - t->sys_start;
	r->ret = ret;
	r->ino = t->sys_ino;
	r->fd = t->sys_fd;
	r->kind = t->sys_kind;
	r->in_write = in_write;
	r->cpu = cpu;
	r->cpu_type = cpu_type(cpu);
	r->__pad = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	bpf_ringbuf_submit(r, rb_flags());
	return 0;
}

#endif /* __WS_SYSCALLS_H */
