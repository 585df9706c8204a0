// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * walscope.bpf.c - attribute each database write's latency to components.
 *
 * Per thread, a stack of phases opened by uprobes (cookie = enum ws_phase)
 * and syscalls seen at sys_enter/sys_exit.  Time is charged lazily at every
 * transition to the component that was current, so a write's components
 * partition its duration exactly.  Runnable-but-not-running time (sched
 * tracepoints) is moved to RC_SCHED_RUNQ whatever the phase.
 *
 * Only processes in the "traced" map are followed; children are added at
 * fork, exec keeps the tgid.  Records go through one ring buffer; every
 * reserve failure is counted per record type.
 *
 * Overhead: each uprobe hit costs what collectors/calibrate measures
 * (~16 us here); tracepoints cost well under 1 us.  Python compensates.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "walscope.h"
#include "file_kind.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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
/* the write-group probes are not attached (--mode writes): a RocksDB write
 * leads its group if it calls the WAL, and its futex waits and yields
 * outside any probed phase are its queue (AwaitState's yield and block) */
const volatile bool groups_unprobed = false;
/* what the task iterator is run for (set by the collector between runs) */
__u32 sweep_phase = WS_TASK_BASELINE;

#ifndef EFAULT
#define EFAULT		14
#endif
#ifndef ENOSYS
#define ENOSYS		38
#endif

/* x86_64 syscall numbers (the only architecture this tool targets) */
#define NR_write		1
#define NR_sched_yield		24
#define NR_futex		202
#define NR_nanosleep		35
#define NR_clock_nanosleep	230
#define NR_close		3
#define NR_pwrite64		18
#define NR_writev		20
#define NR_fcntl		72
#define NR_flock		73
#define NR_fsync		74
#define NR_fdatasync		75
#define NR_ftruncate		77
#define NR_unlink		87
#define NR_openat		257
#define NR_unlinkat		263
#define NR_sync_file_range	277
#define NR_fallocate		285
#define NR_pwritev		296
#define NR_pwritev2		328
/* the uprobe machinery's own syscalls (x86_64, Linux 6.11+ and 6.18+): the
 * uretprobe trampoline enters the kernel through uretprobe(2), an optimized
 * uprobe through uprobe(2).  They are part of a probe hit, whose whole cost
 * (slow syscall path included) the calibrator measures: not counted again
 * as the application's untraced syscalls. */
#define NR_uretprobe		335
#define NR_uprobe		336

enum io_class { IOC_NONE, IOC_WRITE, IOC_SYNC, IOC_OTHER };

struct fd_info {
	__u64 ino;
	__u16 kind;
	__u16 __pad[3];
};

struct thread_state {
	__u64 write_start;	/* 0: not inside a write */
	__u64 last_ts;		/* last charge */
	__u64 runnable_since;	/* 0: not waiting on a run queue */
	__u64 oncpu_since;	/* 0: not on a CPU */
	__u64 sys_start;
	__u64 sys_arg;		/* openat/unlink path pointer */
	__u64 q_snap[2];	/* busy clocks when the queue phase began */
	__u64 sys_ino;
	__u64 off_since;	/* switched out at, with offcpu_stacks */
	__u64 last_walk;	/* its stacks were last walked at */
	__s32 off_kstack;
	__s32 off_ustack;
	__u64 off_uip;
	__s32 off_sys_nr;
	__u16 off_sys_kind;
	__u16 __pad;
	__u32 last_cpu;		/* CPU + 1, 0 unknown */
	__s32 sys_fd;
	__u32 sys_nr;
	__u16 sys_kind;
	__u8 in_sys;
	__u8 sys_comp;		/* 0xff: charge to the phase stack */
	__u8 sys_busy;		/* 1 sync, 2 wal write: counts in busy clocks */
	__u8 preempted;
	__u8 depth;
	__u8 write_depth;
	__u8 txn_end_depth;	/* SQLite: end the transaction below this depth */
	__u8 txn_end_flags;	/* ... with these flags */
	__u8 off_in_write;
	__u8 off_comp;
	__u8 hit_cold;		/* the current probe hit is a cold one */
	__u64 last_hit;		/* the thread's previous probe hit */
	__u8 stack[WS_MAX_DEPTH];	/* phase ids */
	struct ws_write_rec rec;
};

/* busy clocks: total time any leader spent in WAL sync / WAL write */
struct busy_clock {
	__u64 cum[2];
	__u64 since[2];
	__s64 active[2];
};

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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);		/* tgid << 32 | fd */
	__type(value, struct fd_info);
} fds SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
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
	__uint(value_size, 127 * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ws_offcpu_key);
	__type(value, struct ws_offcpu_val);
} offcpu SEC(".maps");

/* keep the record types in BTF: Python derives its dtypes from them */
const struct ws_write_rec *__ws_write_rec __attribute__((unused));
const struct ws_io_rec *__ws_io_rec __attribute__((unused));
const struct ws_sched_rec *__ws_sched_rec __attribute__((unused));
const struct ws_offcpu_ent *__ws_offcpu_ent __attribute__((unused));
const struct ws_open_rec *__ws_open_rec __attribute__((unused));
const struct ws_sample_rec *__ws_sample_rec __attribute__((unused));
const struct ws_task_rec *__ws_task_rec __attribute__((unused));
enum ws_task_phase __ws_task_phase __attribute__((unused));
enum ws_rocksdb_comp __ws_rocksdb_comp __attribute__((unused));
enum ws_stack_id __ws_stack_id __attribute__((unused));
enum ws_tuning __ws_tuning __attribute__((unused));
enum ws_sqlite_comp __ws_sqlite_comp __attribute__((unused));
_Static_assert(SC_SCHED_RUNQ == RC_SCHED_RUNQ, "run-queue slot is shared");
_Static_assert(SC_NR < WS_COMP_PENDING && RC_NR < WS_COMP_PENDING,
	       "the pending slot is free");
enum ws_file_kind __ws_file_kind __attribute__((unused));
enum ws_counter __ws_counter __attribute__((unused));
enum ws_rec_type __ws_rec_type __attribute__((unused));
enum ws_sched_ev __ws_sched_ev __attribute__((unused));
enum ws_phase __ws_phase __attribute__((unused));
enum ws_phase_comp __ws_phase_comp __attribute__((unused));
enum ws_cpu_type __ws_cpu_type __attribute__((unused));
enum ws_engine __ws_engine __attribute__((unused));

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

static __always_inline struct thread_state *get_thread(__u32 tid, __u32 tgid,
						       bool create)
{
	struct thread_state *t;
	__u32 zero = 0;

	t = bpf_map_lookup_elem(&threads, &tid);
	if (t || !create)
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

static __always_inline __u8 phase_comp(__u8 phase)
{
	switch (phase) {
#define WS_PC_CASE(p, c)	case p: return c;
	WS_PHASE_COMPS(WS_PC_CASE)
#undef WS_PC_CASE
	default:
		return RC_OTHER;
	}
}

static __always_inline __u8 stack_comp(struct thread_state *t)
{
	__u8 d = t->depth;

	if (d == 0 || d > WS_MAX_DEPTH)
		return RC_OTHER;
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

static __always_inline void busy_enter(int i, __u64 now)
{
	__u32 zero = 0;
	struct busy_clock *b = bpf_map_lookup_elem(&busy, &zero);

	if (!b)
		return;
	i &= 1;
	if (__sync_fetch_and_add(&b->active[i], 1) == 0)
		b->since[i] = now;
}

static __always_inline void busy_exit(int i, __u64 now)
{
	__u32 zero = 0;
	struct busy_clock *b = bpf_map_lookup_elem(&busy, &zero);

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
	__u32 zero = 0;
	struct busy_clock *b;

	if (t->rec.engine != WS_ENGINE_ROCKSDB ||
	    (old == RC_QUEUE) == (new == RC_QUEUE))
		return;
	b = bpf_map_lookup_elem(&busy, &zero);
	if (!b)
		return;
	if (new == RC_QUEUE) {
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

static __always_inline void begin_write(struct thread_state *t, __u32 tgid,
					__u32 tid, __u64 now, __u16 engine)
{
	__builtin_memset(&t->rec, 0, sizeof(t->rec));
	t->rec.rec_type = WS_REC_WRITE;
	t->rec.pid = tgid;
	t->rec.tid = tid;
	t->rec.engine = engine;
	t->rec.start_ns = now;
	t->rec.cpu_start = bpf_get_smp_processor_id();
	if (engine == WS_ENGINE_ROCKSDB)
		t->rec.hits_in[RC_OTHER] = 1;	/* the WriteImpl pair itself */
	t->rec.cold_hits = t->hit_cold;	/* the hit that begins it */
	t->write_start = now;
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
	comp_switch(t, cur_comp(t), RC_OTHER, now);
	add_cpu_slice(t, now);
	t->rec.dur_ns = now - t->write_start;
	t->rec.cpu_end = bpf_get_smp_processor_id();
	t->rec.flags |= flags;
	/* an autocommit SQLite statement that wrote nothing is a read */
	if ((t->rec.engine == WS_ENGINE_ROCKSDB ||
	     (t->rec.flags & (WS_WF_EXPLICIT | WS_WF_WROTE))) &&
	    bpf_ringbuf_output(&events, &t->rec, sizeof(t->rec), rb_flags()))
		count(CNT_LOST_WRITE);
	t->write_start = 0;
	t->depth = 0;
	t->write_depth = 0;
	t->txn_end_depth = 0;
	t->txn_end_flags = 0;
}

/* SQLite statement classes, from the first word of the SQL text */
enum sql_class { SQL_OTHER, SQL_BEGIN, SQL_COMMIT, SQL_ROLLBACK };

static __always_inline bool sql_delim(char c)
{
	return c == 0 || c == ' ' || c == ';' || c == '\t' || c == '\n' ||
	       c == '\r';
}

/* stmt: a Vdbe*; sql_off: offset of its zSql (decoded from sqlite3_sql) */
static __always_inline int sql_class(const void *stmt, __u32 sql_off)
{
	const char *sql = NULL;
	char b[32] = {}, w[12] = {};
	__u32 i, k = 0;

	if (!stmt || !sql_off ||
	    bpf_probe_read_user(&sql, sizeof(sql), stmt + sql_off) || !sql ||
	    bpf_probe_read_user_str(b, sizeof(b), sql) <= 0)
		return SQL_OTHER;
	while (k < 8 && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' ||
			 b[k] == '\r'))
		k++;
	for (i = 0; i < sizeof(w); i++) {	/* k + i < 20: in b */
		char c = b[(k + i) & (sizeof(b) - 1)];

		w[i] = c >= 'a' && c <= 'z' ? c - 32 : c;
	}
	if (w[0] == 'B' && w[1] == 'E' && w[2] == 'G' && w[3] == 'I' &&
	    w[4] == 'N' && sql_delim(w[5]))
		return SQL_BEGIN;
	if (w[0] == 'C' && w[1] == 'O' && w[2] == 'M' && w[3] == 'M' &&
	    w[4] == 'I' && w[5] == 'T' && sql_delim(w[6]))
		return SQL_COMMIT;
	if (w[0] == 'E' && w[1] == 'N' && w[2] == 'D' && sql_delim(w[3]))
		return SQL_COMMIT;
	if (w[0] == 'R' && w[1] == 'O' && w[2] == 'L' && w[3] == 'L' &&
	    w[4] == 'B' && w[5] == 'A' && w[6] == 'C' && w[7] == 'K' &&
	    sql_delim(w[8]) && !(w[9] == 'T' && w[10] == 'O'))
		return SQL_ROLLBACK;
	return SQL_OTHER;
}

/* a probe hit: cold if the thread's previous one was long enough ago */
static __always_inline void note_hit(struct thread_state *t, __u64 now)
{
	t->hit_cold = now - t->last_hit > WS_WARM_GAP_NS;
	t->last_hit = now;
	if (t->write_start)
		t->rec.cold_hits += t->hit_cold;
}

/* sqlite3_step entry: open a transaction if none is open, push the step */
static __always_inline int sql_step_enter(struct pt_regs *ctx,
					  struct thread_state *t, __u32 tgid,
					  __u32 tid, __u64 now, __u64 cookie)
{
	int cls = sql_class((void *)PT_REGS_PARM1(ctx), cookie >> 16);
	__u8 parent;

	if (!t->write_start) {
		begin_write(t, tgid, tid, now, WS_ENGINE_SQLITE);
		if (cls == SQL_BEGIN)
			t->rec.flags |= WS_WF_EXPLICIT;
	} else {
		charge(t, now);
		parent = cur_comp(t);
		t->rec.hits_par[parent & (WS_MAX_COMP - 1)]++;
	}
	t->rec.hits_in[SC_SQL_EXEC]++;
	t->rec.nr_calls++;
	if (t->depth >= WS_MAX_DEPTH) {
		count(CNT_DEPTH_OVERFLOW);
		t->rec.flags |= WS_WF_TRUNC;
		return 0;
	}
	t->stack[t->depth & (WS_MAX_DEPTH - 1)] = PH_SQL_STEP;
	t->depth++;
	if ((cls == SQL_COMMIT || cls == SQL_ROLLBACK) && !t->txn_end_depth) {
		t->txn_end_depth = t->depth;
		t->txn_end_flags = cls == SQL_ROLLBACK ? WS_WF_ROLLBACK : 0;
	}
	return 0;
}

#define SQLITE_BUSY	5

/* sqlite3_step return: close the transaction after COMMIT or autocommit */
static __always_inline int sql_step_exit(struct pt_regs *ctx,
					 struct thread_state *t, __u64 now)
{
	if (t->depth == 0 ||
	    t->stack[(t->depth - 1) & (WS_MAX_DEPTH - 1)] != PH_SQL_STEP) {
		count(CNT_PHASE_MISMATCH);
		t->rec.flags |= WS_WF_TRUNC;
		return 0;
	}
	charge(t, now);
	t->depth--;
	if (t->txn_end_depth && t->depth < t->txn_end_depth) {
		/* a COMMIT that found the database busy leaves it open */
		if ((int)PT_REGS_RC(ctx) == SQLITE_BUSY)
			t->txn_end_depth = 0;
		else
			end_write(t, now, t->txn_end_flags);
	} else if (t->depth == 0 && !(t->rec.flags & WS_WF_EXPLICIT)) {
		end_write(t, now, 0);
	}
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(ws_phase_enter)
{
	__u64 id = bpf_get_current_pid_tgid(), now, cookie;
	__u32 tgid = id >> 32, tid = (__u32)id;
	__u8 phase, parent, comp;
	struct thread_state *t;

	if (!is_traced(tgid))
		return 0;
	count(CNT_UPROBE);
	now = bpf_ktime_get_ns();
	cookie = bpf_get_attach_cookie(ctx);
	phase = cookie;
	t = get_thread(tid, tgid, true);
	if (!t)
		return 0;
	note_hit(t, now);
	if (phase == PH_SQL_STEP)
		return sql_step_enter(ctx, t, tgid, tid, now, cookie);
	if (phase == PH_WRITE) {
		if (t->write_depth++ == 0)
			begin_write(t, tgid, tid, now, WS_ENGINE_ROCKSDB);
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
	charge(t, now);
	comp = phase_comp(phase);
	t->rec.hits_par[parent & (WS_MAX_COMP - 1)]++;
	t->rec.hits_in[comp & (WS_MAX_COMP - 1)]++;
	if (t->depth >= WS_MAX_DEPTH) {
		count(CNT_DEPTH_OVERFLOW);
		t->rec.flags |= WS_WF_TRUNC;
		return 0;
	}
	t->stack[t->depth & (WS_MAX_DEPTH - 1)] = phase;
	t->depth++;
	if (!t->in_sys)
		comp_switch(t, parent, comp, now);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(ws_phase_exit)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct thread_state *t;
	__u8 phase, old;

	if (!is_traced(tgid))
		return 0;
	count(CNT_URETPROBE);
	now = bpf_ktime_get_ns();
	phase = bpf_get_attach_cookie(ctx);
	t = get_thread(tid, tgid, false);
	if (!t)
		return 0;
	note_hit(t, now);
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
	if (t->depth == 0 ||
	    t->stack[(t->depth - 1) & (WS_MAX_DEPTH - 1)] != phase) {
		count(CNT_PHASE_MISMATCH);
		t->rec.flags |= WS_WF_TRUNC;
		return 0;
	}
	charge(t, now);
	old = cur_comp(t);
	t->depth--;
	if (!t->in_sys)
		comp_switch(t, old, cur_comp(t), now);
	return 0;
}

static __always_inline int io_class(long nr)
{
	switch (nr) {
	case NR_write:
	case NR_pwrite64:
	case NR_writev:
	case NR_pwritev:
	case NR_pwritev2:
		return IOC_WRITE;
	case NR_fsync:
	case NR_fdatasync:
	case NR_sync_file_range:
		return IOC_SYNC;
	case NR_close:
	case NR_openat:
	case NR_unlink:
	case NR_unlinkat:
	case NR_ftruncate:
	case NR_fallocate:
	case NR_fcntl:
	case NR_flock:
	case NR_nanosleep:
	case NR_clock_nanosleep:
		return IOC_OTHER;
	}
	return IOC_NONE;
}

static __always_inline bool has_fd(long nr)
{
	return nr != NR_openat && nr != NR_unlink && nr != NR_unlinkat &&
	       nr != NR_nanosleep && nr != NR_clock_nanosleep;
}

static __always_inline bool is_log_kind(__u16 kind)
{
	return kind == FK_JOURNAL || kind == FK_WAL;
}

/*
 * The component of a syscall inside a SQLite transaction; 0xff charges it
 * to the phase stack (a checkpoint keeps its I/O).  Files of no known kind
 * are the database: SQLite writes nothing else inside a transaction but
 * temp files, which are unnamed.
 */
static __always_inline __u8 sqlite_sys_comp(struct thread_state *t, int cls,
					    long nr)
{
	__u8 d = t->depth;

	if (d && t->stack[(d - 1) & (WS_MAX_DEPTH - 1)] == PH_CHECKPOINT)
		return 0xff;
	if (cls == IOC_WRITE)
		return is_log_kind(t->sys_kind) ? SC_JOURNAL_WRITE_IO :
						  SC_DB_WRITE_IO;
	if (cls == IOC_SYNC) {
		if (is_log_kind(t->sys_kind))
			return SC_JOURNAL_SYNC_IO;
		return t->sys_kind == FK_DIR ? SC_DIR_SYNC_IO : SC_DB_SYNC_IO;
	}
	switch (nr) {
	case NR_fcntl:
	case NR_flock:
	case NR_nanosleep:
	case NR_clock_nanosleep:
		return SC_LOCK_WAIT;
	case NR_openat:
	case NR_unlink:
	case NR_unlinkat:
		return WS_COMP_PENDING;	/* kind known at exit */
	}
	if (is_log_kind(t->sys_kind))
		return SC_JOURNAL_LIFECYCLE;
	if (t->sys_kind == FK_DIR)
		return SC_DIR_SYNC_IO;
	return 0xff;
}

/* futex commands that wait (FUTEX_CMD_MASK drops the private and clock
 * flags): WAIT, LOCK_PI, WAIT_BITSET, WAIT_REQUEUE_PI, LOCK_PI2 */
#define FUTEX_CMD_MASK		0x7f
#define FUTEX_WAIT_CMDS		(1u << 0 | 1u << 6 | 1u << 9 | 1u << 11 | 1u << 13)

/*
 * With the write-group probes not attached, a RocksDB write's futex waits
 * and yields outside any probed phase are its queue: a follower's
 * AwaitState yields, then blocks on its writer's condition variable.  A
 * leader's futex wakes of its followers are not waits and stay where they
 * are.
 */
static __always_inline bool is_queue_wait(struct thread_state *t, long nr,
					  struct pt_regs *regs)
{
	__u32 cmd;

	if (!groups_unprobed || t->depth || t->in_sys ||
	    t->rec.engine != WS_ENGINE_ROCKSDB)
		return false;
	if (nr == NR_sched_yield)
		return true;
	if (nr != NR_futex)
		return false;
	cmd = (__u32)BPF_CORE_READ(regs, si) & FUTEX_CMD_MASK;
	return cmd < 32 && (FUTEX_WAIT_CMDS >> cmd & 1);
}

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
	__u8 old;

	if (cls == IOC_NONE) {	/* count it if it is inside a write */
		if (nr == NR_uretprobe || nr == NR_uprobe)
			return 0;
		tid = (__u32)bpf_get_current_pid_tgid();
		t = bpf_map_lookup_elem(&threads, &tid);
		if (!t || !t->write_start)
			return 0;
		if (!is_queue_wait(t, nr, regs)) {
			t->rec.sys_ign[cur_comp(t) & (WS_MAX_COMP - 1)]++;
			return 0;
		}
		now = bpf_ktime_get_ns();
		charge(t, now);
		old = cur_comp(t);
		sys_begin(t, nr, now);
		t->sys_comp = RC_QUEUE;
		t->in_sys = 1;
		count_sys(t, old);
		comp_switch(t, old, RC_QUEUE, now);
		return 0;
	}
	id = bpf_get_current_pid_tgid();
	tgid = id >> 32;
	tid = (__u32)id;
	if (!is_traced(tgid))
		return 0;
	t = get_thread(tid, tgid, true);
	if (!t)
		return 0;
	now = bpf_ktime_get_ns();
	sys_begin(t, nr, now);
	if (has_fd(nr)) {
		t->sys_fd = (__s32)BPF_CORE_READ(regs, di);
		key = (__u64)tgid << 32 | (__u32)t->sys_fd;
		fi = bpf_map_lookup_elem(&fds, &key);
		if (fi) {
			t->sys_kind = fi->kind;
			t->sys_ino = fi->ino;
		}
	} else if (nr == NR_unlink) {
		t->sys_arg = BPF_CORE_READ(regs, di);
	} else {
		t->sys_arg = BPF_CORE_READ(regs, si);
	}
	if (t->write_start && t->rec.engine == WS_ENGINE_SQLITE) {
		charge(t, now);
		old = cur_comp(t);
		t->sys_comp = sqlite_sys_comp(t, cls, nr);
		if (cls == IOC_WRITE || cls == IOC_SYNC)
			t->rec.flags |= WS_WF_WROTE;
		t->in_sys = 1;
		count_sys(t, old);
	} else if (t->write_start) {
		charge(t, now);
		old = cur_comp(t);
		if (cls == IOC_WRITE && t->sys_kind == FK_WAL) {
			t->sys_comp = RC_WAL_WRITE_IO;
			t->sys_busy = 2;
		} else if (cls == IOC_SYNC &&
			   (t->sys_kind == FK_WAL || t->sys_kind == FK_DIR)) {
			t->sys_comp = RC_WAL_SYNC_IO;
			t->sys_busy = 1;
		}
		if (t->sys_busy)
			busy_enter(t->sys_busy - 1, now);
		t->in_sys = 1;
		count_sys(t, old);
		comp_switch(t, old, cur_comp(t), now);
	} else {
		t->in_sys = 1;
	}
	return 0;
}

/* an open file of a task, NULL if none */
static __always_inline struct file *task_fd_file(struct task_struct *task,
						 int fd)
{
	struct file **fdarr;
	struct file *f = NULL;
	unsigned int max;

	fdarr = BPF_CORE_READ(task, files, fdt, fd);
	max = BPF_CORE_READ(task, files, fdt, max_fds);
	if (fd < 0 || (unsigned int)fd >= max)
		return NULL;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fdarr[fd]))
		return NULL;
	return f;
}

static __always_inline struct file *fd_file(int fd)
{
	return task_fd_file(bpf_get_current_task_btf(), fd);
}

static __always_inline bool inode_is_dir(struct inode *ino)
{
	umode_t mode = BPF_CORE_READ(ino, i_mode);

	return (mode & 00170000) == 0040000;
}

/* inode and directory bit of an fd of the current task */
static __always_inline __u64 fd_inode(int fd, bool *is_dir)
{
	struct file *f = fd_file(fd);
	struct inode *ino;

	*is_dir = false;
	if (!f)
		return 0;
	ino = BPF_CORE_READ(f, f_inode);
	if (!ino)
		return 0;
	*is_dir = inode_is_dir(ino);
	return BPF_CORE_READ(ino, i_ino);
}

/* enum ws_file_kind of an fd of a task, from its file name */
static __always_inline __u16 fd_kind(struct task_struct *task, int fd)
{
	struct file *f = task_fd_file(task, fd);
	const unsigned char *name;
	struct inode *ino;
	__u32 zero = 0;
	char *buf;

	buf = bpf_map_lookup_elem(&name_buf, &zero);
	if (!f || !buf)
		return FK_OTHER;
	ino = BPF_CORE_READ(f, f_inode);
	name = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	if (!ino || !name ||
	    bpf_probe_read_kernel_str(buf, WS_PATH_LEN, name) < 0)
		return FK_OTHER;
	return ws_file_kind(buf, inode_is_dir(ino));
}

/*
 * The syscall a task is in (the current one: its files are read unlocked),
 * from the user registers saved at kernel entry: a syscall entry stores its number in orig_ax and -ENOSYS in
 * ax until it returns.  Interrupts and faults store a vector or an error
 * code in orig_ax but leave the user's ax, so they pass only when user code
 * happened to hold -ENOSYS there.  -1 when not in a syscall.
 */
static __always_inline __s32 saved_syscall(struct task_struct *task,
					   __u16 *kind)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	long nr, ax;

	*kind = FK_OTHER;
	if (!regs)
		return -1;
	nr = BPF_CORE_READ(regs, orig_ax);
	ax = BPF_CORE_READ(regs, ax);
	if (nr < 0 || nr > 1023 || ax != -ENOSYS)
		return -1;
	if (io_class(nr) != IOC_NONE && has_fd(nr))
		*kind = fd_kind(task, (int)BPF_CORE_READ(regs, di));
	return nr;
}

/* returns the file kind of the path (FK_OTHER if it could not be read) */
static __always_inline __u16 emit_open(struct thread_state *t, __u32 tgid,
				       __u32 tid, __u64 now, long ret)
{
	struct ws_open_rec *r;
	struct fd_info fi = {};
	bool is_dir = false;
	__u64 key;

	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(CNT_LOST_OPEN);
		/* the fd still needs its kind; without the path it is "other" */
		return FK_OTHER;
	}
	r->rec_type = WS_REC_OPEN;
	r->pid = tgid;
	r->tid = tid;
	r->nr = t->sys_nr;
	r->ts_ns = t->sys_start;
	r->ret = ret;
	r->ino = 0;
	r->__pad0 = 0;
	r->__pad1 = 0;
	if (bpf_probe_read_user_str(r->path, sizeof(r->path),
				    (void *)t->sys_arg) < 0)
		r->path[0] = 0;
	if (t->sys_nr == NR_openat && ret >= 0) {
		r->ino = fd_inode((int)ret, &is_dir);
		fi.ino = r->ino;
		fi.kind = ws_file_kind(r->path, is_dir);
		key = (__u64)tgid << 32 | (__u32)ret;
		if (bpf_map_update_elem(&fds, &key, &fi, BPF_ANY))
			count(CNT_FDS_FULL);
		t->sys_fd = (__s32)ret;
		t->sys_kind = fi.kind;
		t->sys_ino = fi.ino;
	} else {
		fi.kind = ws_file_kind(r->path, false);
	}
	r->kind = fi.kind;
	bpf_ringbuf_submit(r, rb_flags());
	return fi.kind;
}

/* an open or unlink inside a SQLite transaction, now that its kind is known */
static __always_inline void settle_pending(struct thread_state *t, __u16 kind)
{
	__u64 v = t->rec.comp_ns[WS_COMP_PENDING];
	__u8 to = SC_OTHER;

	if (!v)
		return;
	if (is_log_kind(kind))
		to = SC_JOURNAL_LIFECYCLE;
	else if (kind == FK_DIR)
		to = SC_DIR_SYNC_IO;
	t->rec.comp_ns[to] += v;
	t->rec.comp_ns[WS_COMP_PENDING] = 0;
	t->rec.sys_in[to] += t->rec.sys_in[WS_COMP_PENDING];
	t->rec.sys_in[WS_COMP_PENDING] = 0;
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

	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t || !t->in_sys)
		return 0;
	now = bpf_ktime_get_ns();
	named = t->sys_nr == NR_openat || t->sys_nr == NR_unlink ||
		t->sys_nr == NR_unlinkat;
	if (named) {
		kind = emit_open(t, tgid, tid, now, ret);
		t->sys_kind = kind;	/* the io record's kind: unlink too */
	}
	in_write = t->write_start != 0;
	if (in_write && t->rec.engine == WS_ENGINE_SQLITE) {
		charge(t, now);
		if (t->sys_comp == WS_COMP_PENDING)
			settle_pending(t, kind);
		if ((t->sys_comp == SC_JOURNAL_WRITE_IO) && ret > 0)
			t->rec.wal_bytes += ret;
		t->rec.nr_syscalls++;
	} else if (in_write) {
		charge(t, now);
		old = cur_comp(t);
		if (t->sys_busy)
			busy_exit(t->sys_busy - 1, now);
		if (t->sys_comp == RC_WAL_WRITE_IO && ret > 0)
			t->rec.wal_bytes += ret;
		t->rec.nr_syscalls++;
		t->in_sys = 0;
		comp_switch(t, old, cur_comp(t), now);
	}
	t->in_sys = 0;

	/* a queue wait (is_queue_wait) is accounted for, not an I/O record */
	if (t->sys_nr == NR_futex || t->sys_nr == NR_sched_yield)
		return 0;
	if (!named && t->sys_nr == NR_close && ret == 0) {
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
 * (-EFAULT: no stack to walk, e.g. a user stack of a kernel-only moment) */
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
				t->rec.comp_ns[RC_SCHED_RUNQ] += now - from;
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

SEC("tp_btf/sched_process_exit")
int BPF_PROG(ws_exit, struct task_struct *p)
{
	__u32 pid = p->pid;
	struct thread_state *t;

	if (!is_traced(p->tgid))
		return 0;
	emit_task(p, WS_TASK_EXIT);
	t = bpf_map_lookup_elem(&threads, &pid);
	if (!t)
		return 0;
	if (t->write_start)
		end_write(t, bpf_ktime_get_ns(), WS_WF_PARTIAL);
	bpf_map_delete_elem(&threads, &pid);
	return 0;
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
	if (regs_syscalls && !r->ip)
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
	bpf_ringbuf_submit(r, rb_flags());
	return 0;
}

