/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * state.bpf.h - per-thread and global state of walscope's BPF side: what a
 * thread is doing (its phase stack, the syscall in progress, the write
 * record being built) and the leaders' busy clocks.
 */
#ifndef __WS_STATE_H
#define __WS_STATE_H

#ifndef EFAULT
#define EFAULT		14
#endif
#ifndef ENOSYS
#define ENOSYS		38
#endif
#ifndef EEXIST
#define EEXIST		17
#endif
#ifndef E2BIG
#define E2BIG		7
#endif

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
	__u8 off_in_write;
	__u8 off_comp;
	__u8 hit_cold;		/* the current probe hit is a cold one */
	__u64 last_hit;		/* the thread's previous probe hit */
	__u32 win_gen;		/* window_gen when the row began */
	__u32 __pad2;
	struct ws_engine_state eng;	/* each engine's own (its unit's) */
	__u8 stack[WS_MAX_DEPTH];	/* phase ids */
	struct ws_write_rec rec;
};

/* an executable mmap in progress (objects.bpf.h) */
struct map_args {
	__s32 fd;
	__u32 __pad;
	__u64 len;
};

/* busy clocks: total time any leader of one database spent in WAL sync /
 * WAL write (the key: engine_busy_key) */
struct busy_key {
	__u32 tgid;		/* its process; 0: the engine's processes share it */
	__u32 __pad;
	__u64 db;		/* the engine's database object, 0 if one a process */
};

struct busy_clock {
	__u64 cum[2];
	__u64 since[2];
	__s64 active[2];
};

#endif /* __WS_STATE_H */
