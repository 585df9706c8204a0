/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * innodb.files.h - InnoDB's files by their names (file_kind.h's rule for
 * this engine; BPF and user space):
 *   ib_logfile*, #ib_redo*  -> FK_WAL (the redo log; the latter in
 *                              #innodb_redo/, MySQL 8.0.30 on)
 */
#ifndef __WS_INNODB_FILES_H
#define __WS_INNODB_FILES_H

static __always_inline int innodb_file_kind(const struct ws_fk_state *s)
{
	if (s->blen >= 8 &&
	    (s->head == WS_P8('i', 'b', '_', 'l', 'o', 'g', 'f', 'i') ||
	     s->head == WS_P8('#', 'i', 'b', '_', 'r', 'e', 'd', 'o')))
		return FK_WAL;
	return -1;
}

#endif /* __WS_INNODB_FILES_H */
