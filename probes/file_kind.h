/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * file_kind.h - classify a file by its path, the same way in the BPF
 * program (at openat) and in the collector (fds already open at -p attach).
 *
 * One pass over the path keeps the last 8 bytes and the first 8 bytes of
 * the basename in two shift registers, and the parent directory's first
 * 8 bytes and length; in BPF the pass is a bpf_loop()
 * callback, so the verifier checks the step once, not once per byte.  Rules, on the basename:
 *   directory                          -> FK_DIR
 *   <digit>*.log      (RocksDB WAL)    -> FK_WAL
 *   *-wal             (SQLite WAL)     -> FK_WAL
 *   pg_wal/<24 hex digits>  (PostgreSQL WAL segment; pg_xlog before 10;
 *                     not xlogtemp.N, a segment being made) -> FK_WAL
 *   ib_logfile*, #ib_redo* (InnoDB redo log; the latter in
 *                     #innodb_redo/, MySQL 8.0.30 on)  -> FK_WAL
 *   *.sst, *.ldb                       -> FK_SST
 *   MANIFEST*                          -> FK_MANIFEST
 *   *-journal         (SQLite)         -> FK_JOURNAL
 *   *.db *.sqlite *.sqlite3 *.db3      -> FK_DB
 *   anything else                      -> FK_OTHER
 * Include after walscope.h.
 */
#ifndef __WS_FILE_KIND_H
#define __WS_FILE_KIND_H

#define WS_P3(a, b, c) \
	((__u64)(a) << 16 | (__u64)(b) << 8 | (__u64)(c))
#define WS_P4(a, b, c, d) ((__u64)(a) << 24 | WS_P3(b, c, d))
#define WS_P6(a, b, c, d, e, f) \
	((__u64)WS_P3(a, b, c) << 24 | WS_P3(d, e, f))
#define WS_P7(a, b, c, d, e, f, g) \
	((__u64)WS_P3(a, b, c) << 32 | WS_P4(d, e, f, g))
#define WS_P8(a, b, c, d, e, f, g, h) \
	((__u64)WS_P4(a, b, c, d) << 32 | WS_P4(e, f, g, h))

struct ws_fk_state {
	__u64 tail;		/* last 8 bytes of the basename */
	__u64 head;		/* first 8 bytes of the basename */
	__u64 dir;		/* first 8 bytes of the parent directory's name */
	__u32 blen;		/* basename length, saturated at 9 */
	__u32 first;		/* first byte of the basename */
	__u32 dlen;		/* parent directory's name length, saturated */
	__u32 len;		/* basename length, saturated at 255 */
	__u32 nonhex;		/* the basename has a byte not in [0-9A-F] */
	const char *p;
};

/* feed byte i of the path; 1 at the terminating NUL */
static __always_inline long ws_fk_step(__u32 i, struct ws_fk_state *s)
{
	__u64 c = (__u8)s->p[i & (WS_PATH_LEN - 1)];

	if (c == 0)
		return 1;
	if (c == '/') {
		s->dir = s->head;
		s->dlen = s->blen;
		s->len = 0;
		s->nonhex = 0;
		s->head = 0;
		s->tail = 0;
		s->blen = 0;
		return 0;
	}
	if (s->blen == 0)
		s->first = c;
	if (s->blen < 8)
		s->head = s->head << 8 | c;
	if (s->blen < 9)	/* saturate: keeps the verifier's states few */
		s->blen++;
	s->tail = s->tail << 8 | c;
	if (s->len < 255)
		s->len++;
	if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F')))
		s->nonhex = 1;
	return 0;
}

static __always_inline int ws_fk_result(const struct ws_fk_state *s)
{
	__u64 t4 = s->tail & 0xffffffff;

	if (s->blen > 4 && t4 == WS_P4('.', 'l', 'o', 'g') &&
	    s->first >= '0' && s->first <= '9')
		return FK_WAL;
	if (t4 == WS_P4('-', 'w', 'a', 'l'))
		return FK_WAL;
	if (((s->dlen == 6 && s->dir == WS_P6('p', 'g', '_', 'w', 'a', 'l')) ||
	     (s->dlen == 7 && s->dir == WS_P7('p', 'g', '_', 'x', 'l', 'o', 'g'))) &&
	    s->len == 24 && !s->nonhex)
		return FK_WAL;
	if (s->blen >= 8 &&
	    (s->head == WS_P8('i', 'b', '_', 'l', 'o', 'g', 'f', 'i') ||
	     s->head == WS_P8('#', 'i', 'b', '_', 'r', 'e', 'd', 'o')))
		return FK_WAL;
	if (t4 == WS_P4('.', 's', 's', 't') || t4 == WS_P4('.', 'l', 'd', 'b'))
		return FK_SST;
	if (s->blen >= 8 &&
	    s->head == WS_P8('M', 'A', 'N', 'I', 'F', 'E', 'S', 'T'))
		return FK_MANIFEST;
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
	return FK_OTHER;
}

#ifdef __bpf__
static long ws_fk_cb(__u32 i, void *ctx)
{
	return ws_fk_step(i, ctx);
}

/* p: NUL-terminated path in a buffer of WS_PATH_LEN bytes */
static __always_inline int ws_file_kind(const char *p, int is_dir)
{
	struct ws_fk_state s = { .p = p };

	if (is_dir)
		return FK_DIR;
	bpf_loop(WS_PATH_LEN, ws_fk_cb, &s, 0);
	return ws_fk_result(&s);
}
#else
static inline int ws_file_kind(const char *p, int is_dir)
{
	struct ws_fk_state s = { .p = p };
	__u32 i;

	if (is_dir)
		return FK_DIR;
	for (i = 0; i < WS_PATH_LEN && !ws_fk_step(i, &s); i++)
		;
	return ws_fk_result(&s);
}
#endif

#endif /* __WS_FILE_KIND_H */
