// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * walscope-collect - load probes/walscope.bpf.c, attach what the Python side
 * resolved, follow the traced process trees, and stream fixed-size records
 * to one file per record type in the output folder.
 *
 * Usage: walscope-collect -o DIR [options] < commands
 *   --attach FILE       uprobes to attach, one per line, tab-separated:
 *                       enter|exit <phase> <file offset> <path> <name>
 *   --cpu-types STR     one letter per CPU: P, E or U (uniform)
 *   --ringbuf-mb N      ring buffer size (power of two, default 16)
 *   --ringbuf-kb N      the same in KiB (tests use it to force drops)
 *   --min-runq-ns N     run-queue waits shorter than N: no record
 *   --sample-hz N       sample traced threads N times a second per CPU
 *   --writes-io-only    io records only for syscalls inside writes
 *   --no-syscalls       no syscall tracepoints: samples and off-CPU periods
 *                       read the syscall in progress from saved registers
 *   --offcpu-sums       sum off-CPU time per thread, syscall and user IP;
 *                       offcpu.bin at exit
 *   --offcpu-stacks     the same, per kernel stack too
 *   --offcpu-user-stacks  the same, walking user stacks (frame pointers)
 *   --offcpu-stack-every N  walk the stacks of 1 in N off-CPU periods
 *   --groups-unprobed  no write-group probes: a write that calls the WAL
 *                      leads; futex waits and yields outside probed phases
 *                      are its queue
 *   --no-sched          no sched_switch/sched_wakeup programs (no run-queue,
 *                       migration or off-CPU figures)
 *   --sample-stacks     samples take user and kernel stack ids
 *   --stack-entries N   stack map size (tests use it to force misses)
 *   -v                  libbpf debug output
 * Commands on stdin, one per line: "pid N" (trace N and its future
 * children), "quit".  EOF on stdin also ends the collection.  stdout says
 * "ready" once attached and "ok pid N" per pid; errors go to stderr.
 *
 * Records are appended as they arrive and flushed after every poll, so a
 * crash loses at most the last partial record, which readers drop.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
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

#define MAX_ATTACH 256
#define STACK_DEPTH 127
#define POLL_MS 20	/* records are not announced: poll this often */

static volatile sig_atomic_t exiting;
static bool verbose;
static const char *outdir;

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
};
#define NR_OUTS (sizeof(outs) / sizeof(outs[0]))

static unsigned long long bad_records;
static int write_error;

static void on_signal(int sig)
{
	exiting = 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static void die_write(const char *name)
{
	if (!write_error)
		fprintf(stderr, "walscope-collect: writing %s/%s: %s\n",
			outdir, name, strerror(errno));
	write_error = errno ? errno : EIO;
	exiting = 1;
}

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
		die_write(outs[type].name);
	outs[type].n++;
	return 0;
}

static void flush_outputs(void)
{
	size_t i;

	for (i = 1; i < NR_OUTS; i++)
		if (outs[i].f && fflush(outs[i].f))
			die_write(outs[i].name);
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
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		if (stat(link, &st))
			continue;
		n = readlink(link, path, sizeof(path) - 1);
		if (n < 0)
			continue;
		path[n] = 0;
		memset(&fi, 0, sizeof(fi));
		fi.ino = st.st_ino;
		fi.kind = ws_file_kind(path, S_ISDIR(st.st_mode));
		key = (__u64)pid << 32 | (__u32)fd;
		bpf_map__update_elem(skel->maps.fds, &key, sizeof(key), &fi,
				     sizeof(fi), BPF_ANY);
	}
	closedir(d);
}

/*
 * Run the task iterator: a ws_task_rec for each thread of process tgid (of
 * every traced process if 0), phase as given.  Its records go through the
 * ring buffer like any other.
 */
static void sweep_tasks(struct walscope_bpf *skel, __u32 tgid, __u32 phase)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};
	struct bpf_link *link;
	char buf[64];
	int fd;

	if (tgid) {
		info.task.pid = tgid;
		opts.link_info = &info;
		opts.link_info_len = sizeof(info);
	}
	skel->data->sweep_phase = phase;
	link = bpf_program__attach_iter(skel->progs.ws_task_sweep, &opts);
	if (!link) {
		fprintf(stderr, "walscope-collect: task iterator: %s\n",
			strerror(errno));
		return;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd >= 0) {
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	bpf_link__destroy(link);
}

static int add_pid(struct walscope_bpf *skel, __u32 pid)
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
		return err;
	}
	sweep_tasks(skel, pid, WS_TASK_BASELINE);
	printf("ok pid %u\n", pid);
	fflush(stdout);
	return 0;
}

static int handle_command(struct walscope_bpf *skel, char *line)
{
	unsigned long pid;
	char *end;

	line[strcspn(line, "\r\n")] = 0;
	if (!strcmp(line, "quit"))
		return 1;
	if (!strncmp(line, "pid ", 4)) {
		pid = strtoul(line + 4, &end, 10);
		if (*end || !pid || pid > INT_MAX) {
			fprintf(stderr, "walscope-collect: bad pid '%s'\n",
				line + 4);
			return 0;
		}
		add_pid(skel, pid);
		return 0;
	}
	if (line[0])
		fprintf(stderr, "walscope-collect: unknown command '%s'\n",
			line);
	return 0;
}

/* read what stdin has, run complete lines; 1 on EOF or "quit" */
static int read_commands(struct walscope_bpf *skel, char *buf, size_t cap,
			 size_t *used)
{
	ssize_t n = read(0, buf + *used, cap - 1 - *used);
	char *nl, *start;

	if (n <= 0)
		return n == 0 || (errno != EINTR && errno != EAGAIN);
	*used += n;
	buf[*used] = 0;
	start = buf;
	while ((nl = strchr(start, '\n'))) {
		*nl = 0;
		if (handle_command(skel, start))
			return 1;
		start = nl + 1;
	}
	*used = strlen(start);
	memmove(buf, start, *used + 1);
	if (*used >= cap - 1)	/* a line too long to be a command */
		*used = 0;
	return 0;
}

struct attach_result {
	char name[300];
	int err;
};

static struct bpf_link *links[MAX_ATTACH];
static struct attach_result results[MAX_ATTACH];
static int nr_links;

static int attach_uprobes(struct walscope_bpf *skel, const char *file)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);
	char line[PATH_MAX + 512], kind[16], path[PATH_MAX], name[256];
	unsigned long long offset;
	unsigned int phase;
	struct bpf_program *prog;
	struct bpf_link *link;
	FILE *f;
	int ok = 0;

	f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "walscope-collect: %s: %s\n", file,
			strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) && nr_links < MAX_ATTACH) {
		if (sscanf(line, "%15[^\t]\t%u\t%llu\t%4095[^\t]\t%255[^\n]",
			   kind, &phase, &offset, path, name) != 5) {
			fprintf(stderr, "walscope-collect: bad attach line: %s",
				line);
			continue;
		}
		opts.retprobe = !strcmp(kind, "exit");
		opts.bpf_cookie = phase;
		prog = opts.retprobe ? skel->progs.ws_phase_exit :
				       skel->progs.ws_phase_enter;
		link = bpf_program__attach_uprobe_opts(prog, -1, path, offset,
						       &opts);
		snprintf(results[nr_links].name, sizeof(results[0].name),
			 "%s %s", kind, name);
		if (!link) {
			results[nr_links].err = -errno;
			fprintf(stderr,
				"walscope-collect: cannot attach %s %s: %s\n",
				kind, name, strerror(errno));
		} else {
			links[nr_links] = link;
			ok++;
		}
		nr_links++;
	}
	fclose(f);
	return ok;
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
		if (fd < 0)
			continue;
		plinks[cpu] = bpf_program__attach_perf_event(
			skel->progs.ws_sample, fd);
		if (!plinks[cpu]) {
			close(fd);
			continue;
		}
		n++;
	}
	return n;
}

/* stacks referenced by samples, as id, depth, 127 ips */
static void dump_stacks(struct walscope_bpf *skel)
{
	char path[PATH_MAX];
	__u64 ips[STACK_DEPTH];
	__u32 key, next, *prev = NULL, hdr[2];
	int fd = bpf_map__fd(skel->maps.stacks);
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/stacks.bin", outdir);
	f = fopen(path, "w");
	if (!f)
		return;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, ips))
			continue;
		for (i = 0; i < STACK_DEPTH && ips[i]; i++)
			;
		hdr[0] = key;
		hdr[1] = i;
		fwrite(hdr, sizeof(hdr), 1, f);
		fwrite(ips, sizeof(ips), 1, f);
	}
	fclose(f);
}

/* the offcpu map, as struct ws_offcpu_ent records */
static void dump_offcpu(struct walscope_bpf *skel)
{
	struct ws_offcpu_key *prev = NULL, next;
	struct ws_offcpu_ent e;
	int fd = bpf_map__fd(skel->maps.offcpu);
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/offcpu.bin", outdir);
	f = fopen(path, "w");
	if (!f)
		return;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		e.key = next;
		prev = &e.key;
		if (bpf_map_lookup_elem(fd, &e.key, &e.val))
			continue;
		fwrite(&e, sizeof(e), 1, f);
	}
	fclose(f);
}

static void write_summary(struct walscope_bpf *skel, int ncpu, int nsampled)
{
	int nr_cpus = libbpf_num_possible_cpus(), i, c;
	__u64 *vals = calloc(nr_cpus, sizeof(__u64));
	char path[PATH_MAX];
	FILE *f;
	__u32 k;

	snprintf(path, sizeof(path), "%s/collector.json", outdir);
	f = fopen(path, "w");
	if (!f || !vals) {
		fprintf(stderr, "walscope-collect: %s: %s\n", path,
			strerror(errno));
		free(vals);
		if (f)
			fclose(f);
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
	for (i = 1; i < (int)NR_OUTS; i++)
		fprintf(f, "%s\"%s\": %llu", i > 1 ? ", " : "", outs[i].name,
			outs[i].n);
	fprintf(f, "},\n  \"bad_records\": %llu,\n", bad_records);
	fprintf(f, "  \"write_error\": %d,\n", write_error);
	{
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		fprintf(f, "  \"cpu_user_s\": %.3f,\n  \"cpu_sys_s\": %.3f,\n"
			   "  \"max_rss_kb\": %ld,\n",
			ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
			ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
			ru.ru_maxrss);
	}
	fprintf(f, "  \"sampled_cpus\": %d,\n  \"cpus\": %d,\n", nsampled,
		ncpu);
	fprintf(f, "  \"attach\": [");
	for (i = 0; i < nr_links; i++)
		fprintf(f, "%s\n    {\"probe\": \"%s\", \"err\": %d}",
			i ? "," : "", results[i].name, results[i].err);
	fprintf(f, "\n  ]\n}\n");
	fclose(f);
	free(vals);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: walscope-collect -o DIR [--attach FILE] [--cpu-types STR]\n"
		"       [--ringbuf-mb N] [--min-runq-ns N] [--sample-hz N]\n"
		"       [--writes-io-only] [--no-syscalls] [--offcpu-sums]\n"
		"       [--offcpu-stacks] [--offcpu-user-stacks] [--sample-stacks]\n"
		"       [--stack-entries N] [--no-sched] [--groups-unprobed]\n"
		"       [--offcpu-stack-every N]\n"
		"       [-v]\n");
}

int main(int argc, char **argv)
{
	const char *attach_file = NULL, *cpu_types = NULL;
	unsigned long ringbuf_kb = 16 << 10, min_runq = 0, sample_hz = 0;
	unsigned long stack_entries = 0, stack_every = 1;
	struct bpf_link **sample_links = NULL;
	bool writes_io_only = false, no_syscalls = false;
	bool offcpu = false, offcpu_kstacks = false, offcpu_user = false;
	bool sample_stacks = false, no_sched = false, groups_unprobed = false;
	struct walscope_bpf *skel;
	struct ring_buffer *rb = NULL;
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char path[PATH_MAX], line[256];
	int ncpu = libbpf_num_possible_cpus(), nsampled = 0;
	bool stdin_open = true;
	size_t used = 0;
	int err, i;
	size_t k;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-v")) {
			verbose = true;
			continue;
		}
		if (!strcmp(a, "--writes-io-only")) {
			writes_io_only = true;
			continue;
		}
		if (!strcmp(a, "--no-syscalls")) {
			no_syscalls = true;
			continue;
		}
		if (!strcmp(a, "--groups-unprobed")) {
			groups_unprobed = true;
			continue;
		}
		if (!strcmp(a, "--no-sched")) {
			no_sched = true;
			continue;
		}
		if (!strcmp(a, "--offcpu-sums")) {
			offcpu = true;
			continue;
		}
		if (!strcmp(a, "--offcpu-stacks")) {
			offcpu = offcpu_kstacks = true;
			continue;
		}
		if (!strcmp(a, "--sample-stacks")) {
			sample_stacks = true;
			continue;
		}
		if (!strcmp(a, "--offcpu-user-stacks")) {
			offcpu = offcpu_kstacks = offcpu_user = true;
			continue;
		}
		if (!v) {
			usage();
			return 2;
		}
		i++;
		if (!strcmp(a, "-o"))
			outdir = v;
		else if (!strcmp(a, "--attach"))
			attach_file = v;
		else if (!strcmp(a, "--cpu-types"))
			cpu_types = v;
		else if (!strcmp(a, "--ringbuf-mb"))
			ringbuf_kb = strtoul(v, NULL, 10) << 10;
		else if (!strcmp(a, "--ringbuf-kb"))	/* tests: force drops */
			ringbuf_kb = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--min-runq-ns"))
			min_runq = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--sample-hz"))
			sample_hz = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--offcpu-stack-every"))
			stack_every = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--stack-entries"))	/* tests: force misses */
			stack_entries = strtoul(v, NULL, 10);
		else {
			usage();
			return 2;
		}
	}
	if (!outdir) {
		usage();
		return 2;
	}
	if (ringbuf_kb < 4 || (ringbuf_kb & (ringbuf_kb - 1)) ||
	    ringbuf_kb > (1024 << 10)) {
		fprintf(stderr, "walscope-collect: the ring buffer must be a "
				"power of two from 4 KiB to 1024 MiB\n");
		return 2;
	}
	libbpf_set_print(libbpf_print);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	skel = walscope_bpf__open();
	if (!skel) {
		fprintf(stderr, "walscope-collect: cannot open BPF object: %s\n",
			strerror(errno));
		return 1;
	}
	if (cpu_types)
		for (i = 0; cpu_types[i] && i < WS_MAX_CPUS; i++)
			skel->rodata->cpu_types[i] =
				cpu_types[i] == 'P' ? CT_P :
				cpu_types[i] == 'E' ? CT_E : CT_UNIFORM;
	skel->rodata->min_runq_ns = min_runq;
	skel->rodata->io_all = !writes_io_only;
	skel->rodata->regs_syscalls = no_syscalls;
	skel->rodata->wakeup_bytes = (ringbuf_kb << 10) / 4;
	skel->rodata->offcpu_stacks = offcpu;
	skel->rodata->offcpu_kstacks = offcpu_kstacks;
	skel->rodata->offcpu_user_stacks = offcpu_user;
	skel->rodata->sample_stacks = sample_stacks;
	skel->rodata->groups_unprobed = groups_unprobed;
	skel->rodata->offcpu_stack_every = stack_every ? stack_every : 1;
	bpf_map__set_max_entries(skel->maps.events, ringbuf_kb << 10);
	if (stack_entries)
		bpf_map__set_max_entries(skel->maps.stacks, stack_entries);
	if (!sample_hz)
		bpf_program__set_autoload(skel->progs.ws_sample, false);
	if (no_syscalls) {
		bpf_program__set_autoload(skel->progs.ws_sys_enter, false);
		bpf_program__set_autoload(skel->progs.ws_sys_exit, false);
	}
	if (no_sched) {
		bpf_program__set_autoload(skel->progs.ws_sched_switch, false);
		bpf_program__set_autoload(skel->progs.ws_sched_wakeup, false);
		bpf_program__set_autoload(skel->progs.ws_sched_wakeup_new,
					  false);
	}

	err = walscope_bpf__load(skel);
	if (err) {
		fprintf(stderr, "walscope-collect: cannot load BPF programs: %s\n",
			strerror(-err));
		goto out;
	}
	/* the task iterator runs on demand (sweep_tasks), never attached */
	bpf_program__set_autoattach(skel->progs.ws_task_sweep, false);
	/* tracepoints: auto-attach; the generic uprobe programs are skipped */
	err = walscope_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "walscope-collect: cannot attach tracepoints: %s\n",
			strerror(-err));
		goto out;
	}
	if (attach_file && attach_uprobes(skel, attach_file) < 0) {
		err = -ENOENT;
		goto out;
	}
	if (sample_hz) {
		sample_links = calloc(ncpu, sizeof(*sample_links));
		nsampled = open_sampling(skel, sample_hz, sample_links, ncpu);
		if (!nsampled)
			fprintf(stderr, "walscope-collect: perf sampling "
					"unavailable: %s\n", strerror(errno));
	}
	for (k = 1; k < NR_OUTS; k++) {
		snprintf(path, sizeof(path), "%s/%s", outdir, outs[k].name);
		outs[k].f = fopen(path, "w");
		if (!outs[k].f) {
			fprintf(stderr, "walscope-collect: %s: %s\n", path,
				strerror(errno));
			err = -errno;
			goto out;
		}
		setvbuf(outs[k].f, NULL, _IOFBF, 1 << 20);
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, NULL,
			      NULL);
	if (!rb) {
		err = -errno;
		fprintf(stderr, "walscope-collect: cannot open ring buffer\n");
		goto out;
	}
	printf("ready\n");
	fflush(stdout);

	while (!exiting) {
		err = ring_buffer__poll(rb, POLL_MS);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "walscope-collect: polling: %s\n",
				strerror(-err));
			break;
		}
		flush_outputs();
		if (stdin_open && poll(&pfd, 1, 0) > 0 &&
		    read_commands(skel, line, sizeof(line), &used)) {
			stdin_open = false;
			exiting = 1;
		}
	}
	sweep_tasks(skel, 0, WS_TASK_FINAL);	/* the threads still alive */
	/* drain what is left */
	while (ring_buffer__consume(rb) > 0)
		;
	flush_outputs();
	err = write_error ? 3 : 0;
	dump_stacks(skel);
	if (offcpu)
		dump_offcpu(skel);
	write_summary(skel, ncpu, nsampled);
out:
	for (k = 1; k < NR_OUTS; k++)
		if (outs[k].f)
			fclose(outs[k].f);
	ring_buffer__free(rb);
	if (sample_links) {
		for (i = 0; i < ncpu; i++)
			bpf_link__destroy(sample_links[i]);
		free(sample_links);
	}
	for (i = 0; i < nr_links; i++)
		bpf_link__destroy(links[i]);
	walscope_bpf__destroy(skel);
	return err < 0 ? 1 : err;
}
