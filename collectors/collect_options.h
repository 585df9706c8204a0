/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collect_options.h - walscope-collect's command line (argp), parsed into
 * env, which every unit reads.
 */
#ifndef __COLLECT_OPTIONS_H
#define __COLLECT_OPTIONS_H

#include <stdbool.h>
#include <linux/types.h>
#include "walscope.h"

struct env {
	const char *outdir;
	const char *attach_file;
	const char *cpu_types;
	unsigned long ringbuf_kb;
	unsigned long min_runq_ns;
	unsigned long sample_hz;
	unsigned long wall_hz;		/* wall sweeps a second (0: none) */
	const char *background;		/* the engines' background threads'
					 * name prefixes, comma-separated */
	unsigned long long grouped;	/* bit N: engine N's rows form groups */
	struct ws_log_rule log_rules[WS_LOG_RULES];	/* --log-files */
	__u32 nr_log_rules;
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
	bool live_counters;		/* counters.json every LIVE_COUNTERS_MS */
	bool load_only;			/* load, list the programs, exit */
	bool verbose;
};

extern struct env env;

/* argp_parse of the command line into env; an error exits with
 * argp_err_exit_status, after saying why */
int parse_options(int argc, char **argv);

#endif /* __COLLECT_OPTIONS_H */
