// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * budget_check - drives the budget's schedule (budget.c) from stdin, for
 * tests: "BUDGET NCPU" first, then one sample a line,
 *   every PERIOD_NS PROBE_NS WRITES THREADS   (judged while every write is traced)
 *   grouped PERIOD_NS PROBE_NS WRITES THREADS (the same, three in four writes
 *                                            carried by another's group, the
 *                                            threads always in a write)
 *   bursts PERIOD_NS PROBE_NS WRITES THREADS  (grouped, in a write 2% of the time)
 *   sleeps PERIOD_NS PROBE_NS WRITES THREADS  (every, some writes slept in it)
 *   window PERIOD_NS PROBE_NS WRITES THREADS  (what a window saw)
 *   drain NS 0 0 0                            (how long it stayed for its writes)
 *   reads PERIOD_NS PROBE_NS 0 0             (a window's hits all outside writes)
 *   paced PERIOD_NS COST_PER_MILLE 0 0       (a window the workload's pace priced)
 *   pace COST_PER_MILLE 0 0 0                (the next window's pace, beside its probes)
 *   rates GAP_PER_S WINDOW_PER_S 0 0         (the same, from the write syscalls a
 *                                            second in its gap and inside it)
 *   spent ELAPSED_NS COST_PER_MILLE 0 0      (the open window's pace so far)
 * and for each, one line: "every|windows COST DUTY GAP_MS TOKENS_NS
 * WINDOW_MS DRAIN_MS REPAY_MS" (at least 50 ms windows; DRAIN_MS: how long a
 * window's writes in flight may hold its probes after its close; REPAY_MS:
 * how much longer the next window waits for the bucket to refill (the
 * credit spent and debts the pace found), paid
 * then); "ready 0|1" is printed before an
 * "every" line's verdict, and "spent 0|1" alone for a "spent" line: has
 * the open window lost what it was priced at (it then closes)?
 */
#include <stdio.h>
#include <string.h>
#include "budget.h"

int main(void)
{
	struct budget b;
	struct budget_sample s;
	char kind[16];
	double budget, pace = -1;
	int ncpu;

	if (scanf("%lf %d", &budget, &ncpu) != 2)
		return 2;
	budget_init(&b, budget, ncpu, 50);
	while (scanf("%15s %llu %lf %llu %u", kind, &s.period_ns, &s.probe_ns,
		     &s.writes, &s.threads) == 5) {
		s.all_probe_ns = 0;
		s.all_period_ns = 0;
		s.paced_cost = -1;
		s.followers = 0;
		s.busy_ns = 0;
		s.sleeps = 0;
		if (!strcmp(kind, "sleeps")) {
			s.sleeps = 3;
			strcpy(kind, "every");
		}
		if (!strcmp(kind, "grouped") || !strcmp(kind, "bursts")) {
			s.followers = s.writes * 3 / 4;
			/* busy: each thread in a write all the sample long;
			 * bursts: a fiftieth of it (a rate limiter's) */
			s.busy_ns = (double)s.period_ns * s.threads *
				    (!strcmp(kind, "grouped") ? 1 : 0.02);
			strcpy(kind, "every");
		}
		if (!strcmp(kind, "pace")) {	/* PERIOD_NS: per mille */
			pace = s.period_ns / 1000.0;
			continue;
		}
		if (!strcmp(kind, "rates")) {
			pace = budget_paced_cost((double)s.period_ns, s.probe_ns);
			continue;
		}
		if (!strcmp(kind, "spent")) {
			printf("spent %d\n", budget_window_spent(&b, (double)s.period_ns,
								  s.probe_ns / 1000));
			continue;
		}
		if (!strcmp(kind, "every")) {
			printf("ready %d\n", budget_ready(&s));
			budget_keep_every_write(&b, &s);
		} else if (!strcmp(kind, "window")) {
			s.paced_cost = pace;
			pace = -1;
			budget_after_window(&b, &s);
		} else if (!strcmp(kind, "reads")) {	/* a window whose hits were
							 * all outside writes */
			s.all_probe_ns = s.probe_ns;
			s.all_period_ns = s.period_ns;
			s.probe_ns = 0;
			budget_after_window(&b, &s);
		} else if (!strcmp(kind, "paced")) {	/* PROBE_NS: the paced cost
							 * in thousandths */
			s.paced_cost = s.probe_ns / 1000;
			s.probe_ns = 0;
			budget_after_window(&b, &s);
		} else if (!strcmp(kind, "drain")) {	/* PERIOD_NS: the drain */
			budget_drained(&b, (double)s.period_ns);
		} else {
			return 2;
		}
		printf("%s %.6f %.6f %.3f %.0f %.3f %.3f", b.every_write ? "every" : "windows",
		       b.cost, b.duty, b.every_write ? 0.0 : budget_gap_ms(&b),
		       b.tokens_ns, b.window_ns / 1e6, budget_drain_max_ns(&b) / 1e6);
		printf(" %.3f\n", budget_repay_ns(&b) / 1e6);
	}
	return 0;
}
