// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * walscope-calibrate - measure what walscope's own probes cost on this
 * machine, with the real BPF programs on the real attribution path.
 *
 * It traces itself.  This file measures what every engine shares (a
 * traced syscall, the tracepoints' slow path for every syscall) and gives
 * each engine's play the means to measure its own probes: each engine
 * unit that has one, probes/<name>.cal.h, defines <name>_calibrate(),
 * which plays its probed functions here (functions of this program with
 * the engine's cookies), times each call with CLOCK_MONOTONIC (the clock
 * BPF uses) against the same calls unprobed, and reads the write record
 * the BPF side emits to learn how much of a probe's cost fell inside the
 * probed window (charged to the phase) and how much outside (charged to
 * the parent): that split is what compensation needs.  The plays are
 * called in the registry's order (calibrate.gen.h, `make golden`).
 *
 * Prints one JSON object on stdout, all figures in nanoseconds: the
 * plays' figures (docs/engines.md names each), and
 *   tracepoint_ns: a traced syscall's cost (close(-1), traced vs not)
 *   sys_ign_ns: what any syscall of a traced thread pays for the syscall
 *     tracepoints being attached at all (getppid, before attach vs traced)
 *   iterations
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <limits.h>
#include <stdarg.h>
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
#define MAX_FIELDS 32

/* what a play is given: the loaded programs, and where its figures go */
struct ws_cal {
	struct walscope_bpf *skel;
	struct ring_buffer *rb;
	const char *exe;	/* this program: the plays probe its functions */
	int nr_fields;
	const char *keys[MAX_FIELDS];
	double values[MAX_FIELDS];
};

static unsigned long long *samples;
static int iters = DEFAULT_ITERS;
static struct ws_write_rec last_write;
static int have_write;

/* a figure for the JSON object, under its key (ns, rounded) */
static void cal_field(struct ws_cal *c, const char *key, double v)
{
	if (c->nr_fields == MAX_FIELDS) {
		fprintf(stderr, "walscope-calibrate: more than %d figures\n",
			MAX_FIELDS);
		exit(1);
	}
	c->keys[c->nr_fields] = key;
	c->values[c->nr_fields++] = v;
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

/* the median of samples[0..iters) */
static double median(void)
{
	qsort(samples, iters, sizeof(*samples), cmp_u64);
	return samples[iters / 2];
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

/* this process traced (its syscalls and probes recorded) or not */
static void cal_traced(struct ws_cal *c, int on)
{
	__u32 pid = getpid();
	__u8 yes = 1;

	if (on)
		bpf_map__update_elem(c->skel->maps.traced, &pid, sizeof(pid),
				     &yes, sizeof(yes), BPF_ANY);
	else
		bpf_map__delete_elem(c->skel->maps.traced, &pid, sizeof(pid), 0);
}

/* the records emitted so far: the last write's is in last_write */
static void cal_drain(struct ws_cal *c)
{
	ring_buffer__consume(c->rb);
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

/* a probe on func of this program (ret: its return) with this cookie */
static struct bpf_link *cal_attach(struct ws_cal *c,
				   struct bpf_program *prog, const char *func,
				   int ret, __u64 cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = func, .retprobe = ret,
		    .bpf_cookie = cookie);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, -1, c->exe,
							      0, &opts);

	if (!l) {
		fprintf(stderr, "walscope-calibrate: cannot attach %s: %s\n",
			func, strerror(errno));
		exit(1);
	}
	return l;
}

/* an engine's probe cookie: the phase, the engine in byte 1 */
#define WS_CAL_COOKIE(engine, ph)	((__u64)(ph) | (__u64)(engine) << 8)

/* each engine's play, <name>_calibrate(), and ws_calibrate_engines() */
#include "calibrate.gen.h"

static int silent(enum libbpf_print_level l, const char *f, va_list a)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, a) : 0;
}

int main(int argc, char **argv)
{
	struct ws_cal cal = {};
	double sys_off, sys_on, ign_off, ign_on;
	char exe[PATH_MAX];
	ssize_t n;
	int i;

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
	cal.exe = exe;
	libbpf_set_print(silent);

	time_ignored();
	ign_off = time_ignored();	/* no program attached yet */
	cal.skel = walscope_bpf__open();
	if (!cal.skel)
		return 1;
	bpf_program__set_autoload(cal.skel->progs.ws_sample, false);
	/* the iterators run on demand in the collector, never here */
	bpf_program__set_autoattach(cal.skel->progs.ws_task_sweep, false);
	bpf_program__set_autoattach(cal.skel->progs.ws_syscw_sweep, false);
	bpf_map__set_max_entries(cal.skel->maps.events, 1 << 20);
	if (walscope_bpf__load(cal.skel) || walscope_bpf__attach(cal.skel)) {
		fprintf(stderr, "walscope-calibrate: cannot load BPF programs\n");
		return 1;
	}
	cal.rb = ring_buffer__new(bpf_map__fd(cal.skel->maps.events),
				  on_record, NULL, NULL);

	sys_off = time_syscall();
	cal_traced(&cal, 1);
	sys_on = time_syscall();
	ign_on = time_ignored();
	cal_field(&cal, "tracepoint_ns", sys_on - sys_off);
	cal_field(&cal, "sys_ign_ns", ign_on - ign_off);

	ws_calibrate_engines(&cal);

	printf("{");
	for (i = 0; i < cal.nr_fields; i++)
		printf("\"%s\": %.0f, ", cal.keys[i], cal.values[i]);
	printf("\"iterations\": %d}\n", iters);
	ring_buffer__free(cal.rb);
	walscope_bpf__destroy(cal.skel);
	return 0;
}
