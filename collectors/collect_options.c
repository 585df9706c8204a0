// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collect_options.c - walscope-collect's options: the argp table (what
 * --help lists) and the checks of every value, into env.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "walscope.h"	/* WS_MAX_CPUS */
#include "collect_options.h"

struct env env = {
	.ringbuf_kb = 16 << 10,
	.stack_every = 1,
	.budget = -1,
	.hit_ns = { 2000, 2000, 1000, 1000, 400, 300, 1000, 1000, 400 },
};

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
	OPT_HIT_NS, OPT_WALL_HZ, OPT_BACKGROUND, OPT_GROUPED, OPT_LOAD_ONLY,
	OPT_LOG_FILES, OPT_LIVE_COUNTERS,
};

static const struct argp_option opts[] = {
	{ "output", 'o', "DIR", 0, "Run folder to write (must exist)", 0 },
	{ "attach", OPT_ATTACH, "FILE", 0, "Uprobes to attach, one per line, "
	  "tab-separated: KIND COOKIE OFFSET PATH NAME; KIND enter, exit, "
	  "always (an entry attached windows or not), loader, or rows (COOKIE "
	  "an engine whose rows come from syscalls, turned on)", 0 },
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
	  "(one window at a random place in each stretch of N ms plus its length)", 0 },
	{ "budget", OPT_BUDGET, "F", 0, "With --window-ms: trace every write "
	  "while that costs at most F of throughput (0.02: 2%), else windows "
	  "whose duty F buys, re-estimated at each window (windows.tsv "
	  "\"cost\" lines)", 0 },
	{ "hit-ns", OPT_HIT_NS, "Pw,Pc,Ow,Oc,S,I,U,R,T", 0, "Calibrated cost of "
	  "a probe pair and of an entry-only probe (warm, cold), of a traced and "
	  "an untraced syscall: each write's probe time from its record; and of "
	  "a uprobe, a uretprobe and a tracepoint hit: every hit of the traced "
	  "processes (ns; the budget's estimates)", 0 },
	{ "wall-hz", OPT_WALL_HZ, "N", 0, "Sweep the traced threads' state and "
	  "kernel accounting N times a second, and at each window's edges "
	  "(wall.bin; 0: never)", 0 },
	{ "background", OPT_BACKGROUND, "P1,P2", 0, "Name prefixes of the "
	  "engines' own background threads: no new phase when one of them "
	  "starts writing (a flush, a compaction)", 0 },
	{ "grouped-engines", OPT_GROUPED, "ID1,ID2", 0, "The engines (enum "
	  "ws_engine) whose rows form groups, a leader doing the log I/O its "
	  "followers wait for: the budget counts their followers", 0 },
	{ "log-files", OPT_LOG_FILES, "RULE;...", 0, "Log files the user "
	  "named (up to 4), each PREFIX/SUFFIX/DIR/EXACT: hex bytes of the "
	  "basename's start and end and of its parent directory's name (each "
	  "up to 8, empty: any), EXACT 1 where the basename is PREFIX whole; "
	  "such a file is a WAL", 0 },
	{ "live-counters", OPT_LIVE_COUNTERS, NULL, 0, "Write the counters to "
	  "counters.json every second while it runs (walscope serve)", 0 },
	{ "load-only", OPT_LOAD_ONLY, NULL, 0, "Load the programs as the other "
	  "options would (the verifier), list them on stdout and exit: nothing "
	  "attached, no -o", 0 },
	{ "verbose", 'v', NULL, 0, "libbpf debug output", 0 },
	{},
};

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* up to 8 bytes as hex digits, packed big-endian into *v; the bytes'
 * count, or -1 where s (up to the next '/', ';' or end) is not that */
static int parse_hex_bytes(const char **s, __u64 *v)
{
	int n = 0, hi, lo;

	*v = 0;
	while (**s && **s != '/' && **s != ';') {
		hi = hex_digit((*s)[0]);
		lo = (*s)[1] ? hex_digit((*s)[1]) : -1;
		if (hi < 0 || lo < 0 || n == 8)
			return -1;
		*v = *v << 8 | (__u64)(hi << 4 | lo);
		*s += 2;
		n++;
	}
	return n;
}

/* --log-files: RULE;RULE..., each PREFIX/SUFFIX/DIR/EXACT */
static void parse_log_rules(struct argp_state *state, const char *arg)
{
	const char *s = arg;
	struct ws_log_rule *r;
	int n[3], i;

	while (*s) {
		if (env.nr_log_rules == WS_LOG_RULES)
			argp_error(state, "log-files: more than %d", WS_LOG_RULES);
		r = &env.log_rules[env.nr_log_rules++];
		for (i = 0; i < 3; i++) {
			n[i] = parse_hex_bytes(&s, i == 0 ? &r->prefix :
					       i == 1 ? &r->suffix : &r->dir);
			if (n[i] < 0 || *s != '/')
				argp_error(state, "log-files: not PREFIX/SUFFIX/DIR/EXACT "
					   "in hex bytes: %s", arg);
			s++;
		}
		r->plen = n[0];
		r->slen = n[1];
		r->dlen = n[2];
		if ((*s != '0' && *s != '1') || (s[1] && s[1] != ';') ||
		    (*s == '1' && n[1]) || (!n[0] && !n[1]))
			argp_error(state, "log-files: not PREFIX/SUFFIX/DIR/EXACT "
				   "in hex bytes: %s", arg);
		r->exact = *s == '1';
		s += s[1] ? 2 : 1;
	}
}

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
	case OPT_BACKGROUND:
		env.background = arg;
		break;
	case OPT_GROUPED: {
		char *s = arg, *end;

		for (;;) {
			unsigned long id = strtoul(s, &end, 10);

			if (end == s || id >= 64)
				argp_error(state, "grouped-engines: not an engine id "
					   "list: %s", arg);
			env.grouped |= 1ULL << id;
			if (*end != ',')
				break;
			s = end + 1;
		}
		if (*end)
			argp_error(state, "grouped-engines: not an engine id list: %s",
				   arg);
		break;
	}
	case OPT_LIVE_COUNTERS:
		env.live_counters = true;
		break;
	case OPT_LOG_FILES:
		parse_log_rules(state, arg);
		break;
	case OPT_WALL_HZ:
		env.wall_hz = parse_ulong(state, "wall-hz", arg, 0, 1000);
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
	case OPT_LOAD_ONLY:
		env.load_only = true;
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
		if (!env.outdir && !env.load_only)
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

int parse_options(int argc, char **argv)
{
	return argp_parse(&argp, argc, argv, 0, NULL, NULL);
}
