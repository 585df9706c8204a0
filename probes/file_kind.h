/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * file_kind.h - classify a file by its path, the same way in the BPF
 * program (at openat) and in the collector (fds already open at -p attach).
 *
 * One pass over the path keeps the last 8 bytes and the first 8 bytes of
 * the basename in two shift registers, and the parent directory's first
 * 8 bytes and length; in BPF the pass is a bpf_loop()
 * callback, so the verifier checks the step once, not once per byte.
 *
 * A directory is FK_DIR.  A log file the user named (--log-file: struct
 * ws_log_rule, the BPF program's read-only data or the collector's
 * options) is FK_WAL.  Otherwise each engine's rule decides, in the
 * registry's order (file_kinds.gen.h): an engine unit that knows its
 * files by name has probes/<name>.files.h, whose <name>_file_kind() reads
 * the state below and gives an FK_* kind, or -1 when the name is none of
 * its files; so an engine's rules all come before the next engine's (a
 * name two engines would claim is the first's: MANIFEST-x-wal is
 * RocksDB's manifest).  A name no engine knows is FK_OTHER.
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

/* each engine's rule, <name>_file_kind(), and ws_fk_engines() */
#include "file_kinds.gen.h"

/* 1 where the path is a log file the user named (struct ws_log_rule) */
static __always_inline int ws_fk_rule(const struct ws_fk_state *s,
				       __u64 prefix, __u64 suffix, __u64 dir,
				       __u32 plen, __u32 slen, __u32 dlen,
				       __u32 exact)
{
	__u32 have = s->len < 8 ? s->len : 8;	/* the head's bytes */

	if (plen > 8 || slen > 8 || dlen > 8)
		return 0;
	if (dlen && (s->dlen != dlen || s->dir != dir))
		return 0;
	if (exact)
		return s->len == plen && s->head == prefix;
	if (s->len < plen + slen)
		return 0;
	if (plen && s->head >> (8 * (have - plen)) != prefix)
		return 0;
	if (slen && (slen == 8 ? s->tail : s->tail & ((1ULL << (8 * slen)) - 1)) != suffix)
		return 0;
	return 1;
}

#define WS_FK_RULE(s, r) ws_fk_rule(s, (r)->prefix, (r)->suffix, (r)->dir, \
				    (r)->plen, (r)->slen, (r)->dlen, (r)->exact)

#ifdef __bpf__
/* the user's log files (--log-file), set by the loader */
const volatile struct ws_log_rule ws_log_rules[WS_LOG_RULES] = {};
const volatile __u32 ws_nr_log_rules = 0;

struct ws_fk_rules_ctx {
	const struct ws_fk_state *s;
	bool hit;
};

/* rule i: a bpf_loop() callback, so the verifier checks it once */
static long ws_fk_rule_cb(__u32 i, void *ctx)
{
	struct ws_fk_rules_ctx *c = ctx;
	const volatile struct ws_log_rule *r;

	if (i >= ws_nr_log_rules)
		return 1;
	r = &ws_log_rules[i & (WS_LOG_RULES - 1)];	/* a power of two */
	if (WS_FK_RULE(c->s, r)) {
		c->hit = true;
		return 1;
	}
	return 0;
}

static __always_inline int ws_fk_result(const struct ws_fk_state *s)
{
	struct ws_fk_rules_ctx c = { .s = s };
	int kind;

	if (ws_nr_log_rules) {
		bpf_loop(WS_LOG_RULES, ws_fk_rule_cb, &c, 0);
		if (c.hit)
			return FK_WAL;
	}
	kind = ws_fk_engines(s);
	return kind < 0 ? FK_OTHER : kind;
}
#else
/* user space: the log files named by the caller's rules (n of them) */
static inline int ws_fk_result_rules(const struct ws_fk_state *s,
				     const struct ws_log_rule *rules, __u32 n)
{
	int kind;
	__u32 i;

	for (i = 0; i < n && i < WS_LOG_RULES; i++)
		if (WS_FK_RULE(s, &rules[i]))
			return FK_WAL;
	kind = ws_fk_engines(s);
	return kind < 0 ? FK_OTHER : kind;
}
#endif

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
/* the kind of a path, with the user's log files (rules, n of them) */
static inline int ws_file_kind_rules(const char *p, int is_dir,
				     const struct ws_log_rule *rules, __u32 n)
{
	struct ws_fk_state s = { .p = p };
	__u32 i;

	if (is_dir)
		return FK_DIR;
	for (i = 0; i < WS_PATH_LEN && !ws_fk_step(i, &s); i++)
		;
	return ws_fk_result_rules(&s, rules, n);
}

static inline int ws_file_kind(const char *p, int is_dir)
{
	return ws_file_kind_rules(p, is_dir, 0, 0);
}
#endif

#endif /* __WS_FILE_KIND_H */
