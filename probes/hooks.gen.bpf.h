/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hooks.gen.bpf.h - generated from the engine registry (engines/) by
 * `make golden` (engines/bpf_units.py): do not edit.
 * The hooks an engine's BPF unit (probes/<name>.bpf.h) may define, as
 * <name>_<hook> with the parameters below, and the dispatchers the
 * generic code calls (defined in engines.gen.bpf.h, after the units).
 * A hook an engine does not define gives the default named.
 */

#ifndef __WS_HOOKS_GEN_BPF_H
#define __WS_HOOKS_GEN_BPF_H

/* enter: a probe's entry: >= 0 handled (the program returns it), < 0 the
 * generic phase stack pushes the cookie's phase inside an open row.
 *   <name>_enter(struct pt_regs *ctx, struct thread_state *t, __u32 tgid,
 *   	__u32 tid, __u64 now, __u64 cookie);
 * dispatched by (__u8)(cookie >> 8); default -1 */
static __always_inline int engine_enter(struct pt_regs *ctx, struct thread_state *t, __u32 tgid, __u32 tid, __u64 now, __u64 cookie);

/* exit: a probe's return: as enter; < 0 pops the phase inside an open row.
 *   <name>_exit(struct pt_regs *ctx, struct thread_state *t, __u64 now,
 *   	__u64 cookie);
 * dispatched by (__u8)(cookie >> 8); default -1 */
static __always_inline int engine_exit(struct pt_regs *ctx, struct thread_state *t, __u64 now, __u64 cookie);

/* sys_comp: a syscall of class cls (enum io_class) begins inside a row:
 * its component (0xff: the phase stack's), t->sys_busy set for a WAL write
 * (2) or sync (1).
 *   <name>_sys_comp(struct thread_state *t, int cls, long nr);
 * dispatched by t->rec.engine; default 0xff */
static __always_inline __u8 engine_sys_comp(struct thread_state *t, int cls, long nr);

/* sys_exit: that syscall returns (kind: its file's, known now for an open
 * or unlink).
 *   <name>_sys_exit(struct thread_state *t, __u16 kind, long ret);
 * dispatched by t->rec.engine; default nothing */
static __always_inline void engine_sys_exit(struct thread_state *t, __u16 kind, long ret);

/* sys_ends_row: that syscall, accounted, ends the row (>= 0: with these
 * flags): an engine whose rows are its log's syscalls.
 *   <name>_sys_ends_row(struct thread_state *t, __u16 kind, long ret);
 * dispatched by t->rec.engine; default -1 */
static __always_inline int engine_sys_ends_row(struct thread_state *t, __u16 kind, long ret);

/* sys_outside: a traced syscall begins outside any row: an engine whose
 * rows are its log's syscalls may open one (begin_write), the syscall then
 * its first.
 *   <name>_sys_outside(struct thread_state *t, int cls, long nr, __u32
 *   	tgid, __u32 tid, __u64 now);
 * dispatched every engine's, in turn; default nothing */
static __always_inline void engine_sys_outside(struct thread_state *t, int cls, long nr, __u32 tgid, __u32 tid, __u64 now);

/* queue_wait: an untraced syscall inside a row is its wait for another row
 * (its queue).
 *   <name>_queue_wait(struct thread_state *t, long nr, struct pt_regs
 *   	*regs);
 * dispatched by t->rec.engine; default false */
static __always_inline bool engine_queue_wait(struct thread_state *t, long nr, struct pt_regs *regs);

/* queue_comp: the component in which a row waits for another row's WAL I/O
 * (0xff: none).
 *   <name>_queue_comp(void);
 * dispatched by engine; default 0xff */
static __always_inline __u8 engine_queue_comp(__u16 engine);

/* is_kept: a finished row is a write (else it is dropped: a read).
 *   <name>_is_kept(const struct ws_write_rec *r);
 * dispatched by r->engine; default true */
static __always_inline bool engine_is_kept(const struct ws_write_rec *r);

/* busy_key: the key of the busy clocks a row's queue is measured against
 * (preset: its process, no database).
 *   <name>_busy_key(struct thread_state *t, struct busy_key *k);
 * dispatched by t->rec.engine; default nothing */
static __always_inline void engine_busy_key(struct thread_state *t, struct busy_key *k);

/* clear_row: the thread is in no row from now: its row's state goes.
 *   <name>_clear_row(struct thread_state *t);
 * dispatched every engine's, in turn; default nothing */
static __always_inline void engine_clear_row(struct thread_state *t);

#endif /* __WS_HOOKS_GEN_BPF_H */
