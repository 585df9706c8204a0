/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sqlite.bpf.h - SQLite transactions: sqlite3_step opens a transaction
 * (BEGIN, or an autocommit statement) and its COMMIT/ROLLBACK or return
 * closes it; its syscalls take SQLite's components by file kind.
 */
#ifndef __WS_SQLITE_BPF_H
#define __WS_SQLITE_BPF_H

/* SQLite statement classes, from the first word of the SQL text */
enum sql_class { SQL_OTHER, SQL_BEGIN, SQL_COMMIT, SQL_ROLLBACK };

static __always_inline bool sql_delim(char c)
{
	return c == 0 || c == ' ' || c == ';' || c == '\t' || c == '\n' ||
	       c == '\r';
}

/* stmt: a Vdbe*; sql_off: offset of its zSql (decoded from sqlite3_sql) */
static __always_inline int sql_class(const void *stmt, __u32 sql_off)
{
	const char *sql = NULL;
	char b[32] = {}, w[12] = {};
	__u32 i, k = 0;

	if (!stmt || !sql_off ||
	    bpf_probe_read_user(&sql, sizeof(sql), stmt + sql_off) || !sql ||
	    bpf_probe_read_user_str(b, sizeof(b), sql) <= 0)
		return SQL_OTHER;
	while (k < 8 && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' ||
			 b[k] == '\r'))
		k++;
	for (i = 0; i < sizeof(w); i++) {	/* k + i < 20: in b */
		char c = b[(k + i) & (sizeof(b) - 1)];

		w[i] = c >= 'a' && c <= 'z' ? c - 32 : c;
	}
	if (w[0] == 'B' && w[1] == 'E' && w[2] == 'G' && w[3] == 'I' &&
	    w[4] == 'N' && sql_delim(w[5]))
		return SQL_BEGIN;
	if (w[0] == 'C' && w[1] == 'O' && w[2] == 'M' && w[3] == 'M' &&
	    w[4] == 'I' && w[5] == 'T' && sql_delim(w[6]))
		return SQL_COMMIT;
	if (w[0] == 'E' && w[1] == 'N' && w[2] == 'D' && sql_delim(w[3]))
		return SQL_COMMIT;
	if (w[0] == 'R' && w[1] == 'O' && w[2] == 'L' && w[3] == 'L' &&
	    w[4] == 'B' && w[5] == 'A' && w[6] == 'C' && w[7] == 'K' &&
	    sql_delim(w[8]) && !(w[9] == 'T' && w[10] == 'O'))
		return SQL_ROLLBACK;
	return SQL_OTHER;
}

/*
 * Whether the statement's connection is inside a transaction (its
 * autoCommit byte clear): the cookie's bits 32..47 hold autoCommit's
 * offset in a sqlite3 (decoded from sqlite3_get_autocommit; 0: unknown),
 * bits 48..55 the connection's offset in a Vdbe (from sqlite3_db_handle).
 */
static __always_inline bool sql_in_txn(const void *stmt, __u64 cookie)
{
	__u32 ac_off = (cookie >> 32) & 0xffff, db_off = (cookie >> 48) & 0xff;
	const void *db = NULL;
	__u8 autocommit = 1;

	if (!stmt || !ac_off ||
	    bpf_probe_read_user(&db, sizeof(db), stmt + db_off) || !db ||
	    bpf_probe_read_user(&autocommit, sizeof(autocommit), db + ac_off))
		return false;
	return autocommit == 0;
}

/* sqlite3_step entry: open a transaction if none is open, push the step */
static __always_inline int sql_step_enter(struct pt_regs *ctx,
					  struct thread_state *t, __u32 tgid,
					  __u32 tid, __u64 now, __u64 cookie)
{
	const void *stmt = (void *)PT_REGS_PARM1(ctx);
	int cls = sql_class(stmt, (cookie >> 16) & 0xffff);
	__u8 parent;

	if (!t->write_start) {
		if (!window_admits(&now))
			return 0;
		begin_write(t, tgid, tid, now, WS_ENGINE_SQLITE);
		if (cls == SQL_BEGIN)
			t->rec.flags |= WS_WF_EXPLICIT;
		else if (sql_in_txn(stmt, cookie))
			/* a transaction begun before the window: followed to
			 * its COMMIT or ROLLBACK as one row, not kept */
			t->rec.flags |= WS_WF_EXPLICIT | WS_WF_JOINED;
	} else {
		charge(t, now);
		parent = cur_comp(t);
		t->rec.hits_par[parent & (WS_MAX_COMP - 1)]++;
	}
	t->rec.hits_in[SC_SQL_EXEC]++;
	t->rec.nr_calls++;
	if (t->depth >= WS_MAX_DEPTH) {
		count(CNT_DEPTH_OVERFLOW);
		t->rec.flags |= WS_WF_TRUNC;
		return 0;
	}
	t->stack[t->depth & (WS_MAX_DEPTH - 1)] = PH_SQL_STEP;
	t->depth++;
	if ((cls == SQL_COMMIT || cls == SQL_ROLLBACK) && !t->eng.sqlite.txn_end_depth) {
		t->eng.sqlite.txn_end_depth = t->depth;
		t->eng.sqlite.txn_end_flags = cls == SQL_ROLLBACK ? WS_WF_ROLLBACK : 0;
	}
	return 0;
}

#define SQLITE_BUSY	5
#define SQLITE_ROW	100
#define SQLITE_DONE	101

static __always_inline bool sql_step_ok(int rc)
{
	return rc == 0 || rc == SQLITE_ROW || rc == SQLITE_DONE;
}

/* sqlite3_step return: close the transaction after COMMIT or autocommit */
static __always_inline int sql_step_exit(struct pt_regs *ctx,
					 struct thread_state *t, __u64 now)
{
	if (t->depth == 0 ||
	    t->stack[(t->depth - 1) & (WS_MAX_DEPTH - 1)] != PH_SQL_STEP) {
		count(CNT_PHASE_MISMATCH);
		t->rec.flags |= WS_WF_TRUNC;
		return 0;
	}
	charge(t, now);
	t->depth--;
	if (t->eng.sqlite.txn_end_depth && t->depth < t->eng.sqlite.txn_end_depth) {
		/* a COMMIT that found the database busy leaves it open */
		if ((int)PT_REGS_RC(ctx) == SQLITE_BUSY)
			t->eng.sqlite.txn_end_depth = 0;
		else
			end_write(t, now, t->eng.sqlite.txn_end_flags);
	} else if (t->depth == 0 && !(t->rec.flags & WS_WF_EXPLICIT)) {
		end_write(t, now, 0);
	} else if (t->depth == 0 && t->rec.nr_calls == 1 &&
		   !sql_step_ok((int)PT_REGS_RC(ctx))) {
		/* the BEGIN itself failed (SQLITE_BUSY once the busy timeout
		 * ran out): no transaction began, and no COMMIT or ROLLBACK
		 * will end this one; the row is its wait, not a commit */
		end_write(t, now, WS_WF_ROLLBACK);
	}
	return 0;
}

/*
 * The component of a syscall inside a SQLite transaction; 0xff charges it
 * to the phase stack (a checkpoint keeps its I/O).  Files of no known kind
 * are the database: SQLite writes nothing else inside a transaction but
 * temp files, which are unnamed.
 */
static __always_inline __u8 sql_sys_comp(struct thread_state *t, int cls,
					 long nr)
{
	__u8 d = t->depth;

	if (d && t->stack[(d - 1) & (WS_MAX_DEPTH - 1)] == PH_CHECKPOINT)
		return 0xff;
	if (cls == IOC_WRITE)
		return is_log_kind(t->sys_kind) ? SC_JOURNAL_WRITE_IO :
						  SC_DB_WRITE_IO;
	if (cls == IOC_SYNC) {
		if (is_log_kind(t->sys_kind))
			return SC_JOURNAL_SYNC_IO;
		return t->sys_kind == FK_DIR ? SC_DIR_SYNC_IO : SC_DB_SYNC_IO;
	}
	switch (nr) {
	case WS_NR_fcntl:
	case WS_NR_flock:
	case WS_NR_nanosleep:
	case WS_NR_clock_nanosleep:
		return SC_LOCK_WAIT;
	case WS_NR_openat:
	case WS_NR_unlink:
	case WS_NR_unlinkat:
		return WS_COMP_PENDING;	/* kind known at exit */
	}
	if (is_log_kind(t->sys_kind))
		return SC_JOURNAL_LIFECYCLE;
	if (t->sys_kind == FK_DIR)
		return SC_DIR_SYNC_IO;
	return 0xff;
}

/* an open or unlink inside a SQLite transaction, now that its kind is known */
static __always_inline void settle_pending(struct thread_state *t, __u16 kind)
{
	__u64 v = t->rec.comp_ns[WS_COMP_PENDING];
	__u8 to = SC_OTHER;

	if (!v)
		return;
	if (is_log_kind(kind))
		to = SC_JOURNAL_LIFECYCLE;
	else if (kind == FK_DIR)
		to = SC_DIR_SYNC_IO;
	t->rec.comp_ns[to] += v;
	t->rec.comp_ns[WS_COMP_PENDING] = 0;
	t->rec.sys_in[to] += t->rec.sys_in[WS_COMP_PENDING];
	t->rec.sys_in[WS_COMP_PENDING] = 0;
}

/* the unit's hooks (hooks.gen.bpf.h) */
static __always_inline int sqlite_enter(struct pt_regs *ctx,
					struct thread_state *t, __u32 tgid,
					__u32 tid, __u64 now, __u64 cookie)
{
	if ((__u8)cookie == PH_SQL_STEP)
		return sql_step_enter(ctx, t, tgid, tid, now, cookie);
	return -1;
}

static __always_inline int sqlite_exit(struct pt_regs *ctx,
				       struct thread_state *t, __u64 now,
				       __u64 cookie)
{
	if (!t->write_start)
		return 0;
	if ((__u8)cookie == PH_SQL_STEP)
		return sql_step_exit(ctx, t, now);
	return -1;
}

/* a transaction that wrote or synced anything is a write */
static __always_inline __u8 sqlite_sys_comp(struct thread_state *t, int cls,
					    long nr)
{
	__u8 c = sql_sys_comp(t, cls, nr);

	if (cls == IOC_WRITE || cls == IOC_SYNC)
		t->rec.flags |= WS_WF_WROTE;
	return c;
}

static __always_inline void sqlite_sys_exit(struct thread_state *t,
					    __u16 kind, long ret)
{
	if (t->sys_comp == WS_COMP_PENDING)
		settle_pending(t, kind);
	if ((t->sys_comp == SC_JOURNAL_WRITE_IO) && ret > 0)
		t->rec.wal_bytes += ret;
}

/* an autocommit statement that wrote nothing is a read; a transaction
 * already open at its window's open is no row (its start was not seen) */
static __always_inline bool sqlite_is_kept(const struct ws_write_rec *r)
{
	if (r->flags & WS_WF_JOINED) {
		count(CNT_ROWS_JOINED);
		return false;
	}
	return r->flags & (WS_WF_EXPLICIT | WS_WF_WROTE);
}

static __always_inline void sqlite_clear_row(struct thread_state *t)
{
	t->eng.sqlite.txn_end_depth = 0;
	t->eng.sqlite.txn_end_flags = 0;
}

#endif /* __WS_SQLITE_BPF_H */
