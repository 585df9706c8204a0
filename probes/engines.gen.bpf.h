/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * engines.gen.bpf.h - generated from the engine registry (engines/) by
 * `make golden` (engines/bpf_units.py): do not edit.
 * Each engine's BPF unit, the dispatch to the hooks it defines
 * (hooks.gen.bpf.h), and its enums kept in BTF.
 */

#ifndef __WS_ENGINES_GEN_BPF_H
#define __WS_ENGINES_GEN_BPF_H

#include "rocksdb.bpf.h"
#include "sqlite.bpf.h"
#include "postgres.bpf.h"
#include "innodb.bpf.h"
#include "logsync.bpf.h"

static __always_inline int engine_enter(struct pt_regs *ctx, struct thread_state *t, __u32 tgid, __u32 tid, __u64 now, __u64 cookie)
{
	switch ((__u8)(cookie >> 8)) {
	case WS_ENGINE_ROCKSDB:
		return rocksdb_enter(ctx, t, tgid, tid, now, cookie);
	case WS_ENGINE_SQLITE:
		return sqlite_enter(ctx, t, tgid, tid, now, cookie);
	case WS_ENGINE_POSTGRES:
		return postgres_enter(ctx, t, tgid, tid, now, cookie);
	case WS_ENGINE_INNODB:
		return innodb_enter(ctx, t, tgid, tid, now, cookie);
	}
	return -1;
}

static __always_inline int engine_exit(struct pt_regs *ctx, struct thread_state *t, __u64 now, __u64 cookie)
{
	switch ((__u8)(cookie >> 8)) {
	case WS_ENGINE_ROCKSDB:
		return rocksdb_exit(ctx, t, now, cookie);
	case WS_ENGINE_SQLITE:
		return sqlite_exit(ctx, t, now, cookie);
	case WS_ENGINE_POSTGRES:
		return postgres_exit(ctx, t, now, cookie);
	case WS_ENGINE_INNODB:
		return innodb_exit(ctx, t, now, cookie);
	}
	return -1;
}

static __always_inline __u8 engine_sys_comp(struct thread_state *t, int cls, long nr)
{
	switch (t->rec.engine) {
	case WS_ENGINE_ROCKSDB:
		return rocksdb_sys_comp(t, cls, nr);
	case WS_ENGINE_SQLITE:
		return sqlite_sys_comp(t, cls, nr);
	case WS_ENGINE_POSTGRES:
		return postgres_sys_comp(t, cls, nr);
	case WS_ENGINE_INNODB:
		return innodb_sys_comp(t, cls, nr);
	case WS_ENGINE_LOGSYNC:
		return logsync_sys_comp(t, cls, nr);
	}
	return 0xff;
}

static __always_inline void engine_sys_exit(struct thread_state *t, __u16 kind, long ret)
{
	switch (t->rec.engine) {
	case WS_ENGINE_SQLITE:
		sqlite_sys_exit(t, kind, ret);
		break;
	case WS_ENGINE_LOGSYNC:
		logsync_sys_exit(t, kind, ret);
		break;
	}
}

static __always_inline int engine_sys_ends_row(struct thread_state *t, __u16 kind, long ret)
{
	switch (t->rec.engine) {
	case WS_ENGINE_LOGSYNC:
		return logsync_sys_ends_row(t, kind, ret);
	}
	return -1;
}

static __always_inline void engine_sys_outside(struct thread_state *t, int cls, long nr, __u32 tgid, __u32 tid, __u64 now)
{
	logsync_sys_outside(t, cls, nr, tgid, tid, now);
}

static __always_inline bool engine_queue_wait(struct thread_state *t, long nr, struct pt_regs *regs)
{
	switch (t->rec.engine) {
	case WS_ENGINE_ROCKSDB:
		return rocksdb_queue_wait(t, nr, regs);
	case WS_ENGINE_INNODB:
		return innodb_queue_wait(t, nr, regs);
	}
	return false;
}

static __always_inline __u8 engine_queue_comp(__u16 engine)
{
	switch (engine) {
	case WS_ENGINE_ROCKSDB:
		return rocksdb_queue_comp();
	case WS_ENGINE_POSTGRES:
		return postgres_queue_comp();
	case WS_ENGINE_INNODB:
		return innodb_queue_comp();
	}
	return 0xff;
}

static __always_inline bool engine_is_kept(const struct ws_write_rec *r)
{
	switch (r->engine) {
	case WS_ENGINE_SQLITE:
		return sqlite_is_kept(r);
	case WS_ENGINE_POSTGRES:
		return postgres_is_kept(r);
	case WS_ENGINE_INNODB:
		return innodb_is_kept(r);
	}
	return true;
}

static __always_inline void engine_busy_key(struct thread_state *t, struct busy_key *k)
{
	switch (t->rec.engine) {
	case WS_ENGINE_ROCKSDB:
		rocksdb_busy_key(t, k);
		break;
	case WS_ENGINE_POSTGRES:
		postgres_busy_key(t, k);
		break;
	}
}

static __always_inline void engine_clear_row(struct thread_state *t)
{
	sqlite_clear_row(t);
	innodb_clear_row(t);
}

/* every engine's enums, kept in BTF: Python names its components and
 * phases from them */
enum ws_rocksdb_comp __ws_rocksdb_comp __attribute__((unused));
enum ws_rocksdb_phase __ws_rocksdb_phase __attribute__((unused));
enum ws_sqlite_comp __ws_sqlite_comp __attribute__((unused));
enum ws_sqlite_phase __ws_sqlite_phase __attribute__((unused));
enum ws_postgres_comp __ws_postgres_comp __attribute__((unused));
enum ws_postgres_phase __ws_postgres_phase __attribute__((unused));
enum ws_innodb_comp __ws_innodb_comp __attribute__((unused));
enum ws_innodb_phase __ws_innodb_phase __attribute__((unused));
enum ws_logsync_comp __ws_logsync_comp __attribute__((unused));

#endif /* __WS_ENGINES_GEN_BPF_H */
