/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sqlite.cal.h - SQLite's play in walscope-calibrate (user space; see
 * collectors/walscope_calibrate.c for what a play is given).
 *
 * sqlite_cal_step() plays sqlite3_step on a fake statement (BEGIN opens a
 * transaction, SELECT steps are timed, COMMIT closes it), and pwrite()
 * calls to a "*.db" file inside that transaction give the cost of a
 * traced syscall and the share of it inside its window.  Its figures:
 *   sql_pair_ns, sql_pair_in_ns: the sqlite3_step pair (which reads the
 *     statement's text too), and its cost inside the transaction's window
 *   sys_ns, sys_in_ns: a traced syscall inside a row, and its cost inside
 *     the syscall's window
 */
#ifndef __WS_SQLITE_CAL_H
#define __WS_SQLITE_CAL_H

/* what sql_class() reads of a Vdbe: a pointer to the SQL text */
struct sqlite_cal_vdbe {
	void *pad;
	const char *sql;
};

__attribute__((noinline, used, optimize("O0")))
void sqlite_cal_step(struct sqlite_cal_vdbe *v)
{
	asm volatile("" ::: "memory");
}

static struct sqlite_cal_vdbe sqlite_cal_begin = { .sql = "BEGIN" };
static struct sqlite_cal_vdbe sqlite_cal_select = { .sql = "SELECT 1" };
static struct sqlite_cal_vdbe sqlite_cal_commit = { .sql = "COMMIT" };

static double sqlite_cal_time_step(void)
{
	unsigned long long t0;
	int i;

	for (i = 0; i < iters; i++) {
		pollute();
		t0 = now_ns();
		sqlite_cal_step(&sqlite_cal_select);
		samples[i] = now_ns() - t0;
	}
	return median();
}

static double sqlite_cal_time_pwrite(int fd)
{
	unsigned long long t0;
	char buf[64] = {};
	int i;

	for (i = 0; i < iters; i++) {
		pollute();
		t0 = now_ns();
		if (pwrite(fd, buf, sizeof(buf), 0) < 0)
			return -1;
		samples[i] = now_ns() - t0;
	}
	return median();
}

/* a database file the BPF side knows as one (opened while traced) */
static int sqlite_cal_db(struct ws_cal *c)
{
	char path[] = "/tmp/walscope-calibrate-XXXXXX.db";
	int fd = mkstemps(path, 3);

	if (fd < 0) {
		fprintf(stderr, "walscope-calibrate: %s: %s\n", path,
			strerror(errno));
		exit(1);
	}
	close(fd);
	fd = open(path, O_RDWR);
	unlink(path);
	if (fd < 0) {
		fprintf(stderr, "walscope-calibrate: %s: %s\n", path,
			strerror(errno));
		exit(1);
	}
	return fd;
}

static void sqlite_calibrate(struct ws_cal *c)
{
	__u64 cookie = WS_CAL_COOKIE(WS_ENGINE_SQLITE, PH_SQL_STEP) |
		       (__u64)offsetof(struct sqlite_cal_vdbe, sql) << 16;
	double base, pw_off, pw_on, pair, pair_in = 0, sys = 0, sys_in = 0;
	struct bpf_link *a, *b;
	int fd;
	double n;

	cal_traced(c, 0);
	sqlite_cal_time_step();
	base = sqlite_cal_time_step();	/* unprobed, untraced: the reference */
	cal_traced(c, 1);
	fd = sqlite_cal_db(c);
	if (sqlite_cal_time_pwrite(fd) < 0)	/* warm up */
		exit(1);
	cal_traced(c, 0);
	pw_off = sqlite_cal_time_pwrite(fd);	/* untraced: the reference */
	cal_traced(c, 1);

	a = cal_attach(c, c->skel->progs.ws_phase_enter, "sqlite_cal_step", 0,
		       cookie);
	b = cal_attach(c, c->skel->progs.ws_phase_exit, "sqlite_cal_step", 1,
		       cookie);
	cal_drain(c);
	have_write = 0;
	sqlite_cal_step(&sqlite_cal_begin);
	sqlite_cal_time_step();		/* warm up */
	pair = sqlite_cal_time_step() - base;
	pw_on = sqlite_cal_time_pwrite(fd);
	sqlite_cal_step(&sqlite_cal_commit);
	cal_drain(c);
	if (have_write && last_write.engine == WS_ENGINE_SQLITE &&
	    last_write.hits_in[SC_SQL_EXEC]) {
		pair_in = (double)last_write.comp_ns[SC_SQL_EXEC] /
			  last_write.hits_in[SC_SQL_EXEC] - base;
		n = last_write.sys_in[SC_DB_WRITE_IO];
		sys = pw_on - pw_off;
		if (n)
			sys_in = last_write.comp_ns[SC_DB_WRITE_IO] / n - pw_off;
	}
	bpf_link__destroy(a);
	bpf_link__destroy(b);
	close(fd);

	cal_field(c, "sql_pair_ns", pair);
	cal_field(c, "sql_pair_in_ns", pair_in);
	cal_field(c, "sys_ns", sys);
	cal_field(c, "sys_in_ns", sys_in);
}

#endif /* __WS_SQLITE_CAL_H */
