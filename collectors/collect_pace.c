// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collect_pace.c - write syscalls counted and the workload's pace
 * (collect_pace.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "walscope.h"
#include "walscope.skel.h"
#include "budget.h"
#include "collect_options.h"
#include "collect_pace.h"
#include "collect_window_log.h"

struct pace pace = { .gap_rate = -1 };

/*
 * The traced processes' write syscalls so far (each thread's own syscw, a
 * count the kernel keeps anyway), as a "syscw" line of windows.tsv: read
 * at each window's open and close, and at the start and end, it says how
 * many write syscalls the gaps between windows held (also before each
 * attach, and once the workload has settled after a detach: the pace's
 * gap), from which the
 * analysis estimates the writes it did not record.  The live threads' by a
 * task iterator (ws_syscw_sweep), the exited ones' as the BPF side kept
 * them at their exit (exited_syscw): a process that exits between two
 * readings keeps its last writes, and a reaped child is not counted again
 * in its parent (as /proc/PID/io would).
 */
static struct bpf_link *syscw_iter;
static bool syscw_broken;	/* said once, then no syscw lines */

/* the count now in *n; false (and said once) where it cannot be read */
bool syscw_read(struct walscope_bpf *skel, unsigned long long *n)
{
	unsigned long long exited;
	char buf[64];
	ssize_t got = 0;
	int fd;

	if (syscw_broken)
		return false;
	if (!syscw_iter)
		syscw_iter = bpf_program__attach_iter(skel->progs.ws_syscw_sweep, NULL);
	/* the exited threads first: one that exits during the sweep is then
	 * missed for a moment (the next reading has it), not counted twice */
	exited = __atomic_load_n(&skel->bss->exited_syscw, __ATOMIC_SEQ_CST);
	skel->bss->live_syscw = 0;
	fd = syscw_iter ? bpf_iter_create(bpf_link__fd(syscw_iter)) : -1;
	if (fd >= 0) {
		while ((got = read(fd, buf, sizeof(buf))) > 0)
			;
		close(fd);
	}
	if (fd < 0 || got < 0) {
		fprintf(stderr, "walscope-collect: counting write syscalls: %s (the share "
			"recorded is estimated from the windows' rates)\n", strerror(errno));
		syscw_broken = true;
		return false;
	}
	*n = exited + skel->bss->live_syscw;
	return true;
}

/* the count now, also in windows.tsv (0 and no line where it cannot be
 * read) */
unsigned long long syscw_line(struct walscope_bpf *skel, unsigned long long ts)
{
	unsigned long long n;

	if (env.budget <= 0 || !syscw_read(skel, &n))
		return 0;
	window_line("syscw\t%llu\t%llu\n", ts, n);
	return n;
}

/* the untraced gap, for the pace, begins (again) now */
void gap_begins(struct walscope_bpf *skel, unsigned long long now)
{
	pace.close_ns = now;
	pace.close_n = syscw_line(skel, now);
}

/* the open window's pace against the gap's, as a cost (< 0: unknown) */
double paced_cost(struct walscope_bpf *skel, unsigned long long now)
{
	unsigned long long n = 0;
	double rate;

	if (pace.gap_rate <= 0 || now <= pace.open_ns || !syscw_read(skel, &n) ||
	    n < pace.open_n + PACE_MIN_SYSCALLS)
		return -1;
	rate = (double)(n - pace.open_n) / (now - pace.open_ns);
	return budget_paced_cost(pace.gap_rate, rate);
}

/* the window's lead is over: its pace counts from now (where the count
 * cannot be read, from its open) */
void lead_ends(struct walscope_bpf *skel, unsigned long long now, bool every_write)
{
	unsigned long long n;

	pace.lead_ns = 0;
	if (every_write || !syscw_read(skel, &n))
		return;
	pace.open_n = n;
	pace.open_ns = now;
}

void pace_free(void)
{
	bpf_link__destroy(syscw_iter);
	syscw_iter = NULL;
}
