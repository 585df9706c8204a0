/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * file_kinds.gen.h - generated from the engine registry (engines/) by
 * `make golden` (engines/bpf_units.py): do not edit.
 * Each engine's files by their names (probes/<name>.files.h, where it
 * has one: <name>_file_kind(const struct ws_fk_state *s) gives an FK_*
 * kind, or -1 for a name not its), and ws_fk_engines(), which asks
 * them in the registry's order: the first kind given wins, -1 if none.
 * Included by file_kind.h after its path state.
 */

#ifndef __WS_FILE_KINDS_GEN_H
#define __WS_FILE_KINDS_GEN_H

#include "rocksdb.files.h"
#include "sqlite.files.h"
#include "postgres.files.h"
#include "innodb.files.h"

static __always_inline int ws_fk_engines(const struct ws_fk_state *s)
{
	int kind;

	kind = rocksdb_file_kind(s);
	if (kind >= 0)
		return kind;
	kind = sqlite_file_kind(s);
	if (kind >= 0)
		return kind;
	kind = postgres_file_kind(s);
	if (kind >= 0)
		return kind;
	kind = innodb_file_kind(s);
	if (kind >= 0)
		return kind;
	return -1;
}

#endif /* __WS_FILE_KINDS_GEN_H */
