/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * engines.gen.h - generated from the engine registry (engines/) by
 * `make golden` (engines/bpf_units.py): do not edit.
 * Each engine's id (enum ws_engine, in the registry's order), its record
 * interface (probes/<name>.h), its phase table and its thread state.
 */

#ifndef __WS_ENGINES_GEN_H
#define __WS_ENGINES_GEN_H

enum ws_engine {
	WS_ENGINE_ROCKSDB = 1,
	WS_ENGINE_SQLITE = 2,
	WS_ENGINE_POSTGRES = 3,
	WS_ENGINE_INNODB = 4,
	WS_ENGINE_LOGSYNC = 5,
};

#include "rocksdb.h"
#include "sqlite.h"
#include "postgres.h"
#include "innodb.h"
#include "logsync.h"

/* each engine's phases -> their components (phase_comp()) */
#define WS_PHASE_COMPS(X)	\
	WS_ROCKSDB_PHASE_COMPS(X)	\
	WS_SQLITE_PHASE_COMPS(X)	\
	WS_POSTGRES_PHASE_COMPS(X)

/* each engine's per-thread state (struct thread_state's eng) */
struct ws_engine_state {
	struct ws_rocksdb_state rocksdb;
	struct ws_sqlite_state sqlite;
	struct ws_postgres_state postgres;
	struct ws_innodb_state innodb;
	struct ws_logsync_state logsync;
};

#endif /* __WS_ENGINES_GEN_H */
