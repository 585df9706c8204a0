// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * walscope-calibrate - measure what walscope's own probes cost on this
 * machine, with the real BPF programs on the real attribution path.
 *
 * It traces itself: cal_write() plays DBImpl::WriteImpl (PH_WRITE), and
 * inside it cal_phase() is called N times with an entry+return probe pair
 * (PH_QUEUE), or cal_one() with an entry-only probe (PH_LEADER).  Each call
 * is timed with CLOCK_MONOTONIC (the clock BPF uses); medians against the
 * same calls unprobed give the cost per hit.  The write record the BPF side
 * emits for cal_write() tells how much of a pair's cost fell inside the
 * probed window (charged to the phase) and how much outside (charged to
 * the parent): that split is what compensation needs.
 *
 * SQLite's path is measured the same way: cal_sql() plays sqlite3_step on
 * a fake statement (BEGIN opens a transaction, SELECT steps are timed, COMMIT
 * closes it), and pwrite() calls to a "*.db" file inside that transaction
 * give the cost of a traced syscall and the share of it inside its window.
 *
 * Prints one JSON object on stdout, all figures in nanoseconds:
 *   uprobe_ns, uretprobe_ns, pair_ns, pair_in_ns, pair_out_ns, one_ns,
 *   tracepoint_ns, timer_ns, stepped_pair_ns, stepped_pair_in_ns,
 *   sql_pair_ns, sql_pair_in_ns, sys_ns, sys_in_ns, sys_ign_ns, iterations
 * sys_ign_ns: what any syscall of a traced thread pays for the syscall
 * tracepoints being attached at all (getppid, before attach vs traced).
 * "stepped": a probe site whose first instruction the kernel cannot
 * emulate and must single-step out of line (crc32c::Extend's "jmp *mem").
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "walscope.h"
#include "walscope.skel.h"

#define DEFAULT_ITERS 5000

static unsigned long long *samples;
static int iters = DEFAULT_ITERS;
static struct ws_write_rec last_write;
static int have_write;

/*
 * The probed functions start with "push %rbp" like RocksDB's (the uprobe
 * emulates it; an instruction it must single-step out of line, such as a
 * bare "ret" or crc32c::Extend's "jmp *mem", costs several times more:
 * cal_stepped() measures that case).
 */
__attribute__((noinline, used, optimize("O0"))) void cal_phase(void)
{
	asm volatile("" ::: "memory");
}

__attribute__((noinline, used, optimize("O0"))) void cal_one(void)
{
	asm volatile("" ::: "memory");
}

__attribute__((noinline, used, optimize("O2"))) void cal_stepped(void)
{
	asm volatile("" ::: "memory");
}

/* what sql_class() reads of a Vdbe: a pointer to the SQL text */
struct fake_vdbe {
	void *pad;
	const char *sql;
};

__attribute__((noinline, used, optimize("O0"))) void cal_sql(struct fake_vdbe *v)
{
	asm volatile("" ::: "memory");
}

/*
 * Between timed calls, walk a buffer the size of a typical L2: a real
 * workload's work between two probe hits evicts the probe's code and data,
 * and a probe costs more cold than in a tight loop (WALSCOPE_CAL_WARM=1
 * measures the tight loop instead).
 */
#define POLLUTE_BYTES (1 << 20)
static volatile unsigned char *pollute_buf;

static void pollute(void)
{
	unsigned int i;

	if (!pollute_buf)
		return;
	for (i = 0; i < POLLUTE_BYTES; i += 64)
		pollute_buf[i]++;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static double median(void)
{
	qsort(samples, iters, sizeof(*samples), cmp_u64);
	return samples[iters / 2];
}

/* one "write": time each call of fn; returns the median per call */
__attribute__((noinline, used)) double cal_write(void (*fn)(void))
{
	unsigned long long t0;
	int i;

	for (i = 0; i < iters; i++) {
		pollute();
		t0 = now_ns();
		fn();
		samples[i] = now_ns() - t0;
	}
	return median();
}

static double time_syscall_nr(long nr, long arg)
{
	unsigned long long t0;
	int i;

	for (i = 0; i < iters; i++) {
		pollute();
		t0 = now_ns();
		syscall(nr, arg);
		samples[i] = now_ns() - t0;
	}
	return median();
}

/* close(-1): a syscall the programs trace */
static double time_syscall(void)
{
	return time_syscall_nr(SYS_close, -1);
}

/* getppid(): one they pass over; with any syscall tracepoint attached the
 * kernel takes its slow path for every syscall of every task */
static double time_ignored(void)
{
	return time_syscall_nr(SYS_getppid, 0);
}

static struct fake_vdbe sql_begin = { .sql = "BEGIN" };
static struct fake_vdbe sql_select = { .sql = "SELECT 1" };
static struct fake_vdbe sql_commit = { .sql = "COMMIT" };

static double time_sql(void)
{
	unsigned long long t0;
	int i;

	for (i = 0; i < iters; i++) {
		pollute();
		t0 = now_ns();
		cal_sql(&sql_select);
		samples[i] = now_ns() - t0;
	}
	return median();
}

static double time_pwrite(int fd)
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

static struct bpf_link *attach(struct bpf_program *prog, const char *exe,
			       const char *func, int ret, __u64 phase);

/* a RocksDB probe's cookie: the phase, the engine in byte 1 */
#define ROCKSDB_COOKIE(ph)	((__u64)(ph) | (__u64)WS_ENGINE_ROCKSDB << 8)

/*
 * SQLite's probe pair and a traced syscall, inside one transaction.
 * Returns the pair's cost; sets the rest (see the header).
 */
static double measure_sqlite(struct walscope_bpf *skel, struct ring_buffer *rb,
			     const char *exe, double sql_base, double pw_off,
			     int fd, double *sql_in, double *sys, double *sys_in)
{
	__u64 cookie = PH_SQL_STEP | (__u64)WS_ENGINE_SQLITE << 8 |
		       (__u64)offsetof(struct fake_vdbe, sql) << 16;
	struct bpf_link *a, *b;
	double t, pw_on, n;

	a = attach(skel->progs.ws_phase_enter, exe, "cal_sql", 0, cookie);
	b = attach(skel->progs.ws_phase_exit, exe, "cal_sql", 1, cookie);
	ring_buffer__consume(rb);
	have_write = 0;
	cal_sql(&sql_begin);
	time_sql();		/* warm up */
	t = time_sql() - sql_base;
	pw_on = time_pwrite(fd);
	cal_sql(&sql_commit);
	ring_buffer__consume(rb);
	*sql_in = *sys = *sys_in = 0;
	if (have_write && last_write.engine == WS_ENGINE_SQLITE &&
	    last_write.hits_in[SC_SQL_EXEC]) {
		*sql_in = (double)last_write.comp_ns[SC_SQL_EXEC] /
			  last_write.hits_in[SC_SQL_EXEC] - sql_base;
		n = last_write.sys_in[SC_DB_WRITE_IO];
		*sys = pw_on - pw_off;
		if (n)
			*sys_in = last_write.comp_ns[SC_DB_WRITE_IO] / n - pw_off;
	}
	bpf_link__destroy(a);
	bpf_link__destroy(b);
	return t;
}

static int on_record(void *ctx, void *data, size_t size)
{
	if (size >= sizeof(last_write) &&
	    *(__u32 *)data == WS_REC_WRITE) {
		memcpy(&last_write, data, sizeof(last_write));
		have_write = 1;
	}
	return 0;
}

static struct bpf_link *attach(struct bpf_program *prog, const char *exe,
			       const char *func, int ret, __u64 phase)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = func, .retprobe = ret,
		    .bpf_cookie = phase);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, -1, exe, 0,
							      &opts);

	if (!l) {
		fprintf(stderr, "walscope-calibrate: cannot attach %s: %s\n",
			func, strerror(errno));
		exit(1);
	}
	return l;
}

/* time fn under an entry+return probe pair; *in: the cost inside it */
static double measure_pair(struct walscope_bpf *skel, struct ring_buffer *rb,
			   const char *exe, const char *name,
			   void (*fn)(void), double *in)
{
	struct bpf_link *a, *b;
	double t;

	a = attach(skel->progs.ws_phase_enter, exe, name, 0, ROCKSDB_COOKIE(PH_QUEUE));
	b = attach(skel->progs.ws_phase_exit, exe, name, 1, ROCKSDB_COOKIE(PH_QUEUE));
	cal_write(fn);		/* warm up */
	ring_buffer__consume(rb);
	have_write = 0;
	t = cal_write(fn);
	ring_buffer__consume(rb);
	*in = 0;
	if (have_write && last_write.hits_in[RC_QUEUE])
		*in = (double)last_write.comp_ns[RC_QUEUE] /
		      last_write.hits_in[RC_QUEUE];
	bpf_link__destroy(a);
	bpf_link__destroy(b);
	return t;
}

static int silent(enum libbpf_print_level l, const char *f, va_list a)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, a) : 0;
}

int main(int argc, char **argv)
{
	struct bpf_link *w_in, *w_out, *o_in;
	double base, pair, one, sys_off, sys_on, body = 0, pair_in = 0, stepped;
	double stepped_in = 0, sql_base, sql_pair, sql_in, pw_off, sys, sys_in;
	double ign_off, ign_on;
	char dbpath[] = "/tmp/walscope-calibrate-XXXXXX.db";
	int fd;
	struct walscope_bpf *skel;
	struct ring_buffer *rb;
	char exe[PATH_MAX];
	__u32 pid = getpid();
	__u8 yes = 1;
	ssize_t n;

	if (argc > 1)
		iters = atoi(argv[1]);
	if (iters < 100 || iters > 1000000) {
		fprintf(stderr, "usage: walscope-calibrate [iterations 100..1e6]\n");
		return 2;
	}
	samples = calloc(iters, sizeof(*samples));
	if (!getenv("WALSCOPE_CAL_WARM"))
		pollute_buf = calloc(1, POLLUTE_BYTES);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0 || !samples)
		return 1;
	exe[n] = 0;
	libbpf_set_print(silent);

	time_ignored();
	ign_off = time_ignored();	/* no program attached yet */
	skel = walscope_bpf__open();
	if (!skel)
		return 1;
	bpf_program__set_autoload(skel->progs.ws_sample, false);
	/* the iterators run on demand in the collector, never here */
	bpf_program__set_autoattach(skel->progs.ws_task_sweep, false);
	bpf_program__set_autoattach(skel->progs.ws_syscw_sweep, false);
	bpf_map__set_max_entries(skel->maps.events, 1 << 20);
	if (walscope_bpf__load(skel) || walscope_bpf__attach(skel)) {
		fprintf(stderr, "walscope-calibrate: cannot load BPF programs\n");
		return 1;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, NULL,
			      NULL);

	/* warm up, then the unprobed reference */
	cal_write(cal_phase);
	base = cal_write(cal_phase);
	sys_off = time_syscall();
	time_sql();
	sql_base = time_sql();
	bpf_map__update_elem(skel->maps.traced, &pid, sizeof(pid), &yes,
			     sizeof(yes), BPF_ANY);
	sys_on = time_syscall();
	ign_on = time_ignored();
	/* opened while traced, so the BPF side knows it as a database file */
	fd = mkstemps(dbpath, 3);
	if (fd < 0) {
		fprintf(stderr, "walscope-calibrate: %s: %s\n", dbpath,
			strerror(errno));
		return 1;
	}
	close(fd);
	fd = open(dbpath, O_RDWR);
	unlink(dbpath);
	if (fd < 0 || (pw_off = time_pwrite(fd)) < 0)
		return 1;
	bpf_map__delete_elem(skel->maps.traced, &pid, sizeof(pid), 0);
	pw_off = time_pwrite(fd);	/* untraced: the reference */
	bpf_map__update_elem(skel->maps.traced, &pid, sizeof(pid), &yes,
			     sizeof(yes), BPF_ANY);
	sql_pair = measure_sqlite(skel, rb, exe, sql_base, pw_off, fd, &sql_in,
				  &sys, &sys_in);
	close(fd);

	w_in = attach(skel->progs.ws_phase_enter, exe, "cal_write", 0, ROCKSDB_COOKIE(PH_WRITE));
	w_out = attach(skel->progs.ws_phase_exit, exe, "cal_write", 1, ROCKSDB_COOKIE(PH_WRITE));
	pair = measure_pair(skel, rb, exe, "cal_phase", cal_phase, &pair_in);
	stepped = measure_pair(skel, rb, exe, "cal_stepped", cal_stepped,
			       &stepped_in) - base;

	o_in = attach(skel->progs.ws_phase_enter, exe, "cal_one", 0, ROCKSDB_COOKIE(PH_LEADER));
	cal_write(cal_one);
	one = cal_write(cal_one);
	bpf_link__destroy(o_in);
	bpf_link__destroy(w_in);
	bpf_link__destroy(w_out);

	/* the body of cal_phase itself is part of pair_in: remove it */
	body = base;
	pair -= base;
	one -= base;
	printf("{\"uprobe_ns\": %.0f, \"uretprobe_ns\": %.0f, \"pair_ns\": %.0f, "
	       "\"pair_in_ns\": %.0f, \"pair_out_ns\": %.0f, \"one_ns\": %.0f, "
	       "\"tracepoint_ns\": %.0f, \"timer_ns\": %.0f, "
	       "\"stepped_pair_ns\": %.0f, \"stepped_pair_in_ns\": %.0f, "
	       "\"sql_pair_ns\": %.0f, \"sql_pair_in_ns\": %.0f, "
	       "\"sys_ns\": %.0f, \"sys_in_ns\": %.0f, \"sys_ign_ns\": %.0f, "
	       "\"iterations\": %d}\n",
	       one, pair - one, pair, pair_in, pair - pair_in, one,
	       sys_on - sys_off, body, stepped, stepped_in, sql_pair, sql_in,
	       sys, sys_in, ign_on - ign_off, iters);
	ring_buffer__free(rb);
	walscope_bpf__destroy(skel);
	return 0;
}
