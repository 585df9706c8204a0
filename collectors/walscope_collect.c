// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * walscope-collect - load probes/walscope.bpf.c, attach what the Python side
 * resolved, follow the traced process trees, and stream fixed-size records
 * to one file per record type in the output folder.
 *
 * Usage: walscope-collect -o DIR [options] < commands   (--help lists them)
 *
 * Commands on stdin, one per line; each gets exactly one reply line on
 * stdout, "ok ..." or "err ...: reason":
 *   pid N         trace process N and its future children -> "ok pid N"
 *   attach FILE   attach the uprobes listed in FILE (the --attach format)
 *                 -> "ok attach ATTACHED FAILED"
 *   cont PID      let a process stopped at a new object go on -> "ok cont PID"
 *   seen DEV INO  an object already inspected: do not stop at it
 *                 (DEV as the kernel encodes it: major << 20 | minor)
 *   quit          stop (EOF on stdin too)                  -> "ok quit"
 * stdout says "ready" once everything is attached.  With --follow-objects,
 * it also says, unasked, "obj PID TID HOW DEV INO ADDR LEN STOPPED TS NAME"
 * for each executable object a traced process maps or execs for the first
 * time (HOW: mmap or exec); a stopped process waits for "cont PID", and
 * every process still stopped is continued when the collector exits.
 * Errors are also printed to stderr, prefixed "walscope-collect:".
 *
 * Exit status: 0 on success, 1 when the probes cannot be loaded or an
 * option is unusable (2 for bad usage, from argp), 3 when writing the
 * output failed, 4 when polling the ring buffer failed.  collector.json is
 * written whatever happened after load, so the Python side can tell.
 *
 * Records are appended as they arrive and flushed after every poll, so a
 * crash loses at most the last partial record, which readers drop.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <math.h>
#include <time.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "walscope.h"
#include "file_kind.h"
#include "walscope.skel.h"
#include "budget.h"


#define POLL_MS 20	/* records are not announced: poll this often */

enum exit_code {
	EXIT_OK = 0,
	EXIT_SETUP = 1,		/* cannot load, attach or open the output */
	EXIT_USAGE = 2,
	EXIT_WRITE = 3,		/* writing the output failed */
	EXIT_POLL = 4,		/* polling the ring buffer failed */
};

static struct env {
	const char *outdir;
	const char *attach_file;
	const char *cpu_types;
	unsigned long ringbuf_kb;
	unsigned long min_runq_ns;
	unsigned long sample_hz;
	unsigned long stack_entries;
	unsigned long stack_every;
	bool writes_io_only;
	bool no_syscalls;
	bool offcpu, offcpu_kstacks, offcpu_user;
	bool sample_stacks;
	bool no_sched;
	bool groups_unprobed;
	bool follow_objects;
	unsigned long window_ms;	/* 0: no windows, probes attached for good */
	unsigned long window_gap_ms;	/* mean closed time between windows */
	double budget;			/* < 0: no budget; else the windows'
					 * schedule follows it (budget.h) */
	double hit_ns[9];		/* a probe pair and an entry-only probe,
					 * warm and cold; a traced and an
					 * untraced syscall; a uprobe, a
					 * uretprobe, a tracepoint (midpoints) */
	bool verbose;
} env = {
	.ringbuf_kb = 16 << 10,
	.stack_every = 1,
	.budget = -1,
	.hit_ns = { 2000, 2000, 1000, 1000, 400, 300, 1000, 1000, 400 },
};

static volatile sig_atomic_t exiting;

struct out_file {
	const char *name;
	size_t size;
	FILE *f;
	unsigned long long n;
};

static struct out_file outs[] = {
	[WS_REC_WRITE] = { "writes.bin", sizeof(struct ws_write_rec) },
	[WS_REC_IO] = { "io.bin", sizeof(struct ws_io_rec) },
	[WS_REC_SCHED] = { "sched.bin", sizeof(struct ws_sched_rec) },
	[WS_REC_OPEN] = { "open.bin", sizeof(struct ws_open_rec) },
	[WS_REC_SAMPLE] = { "samples.bin", sizeof(struct ws_sample_rec) },
	[WS_REC_TASK] = { "tasks.bin", sizeof(struct ws_task_rec) },
	[WS_REC_OBJECT] = { "objects.bin", sizeof(struct ws_object_rec) },
};
#define NR_OUTS (sizeof(outs) / sizeof(outs[0]))

static unsigned long long bad_records;
static int write_error;		/* errno of the first failed write */
static int poll_error;		/* errno of a failed ring buffer poll */

/* the uprobes listed by --attach and "attach" commands, however many;
 * attached for good, or (--window-ms) while a window is open */
struct probe {
	char *name;		/* "enter|exit <demangled name>" */
	char *path;
	unsigned long long offset;
	__u64 cookie;		/* enum ws_phase | argument << 16; a
				 * loader hook's: the offset to r_state */
	bool ret;
	bool loader;		/* the dynamic loader's hook: attached for
				 * the whole run, windows or not */
	struct bpf_link *link;
	int err;		/* -errno of the last attach, 0 if it attached */
};

static struct probe *probes;
static size_t nr_probes, cap_probes;

/* processes stopped at a new object, not yet continued */
static pid_t *stopped;
static size_t nr_stopped, cap_stopped;

const char *argp_program_version = "walscope-collect";
static const char doc[] =
"Load walscope's BPF probes, attach the uprobes in --attach, follow the "
"process trees named on stdin (\"pid N\"), and write one record file per "
"record type to -o DIR until \"quit\" or EOF on stdin.";

enum {
	OPT_ATTACH = 0x100, OPT_CPU_TYPES, OPT_RINGBUF_MB, OPT_RINGBUF_KB,
	OPT_MIN_RUNQ, OPT_SAMPLE_HZ, OPT_WRITES_IO_ONLY, OPT_NO_SYSCALLS,
	OPT_OFFCPU_SUMS, OPT_OFFCPU_STACKS, OPT_OFFCPU_USER, OPT_STACK_EVERY,
	OPT_GROUPS_UNPROBED, OPT_NO_SCHED, OPT_SAMPLE_STACKS, OPT_STACK_ENTRIES,
	OPT_FOLLOW_OBJECTS, OPT_WINDOW_MS, OPT_WINDOW_GAP_MS, OPT_BUDGET,
	OPT_HIT_NS,
};

static const struct argp_option opts[] = {
	{ "output", 'o', "DIR", 0, "Run folder to write (must exist)", 0 },
	{ "attach", OPT_ATTACH, "FILE", 0, "Uprobes to attach, one per line, "
	  "tab-separated: enter|exit PHASE OFFSET PATH NAME", 0 },
	{ "cpu-types", OPT_CPU_TYPES, "STR", 0,
	  "One letter per CPU: P, E or U (uniform)", 0 },
	{ "ringbuf-mb", OPT_RINGBUF_MB, "N", 0,
	  "Ring buffer size in MiB, a power of two (default 16)", 0 },
	{ "ringbuf-kb", OPT_RINGBUF_KB, "N", 0,
	  "Ring buffer size in KiB (tests use it to force drops)", 0 },
	{ "min-runq-ns", OPT_MIN_RUNQ, "N", 0,
	  "Run-queue waits shorter than N ns get no record", 0 },
	{ "sample-hz", OPT_SAMPLE_HZ, "N", 0,
	  "Sample traced threads N times a second per CPU (0: off)", 0 },
	{ "writes-io-only", OPT_WRITES_IO_ONLY, NULL, 0,
	  "io records only for syscalls inside writes", 0 },
	{ "no-syscalls", OPT_NO_SYSCALLS, NULL, 0, "No syscall tracepoints: "
	  "samples and off-CPU periods read the syscall from saved registers", 0 },
	{ "offcpu-sums", OPT_OFFCPU_SUMS, NULL, 0,
	  "Sum off-CPU time per thread, syscall and user IP (offcpu.bin)", 0 },
	{ "offcpu-stacks", OPT_OFFCPU_STACKS, NULL, 0,
	  "Off-CPU sums per kernel stack too", 0 },
	{ "offcpu-user-stacks", OPT_OFFCPU_USER, NULL, 0,
	  "Off-CPU sums per kernel and user stack (frame pointers)", 0 },
	{ "offcpu-stack-every", OPT_STACK_EVERY, "N", 0,
	  "Walk the stacks of 1 in N off-CPU periods (default 1)", 0 },
	{ "groups-unprobed", OPT_GROUPS_UNPROBED, NULL, 0, "No write-group "
	  "probes: a write that calls the WAL leads; its futex waits and yields "
	  "outside probed phases are its queue", 0 },
	{ "no-sched", OPT_NO_SCHED, NULL, 0,
	  "No sched_switch/sched_wakeup programs", 0 },
	{ "sample-stacks", OPT_SAMPLE_STACKS, NULL, 0,
	  "Samples take user and kernel stack ids", 0 },
	{ "stack-entries", OPT_STACK_ENTRIES, "N", 0,
	  "Stack map size (tests use it to force misses)", 0 },
	{ "follow-objects", OPT_FOLLOW_OBJECTS, NULL, 0, "Stop a traced process at "
	  "each executable object it maps or execs for the first time and say "
	  "so on stdout (\"obj ...\"), until \"cont PID\"", 0 },
	{ "window-ms", OPT_WINDOW_MS, "N", 0, "Windows of N ms: the uprobes, syscall "
	  "and scheduler programs are attached only while one is open, and only a "
	  "write that begins inside one is recorded (windows.tsv)", 0 },
	{ "window-gap-ms", OPT_WINDOW_GAP_MS, "N", 0, "Mean time between windows "
	  "(exponentially distributed: windows are a Poisson process)", 0 },
	{ "budget", OPT_BUDGET, "F", 0, "With --window-ms: trace every write "
	  "while that costs at most F of throughput (0.02: 2%), else windows "
	  "whose duty F buys, re-estimated at each window (windows.tsv "
	  "\"cost\" lines)", 0 },
	{ "hit-ns", OPT_HIT_NS, "Pw,Pc,Ow,Oc,S,I,U,R,T", 0, "Calibrated cost of "
	  "a probe pair and of an entry-only probe (warm, cold), of a traced and "
	  "an untraced syscall: each write's probe time from its record; and of "
	  "a uprobe, a uretprobe and a tracepoint hit: every hit of the traced "
	  "processes (ns; the budget's estimates)", 0 },
	{ "verbose", 'v', NULL, 0, "libbpf debug output", 0 },
	{},
};

/* a whole decimal number in [lo, hi], or an argp error naming the option */
static unsigned long parse_ulong(struct argp_state *state, const char *opt,
				 const char *arg, unsigned long lo,
				 unsigned long hi)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < lo || v > hi)
		argp_error(state, "--%s: expected a whole number from %lu to "
			   "%lu, got '%s'", opt, lo, hi, arg);
	return v;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	char *end, tail;

	switch (key) {
	case 'o':
		env.outdir = arg;
		break;
	case 'v':
		env.verbose = true;
		break;
	case OPT_ATTACH:
		env.attach_file = arg;
		break;
	case OPT_CPU_TYPES:
		if (strlen(arg) > WS_MAX_CPUS ||
		    strspn(arg, "PEU") != strlen(arg))
			argp_error(state, "--cpu-types: one letter P, E or U "
				   "per CPU, at most %d, got '%s'",
				   WS_MAX_CPUS, arg);
		env.cpu_types = arg;
		break;
	case OPT_RINGBUF_MB:
		env.ringbuf_kb = parse_ulong(state, "ringbuf-mb", arg, 1,
					     1024) << 10;
		break;
	case OPT_RINGBUF_KB:
		env.ringbuf_kb = parse_ulong(state, "ringbuf-kb", arg, 4,
					     1024 << 10);
		break;
	case OPT_MIN_RUNQ:
		env.min_runq_ns = parse_ulong(state, "min-runq-ns", arg, 0,
					      ULONG_MAX);
		break;
	case OPT_SAMPLE_HZ:
		env.sample_hz = parse_ulong(state, "sample-hz", arg, 0, 100000);
		break;
	case OPT_STACK_EVERY:
		env.stack_every = parse_ulong(state, "offcpu-stack-every", arg,
					      1, UINT_MAX);
		break;
	case OPT_STACK_ENTRIES:
		env.stack_entries = parse_ulong(state, "stack-entries", arg, 1,
						1 << 24);
		break;
	case OPT_WRITES_IO_ONLY:
		env.writes_io_only = true;
		break;
	case OPT_NO_SYSCALLS:
		env.no_syscalls = true;
		break;
	case OPT_OFFCPU_USER:
		env.offcpu_user = true;
		/* fall through */
	case OPT_OFFCPU_STACKS:
		env.offcpu_kstacks = true;
		/* fall through */
	case OPT_OFFCPU_SUMS:
		env.offcpu = true;
		break;
	case OPT_GROUPS_UNPROBED:
		env.groups_unprobed = true;
		break;
	case OPT_NO_SCHED:
		env.no_sched = true;
		break;
	case OPT_SAMPLE_STACKS:
		env.sample_stacks = true;
		break;
	case OPT_FOLLOW_OBJECTS:
		env.follow_objects = true;
		break;
	case OPT_WINDOW_MS:
		env.window_ms = parse_ulong(state, "window-ms", arg, 1, 3600000);
		break;
	case OPT_WINDOW_GAP_MS:
		env.window_gap_ms = parse_ulong(state, "window-gap-ms", arg, 1, 36000000);
		break;
	case OPT_BUDGET:
		errno = 0;
		env.budget = strtod(arg, &end);
		if (errno || end == arg || *end || !(env.budget > 0 && env.budget < 1))
			argp_error(state, "--budget: '%s' is not a share between 0 and 1", arg);
		break;
	case OPT_HIT_NS:
		if (sscanf(arg, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf%c", &env.hit_ns[0],
			   &env.hit_ns[1], &env.hit_ns[2], &env.hit_ns[3],
			   &env.hit_ns[4], &env.hit_ns[5], &env.hit_ns[6],
			   &env.hit_ns[7], &env.hit_ns[8], &tail) != 9 ||
		    env.hit_ns[0] < 0 || env.hit_ns[1] < 0 || env.hit_ns[2] < 0 ||
		    env.hit_ns[3] < 0 || env.hit_ns[4] < 0 || env.hit_ns[5] < 0 ||
		    env.hit_ns[6] < 0 || env.hit_ns[7] < 0 || env.hit_ns[8] < 0)
			argp_error(state, "--hit-ns: '%s' is not nine costs in ns, "
				   "Pw,Pc,Ow,Oc,S,I,U,R,T", arg);
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!env.outdir)
			argp_error(state, "-o DIR is required");
		if (env.ringbuf_kb & (env.ringbuf_kb - 1))
			argp_error(state, "the ring buffer must be a power of "
				   "two from 4 KiB to 1024 MiB");
		if (env.budget > 0 ? !env.window_ms || env.window_gap_ms :
		    !env.window_ms != !env.window_gap_ms)
			argp_error(state, "--window-ms goes with either --window-gap-ms "
				   "or --budget");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = { opts, parse_opt, NULL, doc, NULL, NULL, NULL };

static void on_signal(int sig)
{
	exiting = 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	if (level == LIBBPF_DEBUG && !env.verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* the first write error stops the collection; every one is reported once */
static void fail_write(const char *name)
{
	int err = errno ? errno : EIO;

	if (!write_error)
		fprintf(stderr, "walscope-collect: writing %s/%s: %s\n",
			env.outdir, name, strerror(err));
	write_error = err;
	exiting = 1;
}

/* one reply line per command: the Python side waits for it */
static void reply(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* an object record: tell the Python side, remember a stopped process */
static void announce_object(const struct ws_object_rec *o)
{
	char name[WS_NAME_LEN + 1];
	pid_t *bigger;
	size_t i;

	memcpy(name, o->name, WS_NAME_LEN);
	name[WS_NAME_LEN] = 0;
	for (i = 0; name[i]; i++)	/* one line, one field */
		if (name[i] <= ' ')
			name[i] = '?';
	if (o->stopped) {
		if (nr_stopped == cap_stopped) {
			cap_stopped = cap_stopped ? cap_stopped * 2 : 16;
			bigger = realloc(stopped, cap_stopped * sizeof(*stopped));
			if (!bigger) {	/* never leave it stopped */
				kill(o->pid, SIGCONT);
				fprintf(stderr, "walscope-collect: out of memory\n");
				return;
			}
			stopped = bigger;
		}
		stopped[nr_stopped++] = o->pid;
	}
	reply("obj %u %u %s %llu %llu %llu %llu %u %llu %s", o->pid, o->tid,
	      o->how == WS_OBJ_EXEC ? "exec" :
	      o->how == WS_OBJ_LOADER ? "loader" : "mmap", (unsigned long long)o->dev,
	      (unsigned long long)o->ino, (unsigned long long)o->addr,
	      (unsigned long long)o->len, o->stopped,
	      (unsigned long long)o->ts_ns, name[0] ? name : "?");
}

/* SIGCONT to a process stopped at an object; 0 or -errno */
static int continue_pid(pid_t pid)
{
	size_t i, left = 0;
	int err = 0;

	if (kill(pid, SIGCONT))
		err = -errno;
	for (i = 0; i < nr_stopped; i++)
		if (stopped[i] != pid)
			stopped[left++] = stopped[i];
	nr_stopped = left;
	return err;
}

static void sample_write(const struct ws_write_rec *w);

static int on_record(void *ctx, void *data, size_t size)
{
	__u32 type;

	if (size < sizeof(__u32)) {
		bad_records++;
		return 0;
	}
	type = *(__u32 *)data;
	if (type == 0 || type >= NR_OUTS || !outs[type].f ||
	    size < outs[type].size) {
		bad_records++;
		return 0;
	}
	if (fwrite(data, outs[type].size, 1, outs[type].f) != 1)
		fail_write(outs[type].name);
	outs[type].n++;
	if (type == WS_REC_OBJECT)
		announce_object(data);
	else if (type == WS_REC_WRITE && env.budget > 0)
		sample_write(data);
	return 0;
}

static void flush_outputs(void)
{
	size_t i;

	for (i = 1; i < NR_OUTS; i++)
		if (outs[i].f && fflush(outs[i].f))
			fail_write(outs[i].name);
}

/* fds already open in a process we attach to: give them their kinds */
static void seed_fds(struct walscope_bpf *skel, __u32 pid)
{
	char dir[64], link[PATH_MAX], path[WS_PATH_LEN];
	struct fd_info {
		__u64 ino;
		__u16 kind;
		__u16 pad[3];
	} fi;
	struct dirent *de;
	struct stat st;
	ssize_t n;
	DIR *d;
	__u64 key;
	int fd;

	snprintf(dir, sizeof(dir), "/proc/%u/fd", pid);
	d = opendir(dir);
	if (!d)		/* gone already: add_pid's map update says so */
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		if (stat(link, &st))
			continue;	/* closed meanwhile */
		n = readlink(link, path, sizeof(path) - 1);
		if (n < 0)
			continue;
		path[n] = 0;
		memset(&fi, 0, sizeof(fi));
		fi.ino = st.st_ino;
		fi.kind = ws_file_kind(path, S_ISDIR(st.st_mode));
		key = (__u64)pid << 32 | (__u32)fd;
		if (bpf_map__update_elem(skel->maps.fds, &key, sizeof(key),
					 &fi, sizeof(fi), BPF_ANY))
			fprintf(stderr, "walscope-collect: pid %u fd %d: fd "
				"map full, its file kind is unknown\n", pid, fd);
	}
	closedir(d);
}

/*
 * Run the task iterator: a ws_task_rec for each thread of process tgid (of
 * every traced process if 0), phase as given.  Its records go through the
 * ring buffer like any other.  Returns 0 or -errno.
 */
static int sweep_tasks(struct walscope_bpf *skel, __u32 tgid, __u32 phase)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};
	struct bpf_link *link;
	char buf[64];
	ssize_t n;
	int fd, err = 0;

	if (tgid) {
		info.task.pid = tgid;
		opts.link_info = &info;
		opts.link_info_len = sizeof(info);
	}
	skel->data->sweep_phase = phase;
	link = bpf_program__attach_iter(skel->progs.ws_task_sweep, &opts);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
	} else {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		if (n < 0)
			err = -errno;
		close(fd);
	}
	bpf_link__destroy(link);
	return err;
}

static void add_pid(struct walscope_bpf *skel, __u32 pid)
{
	__u8 one = 1;
	int err;

	/* kinds first: the first syscall traced must already find its fd */
	seed_fds(skel, pid);
	err = bpf_map__update_elem(skel->maps.traced, &pid, sizeof(pid), &one,
				   sizeof(one), BPF_ANY);
	if (err) {
		fprintf(stderr, "walscope-collect: cannot trace pid %u: %s\n",
			pid, strerror(-err));
		reply("err pid %u: %s", pid, strerror(-err));
		return;
	}
	err = sweep_tasks(skel, pid, WS_TASK_BASELINE);
	if (err) {	/* traced, but its threads' baseline is missing */
		fprintf(stderr, "walscope-collect: pid %u: task iterator: %s\n",
			pid, strerror(-err));
		reply("err pid %u: task iterator: %s", pid, strerror(-err));
		return;
	}
	reply("ok pid %u", pid);
}

static int attach_uprobes(struct walscope_bpf *skel, const char *file);

/* "attach FILE": more uprobes, while the process that needs them waits */
static void attach_command(struct walscope_bpf *skel, const char *file)
{
	size_t first = nr_probes, i, failed = 0;
	int err = attach_uprobes(skel, file);

	if (err) {
		reply("err attach %s: %s", file, strerror(-err));
		return;
	}
	for (i = first; i < nr_probes; i++)
		failed += probes[i].err != 0;
	reply("ok attach %zu %zu", nr_probes - first - failed, failed);
}

/* "seen DEV INO": an object inspected already (at start, from /proc) */
static void seen_command(struct walscope_bpf *skel, const char *args)
{
	struct ws_obj_key k;
	unsigned long long dev, ino;
	__u8 one = 1;
	char tail;
	int err;

	if (sscanf(args, "%llu %llu%c", &dev, &ino, &tail) != 2) {
		reply("err seen %s: expected DEV INO", args);
		return;
	}
	k.dev = dev;
	k.ino = ino;
	err = bpf_map__update_elem(skel->maps.objects_seen, &k, sizeof(k), &one,
				   sizeof(one), BPF_ANY);
	if (err)
		reply("err seen %s: %s", args, strerror(-err));
	else
		reply("ok seen %llu %llu", dev, ino);
}

/* a whole decimal pid in a command, or 0 */
static pid_t command_pid(const char *arg)
{
	unsigned long pid;
	char *end;

	errno = 0;
	pid = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || !pid || pid > INT_MAX)
		return 0;
	return pid;
}

/* one command line; returns 1 for "quit" */
static int handle_command(struct walscope_bpf *skel, char *line)
{
	pid_t pid;
	int err;

	line[strcspn(line, "\r\n")] = 0;
	if (!strcmp(line, "quit")) {
		reply("ok quit");
		return 1;
	}
	if (!strncmp(line, "pid ", 4)) {
		pid = command_pid(line + 4);
		if (!pid) {
			fprintf(stderr, "walscope-collect: bad pid '%s'\n",
				line + 4);
			reply("err pid %s: not a process id", line + 4);
			return 0;
		}
		add_pid(skel, pid);
		return 0;
	}
	if (!strncmp(line, "cont ", 5)) {
		pid = command_pid(line + 5);
		if (!pid) {
			reply("err cont %s: not a process id", line + 5);
			return 0;
		}
		err = continue_pid(pid);
		if (err)
			reply("err cont %d: %s", pid, strerror(-err));
		else
			reply("ok cont %d", pid);
		return 0;
	}
	if (!strncmp(line, "attach ", 7)) {
		attach_command(skel, line + 7);
		return 0;
	}
	if (!strncmp(line, "seen ", 5)) {
		seen_command(skel, line + 5);
		return 0;
	}
	fprintf(stderr, "walscope-collect: unknown command '%s'\n", line);
	reply("err unknown command '%s'", line);
	return 0;
}

/*
 * Read what stdin has and run the complete lines; 1 on EOF or "quit".  The
 * buffer grows with a line, so no command is ever cut.
 */
static int read_commands(struct walscope_bpf *skel, char **buf, size_t *cap,
			 size_t *used)
{
	char *nl, *start, *bigger;
	ssize_t n;

	if (*cap - *used < 256) {
		bigger = realloc(*buf, *cap * 2);
		if (!bigger) {
			fprintf(stderr, "walscope-collect: out of memory\n");
			return 1;
		}
		*buf = bigger;
		*cap *= 2;
	}
	n = read(0, *buf + *used, *cap - 1 - *used);
	if (n < 0)
		return errno != EINTR && errno != EAGAIN;
	if (n == 0)
		return 1;
	*used += n;
	(*buf)[*used] = 0;
	start = *buf;
	while ((nl = strchr(start, '\n'))) {
		*nl = 0;
		if (handle_command(skel, start))
			return 1;
		start = nl + 1;
	}
	*used = strlen(start);
	memmove(*buf, start, *used + 1);
	return 0;
}

static int add_probe(const char *kind, const char *name, const char *path,
		     unsigned long long offset, __u64 cookie)
{
	struct probe *bigger, *p;

	if (nr_probes == cap_probes) {
		cap_probes = cap_probes ? cap_probes * 2 : 64;
		bigger = realloc(probes, cap_probes * sizeof(*probes));
		if (!bigger)
			return -ENOMEM;
		probes = bigger;
	}
	p = &probes[nr_probes];
	memset(p, 0, sizeof(*p));
	if (asprintf(&p->name, "%s %s", kind, name) < 0)
		return -ENOMEM;
	p->path = strdup(path);
	if (!p->path) {
		free(p->name);
		return -ENOMEM;
	}
	p->offset = offset;
	p->cookie = cookie;
	p->ret = !strcmp(kind, "exit");
	p->loader = !strcmp(kind, "loader");
	nr_probes++;
	return 0;
}

/* attach one listed probe (a failure is reported and kept in its err) */
static void attach_probe(struct walscope_bpf *skel, struct probe *p)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);

	if (p->link)
		return;
	opts.retprobe = p->ret;
	opts.bpf_cookie = p->cookie;
	p->link = bpf_program__attach_uprobe_opts(p->loader ? skel->progs.ws_loader :
						  p->ret ? skel->progs.ws_phase_exit :
						  skel->progs.ws_phase_enter,
						  -1, p->path, p->offset, &opts);
	p->err = p->link ? 0 : -errno;
	if (!p->link)
		fprintf(stderr, "walscope-collect: cannot attach %s: %s\n", p->name,
			strerror(-p->err));
}

static bool window_attached(void);
static size_t attach_window_probes(struct walscope_bpf *skel, size_t first);

/*
 * Read every line of the file into the probe list; attach them now unless
 * windows decide when (then a window open now takes them at once).  A
 * loader hook (kind "loader", its cookie signed) is attached at once in
 * every mode.  A line that cannot be read, or memory running out, fails
 * the whole command.
 */
static int attach_uprobes(struct walscope_bpf *skel, const char *file)
{
	char kind[16], path[PATH_MAX], name[PATH_MAX];
	unsigned long long offset;
	size_t first = nr_probes, i;
	char *line = NULL;
	size_t cap = 0;
	long long cookie;
	int lineno = 0, err = 0;
	FILE *f;

	f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "walscope-collect: %s: %s\n", file,
			strerror(errno));
		return -errno;
	}
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		if (sscanf(line, "%15[^\t]\t%lld\t%llu\t%4095[^\t]\t%4095[^\n]",
			   kind, &cookie, &offset, path, name) != 5 ||
		    (strcmp(kind, "enter") && strcmp(kind, "exit") &&
		     strcmp(kind, "loader")) ||
		    (strcmp(kind, "loader") && (cookie < 0 || cookie > UINT_MAX))) {
			fprintf(stderr, "walscope-collect: %s:%d: not an attach "
				"line: %s", file, lineno, line);
			err = -EINVAL;
			break;
		}
		err = add_probe(kind, name, path, offset, (__u64)cookie);
		if (err) {
			fprintf(stderr, "walscope-collect: out of memory\n");
			break;
		}
	}
	if (!err && ferror(f)) {
		err = -errno;
		fprintf(stderr, "walscope-collect: reading %s: %s\n", file,
			strerror(errno));
	}
	free(line);
	fclose(f);
	if (err)
		return err;
	for (i = first; i < nr_probes; i++)
		if (!env.window_ms || probes[i].loader)
			attach_probe(skel, &probes[i]);
	if (env.window_ms && window_attached())	/* the open window's too */
		attach_window_probes(skel, first);
	return 0;
}

static int open_sampling(struct walscope_bpf *skel, int hz,
			 struct bpf_link **plinks, int ncpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = hz,
	};
	int cpu, fd, n = 0;

	for (cpu = 0; cpu < ncpu; cpu++) {
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
			     PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno != ENODEV)	/* a possible CPU not online */
				fprintf(stderr, "walscope-collect: cpu %d: "
					"perf_event_open: %s\n", cpu,
					strerror(errno));
			continue;
		}
		plinks[cpu] = bpf_program__attach_perf_event(
			skel->progs.ws_sample, fd);
		if (!plinks[cpu]) {
			fprintf(stderr, "walscope-collect: cpu %d: sampler: "
				"%s\n", cpu, strerror(errno));
			close(fd);
			continue;
		}
		n++;
	}
	return n;
}

/* a file of the run folder, for writing; NULL (reported) on failure */
static FILE *open_out(const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", env.outdir, name);
	f = fopen(path, "w");
	if (!f)
		fail_write(name);
	return f;
}

/* fclose that reports a failed final flush */
static void close_out(FILE *f, const char *name)
{
	if (ferror(f) | fclose(f))
		fail_write(name);
}

/* the stack map as struct ws_stack_ent records (stacks.bin) */
static void dump_stacks(struct walscope_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.stacks);
	struct ws_stack_ent e;
	__u32 next, *prev = NULL;
	FILE *f = open_out("stacks.bin");

	if (!f)
		return;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		e.id = next;
		prev = &e.id;
		memset(e.ips, 0, sizeof(e.ips));
		if (bpf_map_lookup_elem(fd, &e.id, e.ips))
			continue;	/* deleted meanwhile: nothing to keep */
		for (e.depth = 0; e.depth < WS_STACK_DEPTH && e.ips[e.depth];
		     e.depth++)
			;
		if (fwrite(&e, sizeof(e), 1, f) != 1) {
			fail_write("stacks.bin");
			break;
		}
	}
	close_out(f, "stacks.bin");
}

/* the offcpu map, as struct ws_offcpu_ent records (offcpu.bin) */
static void dump_offcpu(struct walscope_bpf *skel)
{
	struct ws_offcpu_key *prev = NULL, next;
	int fd = bpf_map__fd(skel->maps.offcpu);
	struct ws_offcpu_ent e;
	FILE *f = open_out("offcpu.bin");

	if (!f)
		return;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		e.key = next;
		prev = &e.key;
		if (bpf_map_lookup_elem(fd, &e.key, &e.val))
			continue;
		if (fwrite(&e, sizeof(e), 1, f) != 1) {
			fail_write("offcpu.bin");
			break;
		}
	}
	close_out(f, "offcpu.bin");
}

/* a JSON string: quotes, backslashes and control characters escaped */
static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* collector.json: counters, record counts, errors, attach results */
static void write_summary(struct walscope_bpf *skel, int ncpu, int nsampled)
{
	int nr_cpus = libbpf_num_possible_cpus(), c;
	__u64 *vals = calloc(nr_cpus, sizeof(__u64));
	struct rusage ru;
	size_t i;
	__u32 k;
	FILE *f;

	if (!vals) {
		errno = ENOMEM;
		fail_write("collector.json");
		return;
	}
	f = open_out("collector.json");
	if (!f) {
		free(vals);
		return;
	}
	fprintf(f, "{\n  \"counters\": [");
	for (k = 0; k < CNT_NR; k++) {
		__u64 sum = 0;

		if (!bpf_map__lookup_elem(skel->maps.counters, &k, sizeof(k),
					  vals, sizeof(__u64) * nr_cpus, 0))
			for (c = 0; c < nr_cpus; c++)
				sum += vals[c];
		fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)sum);
	}
	fprintf(f, "],\n  \"records\": {");
	for (i = 1; i < NR_OUTS; i++)
		fprintf(f, "%s\"%s\": %llu", i > 1 ? ", " : "", outs[i].name,
			outs[i].n);
	fprintf(f, "},\n  \"bad_records\": %llu,\n", bad_records);
	fprintf(f, "  \"write_error\": %d,\n", write_error);
	fprintf(f, "  \"poll_error\": %d,\n", poll_error);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(f, "  \"cpu_user_s\": %.3f,\n  \"cpu_sys_s\": %.3f,\n"
		   "  \"max_rss_kb\": %ld,\n",
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss);
	fprintf(f, "  \"sampled_cpus\": %d,\n  \"cpus\": %d,\n", nsampled,
		ncpu);
	fprintf(f, "  \"attach\": [");
	for (i = 0; i < nr_probes; i++) {
		fprintf(f, "%s\n    {\"probe\": ", i ? "," : "");
		json_string(f, probes[i].name);
		fprintf(f, ", \"err\": %d}", probes[i].err);
	}
	fprintf(f, "\n  ]\n}\n");
	close_out(f, "collector.json");
	free(vals);
}

/*
 * --window-ms: a window's uprobes as uprobe_multi links (Linux 6.6), one per
 * object and direction.  Detaching a classic uprobe waits for an RCU grace
 * period, per probe: 21 probes took 2.2 s here; a multi link waits once.
 * libbpf 1.1 (Debian 12) predates its API, so the link is made with the
 * bpf(2) call itself: union bpf_attr's link_create for this attach type.
 */
#define WS_TRACE_UPROBE_MULTI	48	/* enum bpf_attach_type */
#define WS_F_UPROBE_MULTI_RETURN 1

struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;		/* const char * */
	__u64 offsets;		/* const unsigned long * */
	__u64 ref_ctr_offsets;
	__u64 cookies;		/* const __u64 * */
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 __pad;
	__u8 zero[64];		/* the rest of union bpf_attr, zero */
};

/* one multi link for the probes listed in idx (one object, one
 * direction); returns its fd, or -errno */
static int attach_multi(struct walscope_bpf *skel, const size_t *idx, size_t n)
{
	struct uprobe_multi_attr a = {};
	unsigned long *offsets = calloc(n, sizeof(*offsets));
	__u64 *cookies = calloc(n, sizeof(*cookies));
	struct probe *p = &probes[idx[0]];
	size_t i;
	int fd;

	if (!offsets || !cookies) {
		free(offsets);
		free(cookies);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		offsets[i] = probes[idx[i]].offset;
		cookies[i] = probes[idx[i]].cookie;
	}
	a.prog_fd = bpf_program__fd(p->ret ? skel->progs.ws_phase_exit :
				    skel->progs.ws_phase_enter);
	a.attach_type = WS_TRACE_UPROBE_MULTI;
	a.path = (unsigned long)p->path;
	a.offsets = (unsigned long)offsets;
	a.cookies = (unsigned long)cookies;
	a.cnt = n;
	a.multi_flags = p->ret ? WS_F_UPROBE_MULTI_RETURN : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	if (fd < 0)
		fd = -errno;
	free(offsets);
	free(cookies);
	return fd;
}

static int multi_fds[1024];
static size_t nr_multi;

/* the window's uprobes from probes[first] on: one multi link per object
 * and direction; returns the probes attached */
static size_t attach_window_probes(struct walscope_bpf *skel, size_t first)
{
	size_t *idx = calloc(nr_probes ? nr_probes : 1, sizeof(*idx));
	bool *done = calloc(nr_probes ? nr_probes : 1, sizeof(*done));
	size_t i, j, n, attached = 0;
	int fd;

	if (!idx || !done) {
		fprintf(stderr, "walscope-collect: out of memory\n");
		free(idx);
		free(done);
		return 0;
	}
	for (i = first; i < nr_probes; i++) {
		if (done[i] || probes[i].loader ||
		    nr_multi == sizeof(multi_fds) / sizeof(multi_fds[0]))
			continue;
		for (n = 0, j = i; j < nr_probes; j++)
			if (!done[j] && !probes[j].loader && probes[j].ret == probes[i].ret &&
			    !strcmp(probes[j].path, probes[i].path)) {
				idx[n++] = j;
				done[j] = true;
			}
		fd = attach_multi(skel, idx, n);
		for (j = 0; j < n; j++)
			probes[idx[j]].err = fd < 0 ? fd : 0;
		if (fd < 0) {
			fprintf(stderr, "walscope-collect: window: uprobe_multi on %s: %s\n",
				probes[i].path, strerror(-fd));
			continue;
		}
		multi_fds[nr_multi++] = fd;
		attached += n;
	}
	free(idx);
	free(done);
	return attached;
}

/* closing a multi link removes its breakpoints at once, then waits for an
 * RCU grace period (~0.6 s here) before it returns: each wait is a thread's,
 * side by side, so every breakpoint of the window is gone right away */
static void *close_fd(void *arg)
{
	close((int)(long)arg);
	return NULL;
}

static void detach_window_probes(bool wait)
{
	pthread_t th;

	while (nr_multi) {
		int fd = multi_fds[--nr_multi];

		if (wait || pthread_create(&th, NULL, close_fd, (void *)(long)fd))
			close(fd);	/* at exit, or no thread: here and now */
		else
			pthread_detach(th);
	}
}

/* --window-ms: the programs attached only while a window is open */
#define NR_WINDOW_PROGS 5
#define DRAIN_MAX_NS 1000000000ULL	/* a write in flight longer: give up */

#define FOREVER_NS (~0ULL)
/* while every write is traced, the cost is judged this often */
#define BUDGET_POLL_MS 10
/* writers told apart in a sample: more count as this many */
#define MAX_WRITERS 64

/* what the probes did since the sample began (--budget) */
static struct {
	unsigned long long since_ns;
	__u64 hits[3];			/* uprobe, uretprobe, tracepoint
					 * counters at since_ns */
	double probe_ns;		/* in its writes, by their records */
	unsigned long long lo_ns, hi_ns;	/* its writes' span */
	unsigned long long writes;
	__u32 tids[MAX_WRITERS];
	unsigned int threads;
} sample;

static struct {
	bool open, draining;
	unsigned long long next_ns;	/* the next window opens */
	unsigned long long open_ns, close_ns;
	struct bpf_link *links[NR_WINDOW_PROGS];
	FILE *log;			/* windows.tsv */
	unsigned long n;
	struct budget_sample seen;	/* what the window saw (--budget) */
} win;

static struct budget bud;

static bool window_attached(void)
{
	return win.open || win.draining;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* bpf_ktime_get_ns's clock */
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* a write record seen: its writer counts in the sample, and its probe
 * time (its hits as the record counts them, at the calibrated costs:
 * what compensation removes from it, less the wait-for charges) */
static void sample_write(const struct ws_write_rec *w)
{
	double pairs = 0, ones = 0, sys = 0, cold;
	unsigned int i;

	for (i = 0; i < WS_MAX_COMP; i++) {
		pairs += w->hits_in[i];
		ones += w->hits_one[i];
		sys += w->sys_in[i] * env.hit_ns[4] + w->sys_ign[i] * env.hit_ns[5];
	}
	/* the share of its hits that came cold, as compensation charges them */
	cold = pairs + ones > 0 ? w->cold_hits / (2 * pairs + ones) : 0.5;
	if (cold > 1)
		cold = 1;
	sample.probe_ns += pairs * (env.hit_ns[0] + cold * (env.hit_ns[1] - env.hit_ns[0])) +
			   ones * (env.hit_ns[2] + cold * (env.hit_ns[3] - env.hit_ns[2])) + sys;
	if (!sample.writes || w->start_ns < sample.lo_ns)
		sample.lo_ns = w->start_ns;
	if (w->start_ns + w->dur_ns > sample.hi_ns)
		sample.hi_ns = w->start_ns + w->dur_ns;
	sample.writes++;
	for (i = 0; i < sample.threads && i < MAX_WRITERS; i++)
		if (sample.tids[i] == w->tid)
			return;
	if (sample.threads < MAX_WRITERS)
		sample.tids[sample.threads] = w->tid;
	sample.threads++;
}

/* a counter summed over CPUs */
static __u64 counter(struct walscope_bpf *skel, __u32 k)
{
	static __u64 *vals;
	static int nr;
	__u64 sum = 0;
	int c;

	if (!vals) {
		nr = libbpf_num_possible_cpus();
		vals = calloc(nr, sizeof(*vals));
		if (!vals)
			return 0;
	}
	if (bpf_map__lookup_elem(skel->maps.counters, &k, sizeof(k), vals,
				 sizeof(*vals) * nr, 0))
		return 0;
	for (c = 0; c < nr; c++)
		sum += vals[c];
	return sum;
}

static void read_hits(struct walscope_bpf *skel, __u64 hits[3])
{
	hits[0] = counter(skel, CNT_UPROBE);
	hits[1] = counter(skel, CNT_URETPROBE);
	hits[2] = counter(skel, CNT_TRACEPOINT);
}

static void sample_start(struct walscope_bpf *skel, unsigned long long now)
{
	read_hits(skel, sample.hits);
	sample.since_ns = now;
	sample.probe_ns = 0;
	sample.lo_ns = sample.hi_ns = 0;
	sample.writes = 0;
	sample.threads = 0;
}

/* the sample so far, as the budget reads it: the span of its writes (the
 * records come in after their writes end, a poll or two late), or the
 * time since it began when it has fewer than two */
static struct budget_sample sample_take(struct walscope_bpf *skel,
					unsigned long long now)
{
	struct budget_sample s = { .paced_cost = -1 };
	__u64 hits[3];
	int i;

	read_hits(skel, hits);	/* every hit, in writes or not */
	for (i = 0; i < 3; i++)
		s.all_probe_ns += (double)(hits[i] - sample.hits[i]) * env.hit_ns[6 + i];
	s.all_period_ns = now - sample.since_ns;

	s.probe_ns = sample.probe_ns;
	s.period_ns = sample.writes >= 2 && sample.hi_ns > sample.lo_ns ?
		      sample.hi_ns - sample.lo_ns : now - sample.since_ns;
	s.writes = sample.writes;
	s.threads = sample.threads;
	return s;
}

static struct bpf_program *window_prog(struct walscope_bpf *skel, int i)
{
	struct bpf_program *p[NR_WINDOW_PROGS] = {
		skel->progs.ws_sys_enter, skel->progs.ws_sys_exit,
		skel->progs.ws_sched_switch, skel->progs.ws_sched_wakeup,
		skel->progs.ws_sched_wakeup_new,
	};

	return p[i];
}

/* closed time before a window: exponential with this mean */
static unsigned long long gap_ns(double mean_ms)
{
	double u = drand48();

	return (unsigned long long)(-log(1.0 - u) * mean_ms * 1e6);
}

static void window_line(const char *fmt, ...)
{
	va_list ap;

	if (!win.log)
		return;
	va_start(ap, fmt);
	vfprintf(win.log, fmt, ap);
	va_end(ap);
	if (fflush(win.log))
		fail_write("windows.tsv");
}

/*
 * The traced processes' write syscalls so far (/proc/PID/io syscw: a count
 * the kernel keeps anyway), as a "syscw" line of windows.tsv: read at each
 * window's open and close, and at the start and end, it says how many
 * write syscalls the gaps between windows held, from which the analysis
 * estimates the writes it did not record.
 */
#define MAX_SYSCW 1024			/* processes counted; more are not */
#define SYSCW_REFRESH_NS 100000000ULL	/* an exited one: its last reading */

static struct {
	__u32 tgid[MAX_SYSCW];
	unsigned long long last[MAX_SYSCW];
	unsigned int n;
	unsigned long long read_ns;
} syscw;

/* read every traced process's count; one that exited keeps its last */
static unsigned long long syscw_refresh(struct walscope_bpf *skel)
{
	unsigned long long sum = 0, v;
	__u32 key, next, *prev = NULL;
	char path[64], line[128];
	unsigned int i;
	FILE *f;

	while (!bpf_map__get_next_key(skel->maps.traced, prev, &next, sizeof(next))) {
		key = next;
		prev = &key;
		snprintf(path, sizeof(path), "/proc/%u/io", key);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "syscw: %llu", &v) != 1)
				continue;
			for (i = 0; i < syscw.n && syscw.tgid[i] != key; i++)
				;
			if (i == syscw.n && syscw.n < MAX_SYSCW)
				syscw.tgid[syscw.n++] = key;
			if (i < syscw.n)
				syscw.last[i] = v;
		}
		fclose(f);
	}
	for (i = 0; i < syscw.n; i++)
		sum += syscw.last[i];
	syscw.read_ns = now_ns();
	return sum;
}

/* the count now, also in windows.tsv */
static unsigned long long syscw_line(struct walscope_bpf *skel, unsigned long long ts)
{
	unsigned long long n;

	if (env.budget <= 0)
		return 0;
	n = syscw_refresh(skel);
	window_line("syscw\t%llu\t%llu\n", ts, n);
	return n;
}

/* the workload's pace (write syscalls a second) where it was not traced,
 * the gap before the open window, from the counts at its edges */
#define PACE_MIN_SYSCALLS 20	/* fewer in a gap or window: no pace */
static struct {
	unsigned long long close_ns, close_n;	/* the last window's close */
	unsigned long long open_ns, open_n;	/* the open window's open */
	double gap_rate;			/* < 0: none */
} pace = { .gap_rate = -1 };

/* the open window's pace against the gap's, as a cost (< 0: unknown) */
static double paced_cost(struct walscope_bpf *skel, unsigned long long now)
{
	unsigned long long n = syscw_refresh(skel);
	double rate;

	if (pace.gap_rate <= 0 || now <= pace.open_ns ||
	    n < pace.open_n + PACE_MIN_SYSCALLS)
		return -1;
	rate = (double)(n - pace.open_n) / (now - pace.open_ns);
	return pace.gap_rate / rate - 1;
}

/* the budget's estimate, as windows.tsv keeps it */
static void cost_line(const struct budget_sample *s)
{
	window_line("cost\t%llu\t%.6f\t%.6f\t%llu\t%u\t%.0f\t%llu\t%d\t%.0f\n",
		    now_ns(), bud.cost, bud.duty, s->writes, s->threads,
		    s->probe_ns, s->period_ns, bud.every_write, bud.tokens_ns);
}

/* attach the window's programs and probes, then admit writes (until
 * closed, with --budget while every write is traced) */
static void open_window(struct walscope_bpf *skel)
{
	unsigned long long t0 = now_ns(), t1;
	size_t i, attached = 0;

	for (i = 0; i < NR_WINDOW_PROGS; i++) {
		if (!bpf_program__autoload(window_prog(skel, i)))
			continue;
		win.links[i] = bpf_program__attach(window_prog(skel, i));
		if (!win.links[i])
			fprintf(stderr, "walscope-collect: window: attach %s: %s\n",
				bpf_program__name(window_prog(skel, i)),
				strerror(errno));
	}
	attached = attach_window_probes(skel, 0);
	t1 = now_ns();
	/* stamped before writes may begin: every write of the window began at
	 * or after its open_ns (and before its close_ns, stamped after) */
	win.open_ns = now_ns();
	__atomic_store_n(&skel->bss->window_open, 1, __ATOMIC_SEQ_CST);
	win.open = true;
	win.close_ns = env.budget <= 0 ? win.open_ns + env.window_ms * 1000000ULL :
		       bud.every_write ? FOREVER_NS :
		       win.open_ns + (unsigned long long)bud.window_ns;
	window_line("open\t%llu\t%llu\t%zu\n", win.open_ns, (t1 - t0) / 1000, attached);
	pace.open_n = syscw_line(skel, win.open_ns);
	pace.open_ns = win.open_ns;
	pace.gap_rate = pace.close_ns && pace.open_n >= pace.close_n + PACE_MIN_SYSCALLS ?
			(double)(pace.open_n - pace.close_n) / (win.open_ns - pace.close_ns) : -1;
	if (env.budget > 0)
		sample_start(skel, win.open_ns);
}

/* no new write; the window's writes in flight end before the detach */
static void close_window(struct walscope_bpf *skel)
{
	__atomic_store_n(&skel->bss->window_open, 0, __ATOMIC_SEQ_CST);
	win.open = false;
	win.draining = true;
	win.close_ns = now_ns();
	pace.close_n = syscw_line(skel, win.close_ns);
	pace.close_ns = win.close_ns;
}

/*
 * --budget: a window's end is due.  What it saw says whether to trace
 * every write from now on (the window stays open) or to close it and
 * wait for the next at the duty the budget buys; false when it closed.
 */
static bool window_due(struct walscope_bpf *skel, unsigned long long now)
{
	struct budget_sample s;

	if (env.budget <= 0) {
		close_window(skel);
		return false;
	}
	s = sample_take(skel, now);
	sample_start(skel, now);
	if (!bud.every_write) {
		s.paced_cost = paced_cost(skel, now);
		budget_after_window(&bud, &s);
		cost_line(&s);
		if (bud.every_write) {
			win.close_ns = FOREVER_NS;
			return true;
		}
		close_window(skel);
		return false;
	}
	/* tracing every write: is it still within the budget? */
	if (budget_keep_every_write(&bud, &s)) {
		cost_line(&s);
		return true;
	}
	cost_line(&s);
	close_window(skel);
	return false;
}

static void detach_window(struct walscope_bpf *skel)
{
	long long late = __atomic_load_n(&skel->bss->window_in_flight, __ATOMIC_SEQ_CST);
	unsigned long long t0 = now_ns();
	size_t i;

	detach_window_probes(exiting);
	for (i = 0; i < NR_WINDOW_PROGS; i++) {
		bpf_link__destroy(win.links[i]);
		win.links[i] = NULL;
	}
	win.draining = false;
	win.n++;
	window_line("close\t%llu\t%llu\t%llu\t%lld\n", win.close_ns, t0,
		    (now_ns() - t0) / 1000, late);
	if (env.budget > 0)	/* the probes stayed for its writes in flight */
		budget_drained(&bud, (double)(t0 - win.close_ns));
	win.next_ns = now_ns() + gap_ns(env.budget > 0 ?
					budget_gap_ms(&bud) :
					(double)env.window_gap_ms);
}

/* ms until t (at least 1, at most POLL_MS) */
static int ms_until(unsigned long long t, unsigned long long now)
{
	unsigned long long ms = t > now ? (t - now) / 1000000 + 1 : 1;

	return ms < POLL_MS ? (int)ms : POLL_MS;
}

/* the window schedule's next step, if due; returns the ms until the next */
static int step_windows(struct walscope_bpf *skel)
{
	unsigned long long now = now_ns();

	if (!env.window_ms)
		return POLL_MS;
	if (env.budget > 0 && now - syscw.read_ns > SYSCW_REFRESH_NS)
		syscw_refresh(skel);	/* for the processes that exit */
	if (win.draining) {
		if (__atomic_load_n(&skel->bss->window_in_flight, __ATOMIC_SEQ_CST) <= 0 ||
		    now - win.close_ns > DRAIN_MAX_NS)
			detach_window(skel);
		return 1;	/* a write in flight ends in microseconds */
	}
	if (win.open && env.budget > 0 && bud.every_write) {
		struct budget_sample s = sample_take(skel, now);

		if (budget_ready(&s))
			window_due(skel, now);
		return win.draining ? 1 : BUDGET_POLL_MS;
	}
	if (win.open && now >= win.close_ns)
		window_due(skel, now);
	else if (!win.open && now >= win.next_ns)
		open_window(skel);
	now = now_ns();
	if (win.draining)
		return 1;
	if (win.open && bud.every_write && env.budget > 0)
		return BUDGET_POLL_MS;
	return ms_until(win.open ? win.close_ns : win.next_ns, now);
}

/* rodata and map sizes from the options, programs not needed left out */
static void configure(struct walscope_bpf *skel)
{
	int i;

	if (env.cpu_types)
		for (i = 0; env.cpu_types[i] && i < WS_MAX_CPUS; i++)
			skel->rodata->cpu_types[i] =
				env.cpu_types[i] == 'P' ? CT_P :
				env.cpu_types[i] == 'E' ? CT_E : CT_UNIFORM;
	skel->rodata->min_runq_ns = env.min_runq_ns;
	skel->rodata->io_all = !env.writes_io_only;
	skel->rodata->regs_syscalls = env.no_syscalls;
	skel->rodata->wakeup_bytes = (env.ringbuf_kb << 10) / 4;
	skel->rodata->offcpu_stacks = env.offcpu;
	skel->rodata->offcpu_kstacks = env.offcpu_kstacks;
	skel->rodata->offcpu_user_stacks = env.offcpu_user;
	skel->rodata->sample_stacks = env.sample_stacks;
	skel->rodata->groups_unprobed = env.groups_unprobed;
	skel->rodata->offcpu_stack_every = env.stack_every;
	skel->rodata->follow_objects = env.follow_objects;
	bpf_map__set_max_entries(skel->maps.events, env.ringbuf_kb << 10);
	if (env.stack_entries)
		bpf_map__set_max_entries(skel->maps.stacks, env.stack_entries);
	if (!env.sample_hz)
		bpf_program__set_autoload(skel->progs.ws_sample, false);
	if (env.no_syscalls) {
		bpf_program__set_autoload(skel->progs.ws_sys_enter, false);
		bpf_program__set_autoload(skel->progs.ws_sys_exit, false);
	}
	if (!env.follow_objects)
		bpf_program__set_autoload(skel->progs.ws_exec, false);
	skel->rodata->window_mode = env.window_ms > 0;
	if (env.window_ms) {	/* attached by each window, not at start */
		for (i = 0; i < NR_WINDOW_PROGS; i++)
			bpf_program__set_autoattach(window_prog(skel, i), false);
		bpf_program__set_expected_attach_type(skel->progs.ws_phase_enter,
						      WS_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.ws_phase_exit,
						      WS_TRACE_UPROBE_MULTI);
	}
	if (env.no_sched) {
		bpf_program__set_autoload(skel->progs.ws_sched_switch, false);
		bpf_program__set_autoload(skel->progs.ws_sched_wakeup, false);
		bpf_program__set_autoload(skel->progs.ws_sched_wakeup_new,
					  false);
	}
	/* the task iterator runs on demand (sweep_tasks), never attached */
	bpf_program__set_autoattach(skel->progs.ws_task_sweep, false);
}

/*
 * Wait on the ring buffer and stdin together until quit, EOF, a signal or
 * an error: a command (a process waiting for "cont") is answered at once,
 * and records not announced (BPF_RB_NO_WAKEUP) are read every POLL_MS.
 */
static void collect(struct walscope_bpf *skel, struct ring_buffer *rb)
{
	struct pollfd pfd[2] = {
		{ .fd = ring_buffer__epoll_fd(rb), .events = POLLIN },
		{ .fd = 0, .events = POLLIN },
	};
	size_t cap = 1024, used = 0;
	char *buf = malloc(cap);
	int err;

	if (!buf) {
		fprintf(stderr, "walscope-collect: out of memory\n");
		return;
	}
	while (!exiting) {
		if (poll(pfd, 2, step_windows(skel)) < 0 && errno != EINTR) {
			poll_error = errno;
			fprintf(stderr, "walscope-collect: poll: %s\n",
				strerror(errno));
			break;
		}
		err = ring_buffer__consume(rb);
		if (err < 0 && err != -EINTR) {
			poll_error = -err;
			fprintf(stderr, "walscope-collect: reading the ring "
				"buffer: %s\n", strerror(-err));
			break;
		}
		flush_outputs();
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR) &&
		    read_commands(skel, &buf, &cap, &used))
			break;
	}
	free(buf);
}

int main(int argc, char **argv)
{
	int ncpu = libbpf_num_possible_cpus(), nsampled = 0, i;
	struct bpf_link **sample_links = NULL;
	struct ring_buffer *rb = NULL;
	struct walscope_bpf *skel;
	int err, code = EXIT_SETUP;
	size_t k;

	argp_err_exit_status = EXIT_USAGE;
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return EXIT_USAGE;
	libbpf_set_print(libbpf_print);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	skel = walscope_bpf__open();
	if (!skel) {
		fprintf(stderr, "walscope-collect: cannot open BPF object: %s\n",
			strerror(errno));
		return EXIT_SETUP;
	}
	configure(skel);
	err = walscope_bpf__load(skel);
	if (err) {
		fprintf(stderr, "walscope-collect: cannot load BPF programs: %s\n",
			strerror(-err));
		goto out;
	}
	/* tracepoints: auto-attach; the generic uprobe programs are skipped */
	err = walscope_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "walscope-collect: cannot attach tracepoints: %s\n",
			strerror(-err));
		goto out;
	}
	if (env.attach_file && attach_uprobes(skel, env.attach_file))
		goto out;
	if (env.sample_hz) {
		sample_links = calloc(ncpu, sizeof(*sample_links));
		if (!sample_links) {
			fprintf(stderr, "walscope-collect: out of memory\n");
			goto out;
		}
		nsampled = open_sampling(skel, env.sample_hz, sample_links,
					 ncpu);
		if (!nsampled)
			fprintf(stderr, "walscope-collect: perf sampling "
					"unavailable on every CPU\n");
	}
	for (k = 1; k < NR_OUTS; k++) {
		outs[k].f = open_out(outs[k].name);
		if (!outs[k].f)
			goto out;
		setvbuf(outs[k].f, NULL, _IOFBF, 1 << 20);
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, NULL,
			      NULL);
	if (!rb) {
		fprintf(stderr, "walscope-collect: cannot open ring buffer: "
			"%s\n", strerror(errno));
		goto out;
	}
	if (env.window_ms) {
		win.log = open_out("windows.tsv");
		if (!win.log)
			goto out;
		srand48(now_ns() ^ getpid());
		if (env.budget > 0) {
			/* every write from the first, until it costs too much */
			budget_init(&bud, env.budget, (int)sysconf(_SC_NPROCESSORS_ONLN),
				    env.window_ms);
			window_line("budget\t%.6f\t%.0f\t%.0f\t%d\n", bud.budget,
				    BUDGET_BURST_NS, BUDGET_WINDOW_LOSS_NS, bud.ncpu);
			open_window(skel);
		} else {
			/* the first window opens soon (mean: one window's
			 * length), so a run shorter than the mean gap has rows
			 * too; Poisson after it */
			win.next_ns = now_ns() + gap_ns(env.window_ms);
		}
	}
	reply("ready");

	collect(skel, rb);
	if (win.open)	/* stopped inside a window: its writes end first */
		close_window(skel);
	while (win.draining && now_ns() - win.close_ns <= DRAIN_MAX_NS &&
	       __atomic_load_n(&skel->bss->window_in_flight, __ATOMIC_SEQ_CST) > 0) {
		ring_buffer__consume(rb);
		usleep(1000);
	}
	if (win.draining)
		detach_window(skel);
	syscw_line(skel, now_ns());
	window_line("end\t%llu\n", now_ns());	/* the last gap ends here */
	err = sweep_tasks(skel, 0, WS_TASK_FINAL);	/* threads still alive */
	if (err)
		fprintf(stderr, "walscope-collect: final task sweep: %s\n",
			strerror(-err));
	/* drain what is left */
	while ((err = ring_buffer__consume(rb)) > 0)
		;
	if (err < 0 && !poll_error) {
		poll_error = -err;
		fprintf(stderr, "walscope-collect: draining the ring buffer: "
			"%s\n", strerror(-err));
	}
	flush_outputs();
	dump_stacks(skel);
	if (env.offcpu)
		dump_offcpu(skel);
	for (k = 1; k < NR_OUTS; k++) {
		close_out(outs[k].f, outs[k].name);
		outs[k].f = NULL;
	}
	write_summary(skel, ncpu, nsampled);
	code = write_error ? EXIT_WRITE : poll_error ? EXIT_POLL : EXIT_OK;
out:
	/* a process it stopped must not stay stopped, however this ends */
	while (nr_stopped)
		continue_pid(stopped[0]);	/* drops every entry of that pid */
	free(stopped);
	for (k = 1; k < NR_OUTS; k++)
		if (outs[k].f)
			fclose(outs[k].f);
	ring_buffer__free(rb);
	if (sample_links) {
		for (i = 0; i < ncpu; i++)
			bpf_link__destroy(sample_links[i]);
		free(sample_links);
	}
	for (k = 0; k < nr_probes; k++) {
		bpf_link__destroy(probes[k].link);
		free(probes[k].name);
		free(probes[k].path);
	}
	detach_window_probes(true);
	for (i = 0; i < NR_WINDOW_PROGS; i++)
		bpf_link__destroy(win.links[i]);
	if (win.log)
		close_out(win.log, "windows.tsv");
	free(probes);
	walscope_bpf__destroy(skel);
	return code;
}
