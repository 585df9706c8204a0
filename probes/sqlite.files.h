/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sqlite.files.h - SQLite's files by their names (file_kind.h's rule for
 * this engine; BPF and user space):
 *   *-wal                          -> FK_WAL (WAL mode's log)
 *   *-journal                      -> FK_JOURNAL (the rollback journal)
 *   *.db *.sqlite *.sqlite3 *.db3  -> FK_DB
 */
#ifndef __WS_SQLITE_FILES_H
#define __WS_SQLITE_FILES_H

static __always_inline int sqlite_file_kind(const struct ws_fk_state *s)
{
	__u64 t4 = s->tail & 0xffffffff;

	if (t4 == WS_P4('-', 'w', 'a', 'l'))
		return FK_WAL;
	if (s->blen >= 8 &&
	    s->tail == WS_P8('-', 'j', 'o', 'u', 'r', 'n', 'a', 'l'))
		return FK_JOURNAL;
	if ((s->tail & 0xffffff) == WS_P3('.', 'd', 'b') ||
	    t4 == WS_P4('.', 'd', 'b', '3') ||
	    (s->tail & 0xffffffffffffff) ==
		    WS_P7('.', 's', 'q', 'l', 'i', 't', 'e') ||
	    (s->blen >= 8 &&
	     s->tail == WS_P8('.', 's', 'q', 'l', 'i', 't', 'e', '3')))
		return FK_DB;
	return -1;
}

#endif /* __WS_SQLITE_FILES_H */
