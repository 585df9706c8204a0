/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * walscope.h - the records walscope's BPF side streams to the collector.
 *
 * This header is the single source of truth for every record layout and
 * every enum the Python side uses.  Python (runfolder/records.py) derives
 * its numpy dtypes from the BTF of the compiled probes/walscope.bpf.o and
 * its component and kind names from the enums below; tests check both.
 *
 * Rules: fixed-width types only, explicit padding, every record starts with
 * a __u32 rec_type so the collector can demultiplex the ring buffer.
 */
#ifndef __WALSCOPE_H
#define __WALSCOPE_H

#define WS_MAX_COMP	16	/* component slots in a write record (power of two) */
#define WS_MAX_DEPTH	16	/* phase nesting per thread */
#define WS_PATH_LEN	256	/* power of two: BPF masks indexes with it */
#define WS_COMM_LEN	16
/* words of user stack a sample copies from its stack pointer: enough for
 * the call frame information to name a few callers of a function the
 * object names no symbol for (a stripped library's, libc's memcpy) */
#define WS_SAMPLE_STACK_WORDS	64
#define WS_NAME_LEN	64	/* a file name in an object record */

/* rec_type: one file per type is written by the collector */
enum ws_rec_type {
	WS_REC_WRITE = 1,
	WS_REC_IO = 2,
	WS_REC_SCHED = 3,
	WS_REC_OPEN = 4,
	WS_REC_SAMPLE = 5,
	WS_REC_TASK = 6,
	WS_REC_OBJECT = 7,
	WS_REC_WALL = 8,
};

/* component slots every engine's enum shares (each unit asserts them) */
#define WS_COMP_OTHER		0	/* the residual: in no other component */
#define WS_COMP_SCHED_RUNQ	7	/* runnable, not running (sched.bpf.h) */
/* slot for syscall time whose component is known only at its exit */
#define WS_COMP_PENDING	(WS_MAX_COMP - 1)

/*
 * A probe's attach cookie: byte 0 its phase (a member of its engine's phase
 * enum, in a range no other engine uses), byte 1 its engine (enum
 * ws_engine), bits 16.. an argument of the engine's.  A phase is charged
 * to a component; nesting is exclusive (a child's time leaves its
 * parent).  Phases from WS_PH_MARKERS on are entry-only markers.
 */
enum ws_phase {
	WS_PH_MARKERS = 100,
};

/* the engines (generated from the registry): their ids, record
 * interfaces, phase tables and per-thread state */
#include "engines.gen.h"

/* the component each phase is charged to (any other phase: the residual);
 * the BPF program's phase_comp() and Python (enum ws_phase_comp in BTF,
 * WS_PC_<phase> = component) both read this one table */
#define WS_PC_ENUM(p, c)	WS_PC_##p = c,
enum ws_phase_comp {
	WS_PHASE_COMPS(WS_PC_ENUM)
};
#undef WS_PC_ENUM

/* file kinds, decided when the file is opened (see file_kind.h) */
enum ws_file_kind {
	FK_OTHER = 0,
	FK_WAL = 1,
	FK_SST = 2,
	FK_MANIFEST = 3,
	FK_JOURNAL = 4,
	FK_DB = 5,
	FK_DIR = 6,
	FK_NR = 7,
};

/*
 * A log file the user names (--log-file GLOB, collectors/log_files.py):
 * its basename's first plen bytes and last slen bytes (the whole name,
 * plen bytes, when exact), and its parent directory's name (dlen bytes; 0:
 * any), each packed big-endian as file_kind.h's path state keeps them.
 * Such a file is of kind FK_WAL, before any engine's rule.
 */
#define WS_LOG_RULES 4		/* a power of two: BPF masks indexes */
struct ws_log_rule {
	__u64 prefix, suffix, dir;
	__u8 plen, slen, dlen, exact;
	__u32 __pad;
};

/* CPU types, set per CPU by the loader */
enum ws_cpu_type {
	CT_UNIFORM = 0,		/* homogeneous or undeclared */
	CT_P = 1,
	CT_E = 2,
};

/* write record flags (ws_write_rec.flags) */
enum ws_write_flag {
	WS_WF_LEADER = 0x1,	/* led its group: did the WAL I/O others
				 * waited for (the engine's unit says how
				 * it knows) */
	WS_WF_TRUNC = 0x2,	/* phase stack overflowed or desynchronised */
	WS_WF_PARTIAL = 0x4,	/* emitted at thread exit, write never returned */
	WS_WF_ROLLBACK = 0x8,	/* ended by a rollback */
	WS_WF_EXPLICIT = 0x10,	/* opened by an explicit begin (else autocommit) */
	WS_WF_WROTE = 0x20,	/* a write or sync syscall happened inside */
	WS_WF_LOGGED = 0x40,	/* wrote its commit or abort record */
	WS_WF_CHECKPOINT = 0x80, /* a checkpoint ran meanwhile */
	WS_WF_JOINED = 0x100,	/* opened inside a transaction begun before
				 * its window (SQLite): its start unseen,
				 * followed to its end and not kept */
};

/*
 * x86_64 syscall numbers (the only architecture walscope targets), grouped
 * by what the BPF side makes of them.  The first three groups are traced
 * (an io record each; inside a write, a component); the last is only
 * recognised.  Python names syscalls from these enums (WS_NR_<name>).
 */
enum ws_sys_write {		/* data into a file: *_write_io */
	WS_NR_write = 1,
	WS_NR_pwrite64 = 18,
	WS_NR_writev = 20,
	WS_NR_pwritev = 296,
	WS_NR_pwritev2 = 328,
};

enum ws_sys_sync {		/* data to stable storage: *_sync_io */
	WS_NR_fsync = 74,
	WS_NR_fdatasync = 75,
	WS_NR_sync_file_range = 277,
};

enum ws_sys_other {		/* file lifecycle, locks, sleeps */
	WS_NR_close = 3,
	WS_NR_nanosleep = 35,
	WS_NR_fcntl = 72,
	WS_NR_flock = 73,
	WS_NR_ftruncate = 77,
	WS_NR_unlink = 87,
	WS_NR_clock_nanosleep = 230,
	WS_NR_openat = 257,
	WS_NR_unlinkat = 263,
	WS_NR_fallocate = 285,
};

enum ws_sys_untraced {
	WS_NR_mmap = 9,		/* an executable mapping: an object to inspect */
	WS_NR_sched_yield = 24,	/* a writer spinning for its leader */
	WS_NR_futex = 202,	/* ... and blocking for it */
	/* the uprobe machinery's own syscalls (Linux 6.11+ and 6.18+): the
	 * uretprobe trampoline enters the kernel through uretprobe(2), an
	 * optimized uprobe through uprobe(2).  They are part of a probe hit,
	 * whose whole cost the calibrator measures: not counted again as the
	 * application's untraced syscalls */
	WS_NR_uretprobe = 335,
	WS_NR_uprobe = 336,
};

/*
 * One per row: an engine's write or transaction (its unit says which).
 * comp_ns partitions dur_ns, slots by the engine's enum.
 */
struct ws_write_rec {
	__u32 rec_type;
	__u32 pid;
	__u32 tid;
	__u16 engine;
	__u16 flags;
	__u64 start_ns;		/* CLOCK_MONOTONIC */
	__u64 dur_ns;
	__u64 comp_ns[WS_MAX_COMP];
	/* probe hits, by the component they inflated (see calibrate.c):
	 * hits_in: probe pairs whose inside overhead fell in the component,
	 * hits_par: probe pairs whose outside overhead fell in it,
	 * hits_one: entry-only probes that fired while it was current */
	__u32 hits_in[WS_MAX_COMP];
	__u32 hits_par[WS_MAX_COMP];
	__u32 hits_one[WS_MAX_COMP];
	/* traced syscalls: by their own component, and by the one they
	 * interrupted (each costs a few hundred ns of tracepoint work) */
	__u16 sys_in[WS_MAX_COMP];
	__u16 sys_par[WS_MAX_COMP];
	/* untraced syscalls (futex, pread...) by the component they fell in:
	 * each still passes the sys_enter/sys_exit programs */
	__u16 sys_ign[WS_MAX_COMP];
	__u64 q_behind_sync_ns;	/* queue time overlapping a leader's WAL sync */
	__u64 q_behind_walw_ns;	/* ... overlapping a leader's WAL write */
	__u64 cpu_ns[4];	/* on-CPU time by enum ws_cpu_type; 3 unused */
	__u16 mig[4][4];	/* migrations [from type][to type]; type 3 unused */
	__u16 nr_syscalls;
	__u16 nr_calls;		/* the engine's statement calls inside */
	__u32 wal_bytes;	/* bytes written to its log (WAL or journal) */
	__u32 cpu_start;
	__u32 cpu_end;
	/* probe hits (entry or return) that came more than WS_WARM_GAP_NS
	 * after the thread's previous hit: their code and data are likely out
	 * of the caches, so compensation charges them the cold calibration */
	__u32 cold_hits;
};

enum ws_tuning {
	WS_WARM_GAP_NS = 10000,
	/* with off-CPU stacks sampled 1 in N, a thread whose last walk is
	 * older than this gets one anyway: a rare or idle thread's periods
	 * are not all left without a stack (at most 100 walks/s a thread) */
	WS_STACK_FLOOR_NS = 10000000,
	WS_STACK_DEPTH = 127,	/* frames kept per stack (the kernel's maximum) */
	/* a workload runs at 0.64-0.88 of its pace for tens of ms after a
	 * window's detach (bench/results/window_cost.md), 16 synced writers on
	 * 16 CPUs at 0.91 35 ms after it and 0.99 85 ms after
	 * (many_cores/window_cost.md): the untraced pace (collect_windows.c)
	 * and the untouched lens (analysis/untouched.py) begin this long
	 * after it */
	WS_SETTLE_NS = 80000000,
};

/* the attach cookie of libc's fdatasync and fsync, attached for good in
 * every process that maps libc (collectors/log_syncs.py): a sync of a log
 * (FK_WAL or FK_JOURNAL, by the fd's file) counts in CNT_WAL_SYNC_MARKS,
 * windows or not; no engine has id 0xff */
enum ws_cookie {
	WS_COOKIE_LOG_SYNC = 0xffff,
};

/* One per traced syscall (enum ws_sys_write, ws_sys_sync, ws_sys_other). */
struct ws_io_rec {
	__u32 rec_type;
	__u32 pid;
	__u32 tid;
	__u32 nr;		/* syscall number */
	__u64 ts_ns;		/* entry time */
	__u64 lat_ns;
	__s64 ret;
	__u64 ino;		/* inode of the fd, 0 if unknown */
	__s32 fd;
	__u16 kind;		/* enum ws_file_kind of the fd */
	__u8 in_write;		/* issued inside a traced write */
	__u8 cpu_type;
	__u32 cpu;
	__u32 __pad;
	char comm[WS_COMM_LEN];
};

enum ws_sched_ev {
	SE_RUNQ = 1,		/* runnable -> running: wait in dur_ns */
	SE_MIGRATE = 2,		/* ran on from_cpu, now on to_cpu */
	SE_OFFCPU = 3,		/* blocked -> running: blocked time in dur_ns */
};

struct ws_sched_rec {
	__u32 rec_type;
	__u32 pid;
	__u32 tid;
	__u32 ev;
	__u64 ts_ns;
	__u64 dur_ns;
	__u32 from_cpu;
	__u32 to_cpu;
	__u8 from_type;
	__u8 to_type;
	__u8 in_write;
	__u8 preempted;		/* SE_RUNQ: 1 if it was preempted, 0 if woken */
	__u32 __pad;
};

/* openat results, so Python can name fds; and unlink targets */
struct ws_open_rec {
	__u32 rec_type;
	__u32 pid;
	__u32 tid;
	__u32 nr;
	__u64 ts_ns;
	__s64 ret;		/* fd, or error */
	__u64 ino;
	__u16 kind;
	__u16 __pad0;
	__u32 __pad1;
	char path[WS_PATH_LEN];
};

/* a timed perf sample of a traced thread (--mode sample, flame graphs) */
struct ws_sample_rec {
	__u32 rec_type;
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__u64 ts_ns;
	__u64 ip;		/* user IP, 0 if the sample hit the kernel */
	__s32 sys_nr;		/* syscall in progress, -1 if none: a traced one,
				 * or any, read from the task's saved registers
				 * when syscalls are not traced */
	__u16 sys_kind;		/* its fd's enum ws_file_kind */
	__u8 in_write;		/* inside a traced write (modes with uprobes) */
	__u8 comp;		/* component current at the sample, if in_write */
	__s32 ustack_id;	/* stack map ids, negative if not collected */
	__s32 kstack_id;
	char comm[WS_COMM_LEN];
	__u64 sp;		/* user registers at a sample in user code */
	__u64 bp;
	__u32 stack_words;	/* words of stack read from sp (0: none; the
				 * tracer zeroes the words once unwound) */
	__u32 __pad0;
	__u64 stack[WS_SAMPLE_STACK_WORDS];
};

/*
 * A traced thread's time as the kernel accounts it (no hook on the context
 * switch path): read when the thread exits, and by a task iterator when a
 * process starts being traced (the baseline) and when tracing stops.
 */
enum ws_task_phase {
	WS_TASK_BASELINE = 1,	/* the process was added: counters so far */
	WS_TASK_EXIT = 2,	/* the thread exited */
	WS_TASK_FINAL = 3,	/* tracing stopped with the thread alive */
};

struct ws_task_rec {
	__u32 rec_type;
	__u32 pid;
	__u32 tid;
	__u32 phase;		/* enum ws_task_phase */
	__u64 ts_ns;		/* when read */
	__u64 start_ns;		/* the thread's birth (task->start_time) */
	__u64 oncpu_ns;		/* se.sum_exec_runtime */
	__u64 runq_ns;		/* sched_info.run_delay: runnable, not running */
	__u64 runs;		/* sched_info.pcount: times it got a CPU */
	__u64 nvcsw;		/* voluntary context switches */
	__u64 nivcsw;		/* involuntary ones */
	char comm[WS_COMM_LEN];
};

/*
 * One traced thread as a wall sweep found it (probes/wall.bpf.h): a task
 * iterator the collector runs at a fixed rate and at each window's edges,
 * attached to nothing the threads run.  Its state is a wall-clock sample
 * (on a CPU, runnable, or blocked in which syscall on which kind of file);
 * its counters are the kernel's own accounting, read as they stand.
 */
enum ws_wall_state {
	WS_WALL_ONCPU = 1,	/* running on a CPU */
	WS_WALL_RUNQ = 2,	/* runnable, waiting in a run queue */
	WS_WALL_BLOCKED = 3,	/* sleeping (interruptible or not) */
};

struct ws_wall_rec {
	__u32 rec_type;
	__u32 pid;
	__u32 tid;
	__u32 state;		/* enum ws_wall_state */
	__u64 ts_ns;		/* when read */
	__u64 oncpu_ns;		/* se.sum_exec_runtime */
	__u64 runq_ns;		/* sched_info.run_delay */
	__u64 syscw;		/* ioac.syscw: write syscalls made */
	__u64 wchar;		/* ioac.wchar: bytes passed to them */
	__u64 log_syncs;	/* libc syncs of a log (WAL, journal) it made
				 * while traced, windows or not (log_syncs) */
	__u64 user_ip;		/* blocked: where user code entered the kernel */
	__u64 born_ns;		/* task->start_time: when the thread was made
				 * (CLOCK_MONOTONIC, as ts_ns): its counts began
				 * at 0 then (a process traced by -p had threads
				 * long before) */
	__s32 sys_nr;		/* blocked: the syscall in progress, -1 if none */
	__u16 sys_kind;		/* enum ws_file_kind of its fd */
	__u16 __pad0;
	char comm[WS_COMM_LEN];
};

/*
 * An executable object a traced process is about to run code from, not
 * seen before (by device and inode): a file mapped with PROT_EXEC (what
 * the dynamic loader and dlopen() do) or exec'd.  The process is stopped
 * (SIGSTOP, stopped = 1) until the collector has asked whether the object
 * holds an engine, attached its probes and sent SIGCONT.
 */
enum ws_obj_how {
	WS_OBJ_MMAP = 1,
	WS_OBJ_EXEC = 2,
	WS_OBJ_LOADER = 3,	/* the dynamic loader mapped objects (dlopen):
				 * dev and ino 0, the collector reads the maps */
};

struct ws_object_rec {
	__u32 rec_type;
	__u32 pid;
	__u32 tid;
	__u32 how;		/* enum ws_obj_how */
	__u64 ts_ns;
	__u64 dev;		/* the kernel's dev_t of the file's superblock */
	__u64 ino;
	__u64 addr;		/* WS_OBJ_MMAP: where it was mapped */
	__u64 len;
	__u32 stopped;		/* the process was sent SIGSTOP */
	__u32 __pad;
	char name[WS_NAME_LEN];	/* the file's name (its last path component) */
};

struct ws_obj_key {
	__u64 dev;
	__u64 ino;
};

/* counters kept per CPU in the "counters" map; the collector sums them */
enum ws_counter {
	CNT_LOST_WRITE = 0,	/* ring buffer full: write record dropped */
	CNT_LOST_IO = 1,
	CNT_LOST_SCHED = 2,
	CNT_LOST_OPEN = 3,
	CNT_LOST_SAMPLE = 4,
	CNT_UPROBE = 5,		/* uprobe hits in traced processes */
	CNT_URETPROBE = 6,	/* uretprobe hits in traced processes */
	CNT_THREADS_FULL = 7,	/* thread map full: thread not tracked */
	CNT_FDS_FULL = 8,	/* fd map full: file kind unknown */
	CNT_DEPTH_OVERFLOW = 9,	/* phase nesting deeper than WS_MAX_DEPTH */
	CNT_PHASE_MISMATCH = 10, /* a return with no matching entry */
	CNT_SAMPLES = 11,	/* perf samples taken of traced threads */
	CNT_LOST_OFFCPU = 12,	/* offcpu map full: an off-CPU period not kept */
	CNT_LOST_STACK = 13,	/* a stack not stored: its bucket held another */
	CNT_LOST_TASK = 14,	/* ring buffer full: task record dropped */
	CNT_LOST_OBJECT = 15,	/* ring buffer full: an object not inspected */
	CNT_OBJECTS_FULL = 16,	/* seen-objects map full: may be shown twice */
	CNT_TRACEPOINT = 17,	/* syscall and scheduler tracepoint hits that
				 * did a traced thread's work (the budget) */
	CNT_ROW_MARKS = 18,	/* rows an engine's counting probe saw, inside
				 * windows or not (e.g. commit and abort
				 * records written) */
	CNT_ROWS_CUT = 19,	/* rows let go: their window's probes left
				 * while they were in flight (the drain gave
				 * up), seen again in a later window */
	CNT_WRITE_SLEEPS = 20,	/* sleeps (nanosleep, clock_nanosleep) inside
				 * writes: a lock's backoff, a busy
				 * handler, a write stall (the budget) */
	CNT_LOST_WALL = 21,	/* ring buffer full: a wall sweep's record dropped */
	CNT_WAL_SYNC_MARKS = 22, /* syncs of a log (libc's fdatasync, fsync on
				  * a WAL or journal), windows or not */
	CNT_ROWS_JOINED = 23,	/* rows left out for beginning before their
				 * window: a transaction already open at
				 * its open (WS_WF_JOINED) */
	CNT_NR = 24,
};

/* off-CPU time of traced threads per stack, summed in the kernel (map
 * "offcpu") and written by the collector at exit to offcpu.bin as an array
 * of struct ws_offcpu_ent.  A period runs from sched_switch out to
 * sched_switch in; it is blocked until the wakeup and runnable after it
 * (all runnable when the thread was preempted). */
struct ws_offcpu_key {
	__u32 pid;
	__s32 kstack_id;	/* stack map ids at switch-out: WS_NO_STACK if not
				 * taken, another negative value if lost */
	__s32 ustack_id;	/* WS_NO_STACK unless user stacks are walked */
	__u8 in_write;		/* switched out inside a traced write */
	__u8 comp;		/* the write's component then */
	__u16 sys_kind;		/* enum ws_file_kind of the syscall's fd */
	__s32 sys_nr;		/* syscall in progress, -1 if none or unknown */
	__u64 user_ip;		/* where user code entered the kernel (leaf) */
	char comm[WS_COMM_LEN];
};

enum ws_stack_id {
	WS_NO_STACK = -1,	/* not taken (a lost stack is -errno, not -EPERM) */
	/* an off-CPU period whose stacks were not walked (1 in N are): it
	 * takes the stacks of the sampled periods like it; no errno is this */
	WS_STACK_UNSAMPLED = -4096,
};

struct ws_offcpu_val {
	__u64 blocked_ns;
	__u64 runnable_ns;
	__u64 count;		/* off-CPU periods */
};

struct ws_offcpu_ent {
	struct ws_offcpu_key key;
	struct ws_offcpu_val val;
};

/* one entry of stacks.bin, the stack map as the collector dumps it at exit:
 * ips leaf first, depth of them valid, the rest zero */
struct ws_stack_ent {
	__u32 id;		/* stack map id, as records and the offcpu map hold it */
	__u32 depth;
	__u64 ips[WS_STACK_DEPTH];
};

#define WS_MAX_CPUS	256

#endif /* __WALSCOPE_H */
