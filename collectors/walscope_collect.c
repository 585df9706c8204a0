// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * walscope-collect - load probes/walscope.bpf.c, attach what the Python side
 * resolved, follow the traced process trees, and stream fixed-size records
 * to one file per record type in the output folder.
 *
 * Usage: walscope-collect -o DIR [options] < commands   (--help lists them)
 *        walscope-collect --load-only [options]   (the verifier only:
 *        load as these options would, list the programs, exit)
 *
 * This file loads the object and runs the poll loop; the other units each
 * do one job:
 *   collect_options.c   the options (argp) into env
 *   collect_commands.c  the stdin protocol: pid, attach, cont, seen, quit,
 *                       one reply line each; "ready"; "obj ..." unasked
 *   collect_attach.c    the probe list: uprobes, the loader hook, the
 *                       windows' multi links; the per-CPU sampler
 *   collect_outputs.c   the record files, the maps dumped at exit,
 *                       collector.json
 *   collect_windows.c   --window-ms: the windows' schedule (budget.c the
 *                       budget's controller) and windows.tsv
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
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "walscope.h"
#include "walscope.skel.h"
#include "collect.h"
#include "collect_options.h"
#include "collect_attach.h"
#include "collect_outputs.h"
#include "collect_sample.h"
#include "collect_windows.h"
#include "collect_wall.h"
#include "collect_commands.h"

enum exit_code {
	EXIT_OK = 0,
	EXIT_SETUP = 1,		/* cannot load, attach or open the output */
	EXIT_USAGE = 2,
	EXIT_WRITE = 3,		/* writing the output failed */
	EXIT_POLL = 4,		/* polling the ring buffer failed */
};

volatile sig_atomic_t exiting;	/* collect.h */

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

/*
 * --load-only: one line a program of the object, loaded or not, in the
 * object's order: "prog NAME SECTION ID TYPE VERIFIED" (tab-separated; ID,
 * TYPE and VERIFIED, the instructions the verifier processed, from the
 * kernel, or "-" for a program these options leave out).  Nothing is
 * attached or pinned: the programs go when the process exits.
 */
static int print_programs(struct walscope_bpf *skel)
{
	struct bpf_program *prog;
	struct bpf_prog_info info;
	__u32 len;
	int fd;

	bpf_object__for_each_program(prog, skel->obj) {
		fd = bpf_program__fd(prog);
		if (fd < 0) {
			printf("prog\t%s\t%s\t-\t-\t-\n", bpf_program__name(prog),
			       bpf_program__section_name(prog));
			continue;
		}
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
			fprintf(stderr, "walscope-collect: %s: no program info: %s\n",
				bpf_program__name(prog), strerror(errno));
			return EXIT_SETUP;
		}
		printf("prog\t%s\t%s\t%u\t%u\t%u\n", bpf_program__name(prog),
		       bpf_program__section_name(prog), info.id, info.type,
		       info.verified_insns);
	}
	return fflush(stdout) ? EXIT_WRITE : EXIT_OK;
}

/* a record from the ring buffer: to its file, then to whom it concerns */
static int on_record(void *ctx, void *data, size_t size)
{
	__u32 type = write_record(data, size);

	if (type == WS_REC_OBJECT)
		announce_object(data);
	else if (type == WS_REC_WRITE && env.budget > 0)
		sample_write(data);
	else if (type == WS_REC_WALL)
		wall_seen(data, window_attached());
	return 0;
}

/* the least power of two >= n (n >= 1) */
static __u32 pow2_at_least(unsigned long n)
{
	__u32 p = 1;

	while (p < n && p < (1U << 31))
		p <<= 1;
	return p;
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
	memcpy((void *)skel->rodata->ws_log_rules, env.log_rules, sizeof(env.log_rules));
	skel->rodata->ws_nr_log_rules = env.nr_log_rules;
	bpf_map__set_max_entries(skel->maps.events, env.ringbuf_kb << 10);
	if (env.stack_entries)	/* a power of two: the kernel makes that many
				 * buckets but only max_entries elements, and
				 * a miss is then a collision, never a map out
				 * of elements (analysis/run.py says so) */
		bpf_map__set_max_entries(skel->maps.stacks,
					 pow2_at_least(env.stack_entries));
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
		/* one-offset multi links too (collect_attach.c attach_probe) */
		bpf_program__set_expected_attach_type(skel->progs.ws_phase_always,
						      WS_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.ws_loader,
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
	bpf_program__set_autoattach(skel->progs.ws_syscw_sweep, false);
	bpf_program__set_autoattach(skel->progs.ws_wall_sweep, false);
}

/* --live-counters: counters.json this often */
#define LIVE_COUNTERS_MS 1000

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
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
	int err, timeout, wall_ms;
	unsigned long long next_counters = 0;

	if (!buf) {
		fprintf(stderr, "walscope-collect: out of memory\n");
		return;
	}
	while (!exiting) {
		timeout = step_windows(skel);
		wall_ms = step_wall(skel);
		if (wall_ms >= 0 && wall_ms < timeout)
			timeout = wall_ms;
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
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
		if (env.live_counters) {
			unsigned long long now = now_ns();

			if (now >= next_counters) {
				write_live_counters(skel, now);
				next_counters = now + LIVE_COUNTERS_MS * 1000000ULL;
			}
		}
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

	argp_err_exit_status = EXIT_USAGE;
	err = parse_options(argc, argv);
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
	if (env.load_only) {
		code = print_programs(skel);
		goto out;
	}
	/* tracepoints: auto-attach; the generic uprobe programs are skipped */
	err = walscope_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "walscope-collect: cannot attach tracepoints: %s\n",
			strerror(-err));
		goto out;
	}
	if (env.attach_file &&
	    attach_uprobes(skel, env.attach_file, window_attached()))
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
	if (open_outputs())
		goto out;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, NULL,
			      NULL);
	if (!rb) {
		fprintf(stderr, "walscope-collect: cannot open ring buffer: "
			"%s\n", strerror(errno));
		goto out;
	}
	if (start_windows(skel))
		goto out;
	reply("ready");

	collect(skel, rb);
	end_windows(skel, rb);
	wall_sweep(skel);	/* where the last stretch ends */
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
	close_outputs();
	write_summary(skel, ncpu, nsampled);
	code = write_error ? EXIT_WRITE : poll_error ? EXIT_POLL : EXIT_OK;
out:
	/* a process it stopped must not stay stopped, however this ends */
	continue_stopped();
	drop_outputs();
	ring_buffer__free(rb);
	if (sample_links) {
		for (i = 0; i < ncpu; i++)
			bpf_link__destroy(sample_links[i]);
		free(sample_links);
	}
	free_probes();
	free_windows();
	free_wall();
	walscope_bpf__destroy(skel);
	return code;
}
