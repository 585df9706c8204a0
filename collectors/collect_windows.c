// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collect_windows.c - walscope-collect's windows (--window-ms).  The
 * syscall and scheduler programs and the uprobes are attached only while
 * a window is open, and only a write that begins inside one is recorded.
 * Windows are stratified: the run is cut into stretches of a window's
 * length over the duty, and each stretch holds one window at a uniformly
 * random place (next_open).  With --window-gap-ms the duty is fixed; with
 * --budget, every
 * write is traced while that costs at most the budget, else windows open
 * at the duty the budget buys (budget.h, the controller, says how),
 * re-estimated at each window from what the probes did in it.
 *
 * windows.tsv has one line per event, tab-separated, its kind first:
 * budget (the controller's settings, at start), open and close (each
 * window's edges, and what attaching and detaching took), cost (the
 * budget's estimate, at each window's due end), syscw (the traced
 * processes' write syscalls so far, --budget), spent (a window closed
 * before its due end: the pace inside it said it had lost its price),
 * repay (how much longer the next window waits, for the credit every
 * write spent and a debt the pace found) and end (where the last gap
 * ends).
 */
#define _GNU_SOURCE
#include <math.h>
#include <time.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "walscope.h"
#include "walscope.skel.h"
#include "budget.h"
#include "collect.h"
#include "collect_options.h"
#include "collect_attach.h"
#include "collect_outputs.h"
#include "collect_pace.h"
#include "collect_sample.h"
#include "collect_window_log.h"
#include "collect_windows.h"
#include "collect_wall.h"

/* a write in flight longer: give up (--mode window; the budget caps it lower) */
#define DRAIN_MAX_NS ((unsigned long long)BUDGET_DRAIN_MAX_NS)

#define FOREVER_NS (~0ULL)
/* while every write is traced, the cost is judged this often */
#define BUDGET_POLL_MS 10

static struct {
	bool open, draining;
	unsigned long long next_ns;	/* the next window opens */
	unsigned long long stretch_ns;	/* where the stretch after the
					 * last window's begins */
	unsigned long long open_ns, close_ns;
	struct bpf_link *links[NR_WINDOW_PROGS];
	unsigned long n;
	struct budget_sample seen;	/* what the window saw (--budget) */
} win;

static struct budget bud;

/* a window open or its writes still draining: its probes are attached */
bool window_attached(void)
{
	return win.open || win.draining;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* bpf_ktime_get_ns's clock */
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* the i-th of the programs attached only while a window is open */
struct bpf_program *window_prog(struct walscope_bpf *skel, int i)
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

/*
 * The next window's open, after the last one's detach at now: one window
 * in each stretch of its length plus the mean gap (its length over the
 * duty), at a uniformly random place in it, so the share of time inside
 * windows is the duty, as with exponential gaps, and no instant is likelier
 * to be in one than another (no aliasing with periodic work: flushes,
 * checkpoints); but unlike exponential gaps, no stretch of the run goes
 * without a window.  A 4 s SQLite run whose every-write start went to the
 * driver's set-up had no window after it in 3 of 15 runs, with a mean gap
 * of 2.4 s.  A stretch begins where the last one ended, or at now when the
 * last window's drain outran it.
 */
static unsigned long long next_open(unsigned long long now, double window_ns,
				    double gap_ms)
{
	double stretch = window_ns + gap_ms * 1e6;
	unsigned long long start = win.stretch_ns > now ? win.stretch_ns : now;

	win.stretch_ns = start + (unsigned long long)stretch;
	return start + (unsigned long long)(drand48() * (stretch - window_ns));
}

/*
 * --budget, a window open: has the workload's pace inside it so far said
 * it lost what it was priced at (budget_window_spent)?  Then a "spent"
 * line, and it closes now.  Read once the pace has counted the shortest
 * window's length, from its lead's end: a check's window (the shortest
 * and the lead) is not cut, and what a window lost is its time since then
 * at its pace (the lead ran at most at that pace).
 */
static bool window_spent(struct walscope_bpf *skel, unsigned long long now)
{
	static unsigned long long last;	/* read at most every BUDGET_POLL_MS */
	double cost;

	if (bud.every_write || pace.lead_ns ||
	    now < pace.open_ns + (unsigned long long)bud.min_window_ns ||
	    now < last + BUDGET_POLL_MS * 1000000ULL)
		return false;
	last = now;
	cost = paced_cost(skel, now);
	if (!budget_window_spent(&bud, (double)(now - pace.open_ns), cost))
		return false;
	window_line("spent\t%llu\t%.6f\n", now, cost);
	return true;
}

/* the budget's estimate, as windows.tsv keeps it */
static void cost_line(const struct budget_sample *s)
{
	window_line("cost\t%llu\t%.6f\t%.6f\t%llu\t%u\t%.0f\t%llu\t%d\t%.0f\t%llu\n",
		    now_ns(), bud.cost, bud.duty, s->writes, s->threads,
		    s->probe_ns, s->period_ns, bud.every_write, bud.tokens_ns, s->sleeps);
}

/* attach the window's programs and probes, then admit writes (until
 * closed, with --budget while every write is traced) */
static void open_window(struct walscope_bpf *skel)
{
	unsigned long long t0, t1, gap_n;
	size_t i, attached = 0;

	wall_sweep(skel);		/* the stretch untouched ends here */
	t0 = now_ns();
	gap_n = syscw_line(skel, t0);	/* the gap ends before the attach */
	pace.gap_rate = pace.close_ns && t0 > pace.close_ns &&
			gap_n >= pace.close_n + PACE_MIN_SYSCALLS ?
			(double)(gap_n - pace.close_n) / (t0 - pace.close_ns) : -1;
	pace.settle_ns = 0;

	/* a new window: rows still in flight from an earlier one (its drain
	 * gave up) no longer hold this one's probes (drop_cut_row) */
	__atomic_add_fetch(&skel->bss->window_gen, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&skel->bss->window_in_flight, 0, __ATOMIC_SEQ_CST);
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
	wall_sweep(skel);		/* what the window's writes wrote from here */
	pace.open_n = syscw_line(skel, win.open_ns);
	pace.open_ns = win.open_ns;
	/* --budget's windows: their pace counts from the lead's end */
	pace.lead_ns = env.budget > 0 && !bud.every_write ?
		       win.open_ns + (unsigned long long)BUDGET_PACE_LEAD_NS : 0;
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
	syscw_line(skel, win.close_ns);
	wall_sweep(skel);		/* ... to here */
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
	wall_sweep(skel);		/* the probes are off from here */
	if (env.budget > 0) {	/* the probes stayed for its writes in flight */
		unsigned long long now = now_ns(), repay;

		/* the untraced gap, for the pace, begins once all is off,
		 * and again once the workload has settled */
		gap_begins(skel, now);
		pace.settle_ns = now + PACE_SETTLE_NS;

		budget_drained(&bud, (double)(t0 - win.close_ns));
		/* credit spent, or a debt the pace found: the next stretch
		 * begins once the budget has refilled the bucket */
		repay = (unsigned long long)budget_repay_ns(&bud);
		if (repay) {
			if (win.stretch_ns < now)
				win.stretch_ns = now;
			win.stretch_ns += repay;
			window_line("repay\t%llu\t%llu\n", now, repay);
		}
	}
	if (env.budget > 0 && bud.pace_check) {
		/* the pace checks the credit: a gap long enough to settle
		 * and then as long as the shortest window, then one */
		win.next_ns = now_ns() + PACE_SETTLE_NS + (unsigned long long)bud.min_window_ns;
		win.stretch_ns = win.next_ns + (unsigned long long)bud.window_ns;
		return;
	}
	win.next_ns = next_open(now_ns(), env.budget > 0 ? bud.window_ns :
				env.window_ms * 1e6,
				env.budget > 0 ? budget_gap_ms(&bud) :
				(double)env.window_gap_ms);
}

/*
 * Windows where the work is.  A run that loads and then runs (initdb and
 * pgbench -i before pgbench's transactions; db_bench's fillseq before
 * overwrite) spends its every-write start on the load, and the repay that
 * follows can outlast the run's own phase: the README's PostgreSQL line
 * had its one window in the set-up, none of pgbench's transactions.  So
 * where threads no window has seen start writing (collect_wall.c), the
 * next window opens now, once the workload has settled after the last
 * detach, if it is more than PHASE_LEAD_NS away; its price (its length at
 * the last cost, and what a window costs around it) is taken from the
 * bucket as a debt, which the next detach's repay waits for: the budget
 * over the run is kept, the window is moved to where the new phase is.
 */
#define PHASE_LEAD_NS 200000000ULL

static bool phase_due(unsigned long long now)
{
	return env.budget > 0 && !bud.every_write && wall_new_writers() > 0 &&
	       win.next_ns > now + PHASE_LEAD_NS && pace.settle_ns == 0 &&
	       win.n > 0;
}

static void open_phase_window(struct walscope_bpf *skel, unsigned long long now)
{
	double cost = bud.cost > 0 ? bud.cost : 1.0;

	window_line("phase\t%llu\t%u\n", now, wall_new_writers());
	bud.tokens_ns -= bud.window_ns * cost / (1 + cost) + BUDGET_WINDOW_LOSS_NS;
	wall_phase_windowed();
	open_window(skel);
}

/* how long the closed window's writes in flight may keep its probes: with
 * --budget, what the budget pays for (budget_drain_max_ns) */
static unsigned long long drain_max_ns(void)
{
	return env.budget > 0 ? (unsigned long long)budget_drain_max_ns(&bud) : DRAIN_MAX_NS;
}

/* ms until t (at least 1, at most POLL_MS) */
static int ms_until(unsigned long long t, unsigned long long now)
{
	unsigned long long ms = t > now ? (t - now) / 1000000 + 1 : 1;

	return ms < POLL_MS ? (int)ms : POLL_MS;
}

/* the window schedule's next step, if due; returns the ms until the next */
int step_windows(struct walscope_bpf *skel)
{
	unsigned long long now = now_ns();

	if (!env.window_ms)
		return POLL_MS;
	if (win.draining) {
		if (__atomic_load_n(&skel->bss->window_in_flight, __ATOMIC_SEQ_CST) <= 0 ||
		    now - win.close_ns > drain_max_ns())
			detach_window(skel);
		return 1;	/* a write in flight ends in microseconds */
	}
	if (win.open && env.budget > 0 && bud.every_write) {
		struct budget_sample s = sample_take(skel, now);

		if (budget_ready(&s))
			window_due(skel, now);
		return win.draining ? 1 : BUDGET_POLL_MS;
	}
	/* a lead that ends with its window's due close: the pace counts
	 * from the open (from now it would count nothing) */
	if (win.open && pace.lead_ns && now >= pace.lead_ns) {
		if (now < win.close_ns)
			lead_ends(skel, now, bud.every_write);
		pace.lead_ns = 0;
	}
	if (win.open && now < win.close_ns && env.budget > 0 && window_spent(skel, now))
		win.close_ns = now;	/* its price is lost: due now */
	if (win.open && now >= win.close_ns)
		window_due(skel, now);
	else if (!win.open && now >= win.next_ns)
		open_window(skel);
	else if (!win.open && phase_due(now))
		open_phase_window(skel, now);
	else if (!win.open && pace.settle_ns && now >= pace.settle_ns) {
		gap_begins(skel, now);
		pace.settle_ns = 0;
	}
	now = now_ns();
	if (win.draining)
		return 1;
	if (win.open && env.budget > 0 && bud.every_write)
		return BUDGET_POLL_MS;
	if (win.open)	/* its pace is read at the records' poll (POLL_MS) */
		return ms_until(pace.lead_ns && pace.lead_ns < win.close_ns ?
				pace.lead_ns : win.close_ns, now);
	return ms_until(pace.settle_ns && pace.settle_ns < win.next_ns ?
			pace.settle_ns : win.next_ns, now);
}

/* windows.tsv opened and the schedule begun; -1 when the file cannot be */
int start_windows(struct walscope_bpf *skel)
{
	if (!env.window_ms)
		return 0;
	if (window_log_open())
		return -1;
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
		 * too; one in each stretch after it */
		win.next_ns = now_ns() + gap_ns(env.window_ms);
	}
	return 0;
}

/* at the end: the open window closed, its writes drained, the last lines */
void end_windows(struct walscope_bpf *skel, struct ring_buffer *rb)
{
	/* windows closed from here on close because tracing stops: a write
	 * still in flight then may belong to a thread that is gone, so the
	 * analysis counts no time for it (analysis/windows.py rows_cut) */
	window_line("stop\t%llu\n", now_ns());
	if (win.open)	/* stopped inside a window: its writes end first */
		close_window(skel);
	while (win.draining && now_ns() - win.close_ns <= drain_max_ns() &&
	       __atomic_load_n(&skel->bss->window_in_flight, __ATOMIC_SEQ_CST) > 0) {
		ring_buffer__consume(rb);
		usleep(1000);
	}
	if (win.draining)
		detach_window(skel);
	syscw_line(skel, now_ns());
	window_line("end\t%llu\n", now_ns());	/* the last gap ends here */
}

/* every window link closed (at exit, here and now), windows.tsv closed */
void free_windows(void)
{
	int i;

	detach_window_probes(true);
	for (i = 0; i < NR_WINDOW_PROGS; i++)
		bpf_link__destroy(win.links[i]);
	pace_free();
	window_log_close();
}
