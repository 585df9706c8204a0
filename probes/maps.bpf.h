/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * maps.bpf.h - the loader's parameters (const volatile, set before load),
 * every map, and the helpers that touch the shared ones: the ring buffer,
 * counters, the traced-process set, the thread table.
 */
#ifndef __WS_MAPS_H
#define __WS_MAPS_H

/* set by the loader before load */
const volatile __u8 cpu_types[WS_MAX_CPUS] = {};
const volatile __u64 min_runq_ns = 0;	/* shorter run-queue waits: no record */
const volatile bool io_all = true;	/* io records outside writes too */
/* wake the collector only when this much is waiting; else it polls */
const volatile __u64 wakeup_bytes = 1 << 20;
const volatile bool offcpu_stacks = false;	/* fill the offcpu map */
const volatile bool offcpu_kstacks = false;	/* ... with kernel stacks */
/* walk user stacks by frame pointer; else keep only the user IP (objects
 * without frame pointers give garbage frames that flood the stack map) */
const volatile bool offcpu_user_stacks = false;
/* walk the stacks of 1 in this many off-CPU periods, at random (a kernel
 * stack walk costs ~4 us here, and a synced write blocks ~3 times) */
const volatile __u32 offcpu_stack_every = 1;
const volatile bool sample_stacks = false;	/* samples take stack ids */
/* no syscall tracepoints (their slow path costs every task of the machine
 * ~0.2 us a syscall): samples and off-CPU periods read the syscall in
 * progress from the task's saved user registers */
const volatile bool regs_syscalls = false;
/* --mode window: the collector opens and closes windows (window_open, in
 * .bss, written through the skeleton's memory map); only a write that
 * begins while one is open is recorded, and the collector detaches the
 * window's probes once none is in flight (window_in_flight) */
const volatile bool window_mode = false;
/* the engines whose rows are their log's syscalls alone, turned on (bit
 * N: enum ws_engine N) by an attach line of kind "rows": an engine found
 * in an object that names none of its functions */
__u32 syscall_rows = 0;
__u32 window_open = 0;
__s64 window_in_flight = 0;
/* the window's number: a row counts in flight only in its own window */
__u32 window_gen = 0;
/* stop a traced process at each executable object it maps or execs for the
 * first time, and report it (objects.bpf.h) */
const volatile bool follow_objects = false;
/* what the task iterator is run for (set by the collector between runs) */
__u32 sweep_phase = WS_TASK_BASELINE;
/* the traced processes' write syscalls, each thread's own (its
 * task_io_accounting syscw): the live threads', summed by ws_syscw_sweep
 * (the collector zeroes it before each run), and the exited threads', each
 * added at its exit.  Together the processes' count, their last moments
 * included, and no child's twice (a process's /proc/PID/io adds its
 * reaped children's, which are traced processes themselves) */
__u64 live_syscw = 0;
__u64 exited_syscw = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);	/* resized by the loader */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);		/* tgid */
	__type(value, __u8);
} traced SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);		/* tid */
	__type(value, struct thread_state);
} threads SEC(".maps");


/* least recently used first out: the fds of processes that ended are
 * never deleted one by one, and a server's WAL fd is used all the time */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);		/* tgid << 32 | fd */
	__type(value, struct fd_info);
} fds SEC(".maps");

/* each traced thread's syncs of a log by libc's fdatasync and fsync (the
 * probe attached the whole run, windows or not), which the wall sweep
 * reads: where a log is synced once a commit (SQLite's WAL at
 * synchronous=full), the untouched lens counts commits by them.  Deleted
 * at the thread's exit, so a reused tid starts at 0 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);		/* tid */
	__type(value, __u64);
} log_syncs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {	/* per database: a follower waits for its own DB's leaders */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct busy_key);
	__type(value, struct busy_clock);
} busy SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct thread_state);
} zero_state SEC(".maps");

struct {	/* a file name being classified */
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[WS_PATH_LEN]);
} name_buf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);	/* resized by the loader */
	__type(key, __u32);
	__uint(value_size, WS_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {	/* objects reported (or seeded by the collector): not again */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct ws_obj_key);
	__type(value, __u8);
} objects_seen SEC(".maps");

struct {	/* executable mmaps in progress, by thread */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct map_args);
} map_args SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ws_offcpu_key);
	__type(value, struct ws_offcpu_val);
} offcpu SEC(".maps");

/*
 * Waking the collector per record costs a context switch per record on the
 * traced machine's CPUs; it polls every few ms instead, and is woken only
 * when the ring fills past wakeup_bytes.
 */
static __always_inline __u64 rb_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > wakeup_bytes ?
		       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);

	if (v)
		*v += 1;
}

static __always_inline void count_log_sync(__u32 tid)
{
	__u64 one = 1, *n = bpf_map_lookup_elem(&log_syncs, &tid);

	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&log_syncs, &tid, &one, BPF_NOEXIST);
}

static __always_inline bool is_traced(__u32 tgid)
{
	return bpf_map_lookup_elem(&traced, &tgid) != NULL;
}

static __always_inline __u8 cpu_type(__u32 cpu)
{
	if (cpu >= WS_MAX_CPUS)
		return CT_UNIFORM;
	barrier_var(cpu);	/* keep the mask: the verifier needs it */
	return cpu_types[cpu & (WS_MAX_CPUS - 1)];
}

/*
 * A row whose window's probes left while it was in flight (the drain gives
 * up after a second): its end, and what it did meanwhile, were never seen.
 * Let go at the thread's first hit in a later window, before that hit
 * could extend it; the collector stopped counting it when that window
 * opened (window_in_flight is reset with each window_gen).
 */
/* the thread is in no row from now (its row ended or was let go) */
static __always_inline void clear_row(struct thread_state *t)
{
	t->write_start = 0;
	t->depth = 0;
	t->write_depth = 0;
	engine_clear_row(t);
}

static __always_inline void drop_cut_row(struct thread_state *t)
{
	if (!window_mode || !t->write_start || t->win_gen == window_gen)
		return;
	count(CNT_ROWS_CUT);
	clear_row(t);
}

static __always_inline struct thread_state *get_thread(__u32 tid, __u32 tgid,
						       bool create)
{
	struct thread_state *t;
	__u32 zero = 0;

	t = bpf_map_lookup_elem(&threads, &tid);
	if (t) {
		drop_cut_row(t);
		return t;
	}
	if (!create)
		return t;
	t = bpf_map_lookup_elem(&zero_state, &zero);
	if (!t)
		return NULL;
	if (bpf_map_update_elem(&threads, &tid, t, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&threads, &tid)) {
		count(CNT_THREADS_FULL);
		return NULL;
	}
	t = bpf_map_lookup_elem(&threads, &tid);
	if (t) {
		t->rec.pid = tgid;
		t->rec.tid = tid;
	}
	return t;
}

#endif /* __WS_MAPS_H */
