/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocksdb.files.h - RocksDB's files by their names (file_kind.h's rule
 * for this engine; BPF and user space):
 *   <digit>*.log        -> FK_WAL (its WAL; not LOG, its info log)
 *   *.sst, *.ldb        -> FK_SST
 *   MANIFEST*           -> FK_MANIFEST
 */
#ifndef __WS_ROCKSDB_FILES_H
#define __WS_ROCKSDB_FILES_H

static __always_inline int rocksdb_file_kind(const struct ws_fk_state *s)
{
	__u64 t4 = s->tail & 0xffffffff;

	if (s->blen > 4 && t4 == WS_P4('.', 'l', 'o', 'g') &&
	    s->first >= '0' && s->first <= '9')
		return FK_WAL;
	if (t4 == WS_P4('.', 's', 's', 't') || t4 == WS_P4('.', 'l', 'd', 'b'))
		return FK_SST;
	if (s->blen >= 8 &&
	    s->head == WS_P8('M', 'A', 'N', 'I', 'F', 'E', 'S', 'T'))
		return FK_MANIFEST;
	return -1;
}

#endif /* __WS_ROCKSDB_FILES_H */
