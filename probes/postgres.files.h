/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * postgres.files.h - PostgreSQL's files by their names (file_kind.h's
 * rule for this engine; BPF and user space):
 *   pg_wal/<24 hex digits>  -> FK_WAL (a WAL segment; pg_xlog before 10;
 *                              not xlogtemp.N, a segment being made)
 */
#ifndef __WS_POSTGRES_FILES_H
#define __WS_POSTGRES_FILES_H

static __always_inline int postgres_file_kind(const struct ws_fk_state *s)
{
	if (((s->dlen == 6 && s->dir == WS_P6('p', 'g', '_', 'w', 'a', 'l')) ||
	     (s->dlen == 7 && s->dir == WS_P7('p', 'g', '_', 'x', 'l', 'o', 'g'))) &&
	    s->len == 24 && !s->nonhex)
		return FK_WAL;
	return -1;
}

#endif /* __WS_POSTGRES_FILES_H */
