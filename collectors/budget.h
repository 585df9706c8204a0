/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * budget.h - the default mode's schedule: every write while tracing every
 * write is cheap, windows whose duty the overhead budget buys when not.
 *
 * What full tracing costs the workload is estimated from what the probes
 * did while they were attached: their hits times the calibrated cost of a
 * hit is the time taken from the workload's threads (probe_ns), and the
 * time those threads had is the period times the number of threads that
 * wrote, at most one per CPU (capacity).  The cost, as a share of the
 * untraced throughput, is probe_ns / (capacity - probe_ns): a closed-loop
 * writer that spends h of every T+h in probes runs h/T slower.  Measured
 * inside a traced stretch, this is the untraced-relative cost, not the
 * traced one.  Where the writers outnumber the CPUs, a leader's probe time
 * is also time its followers spin for it on the other CPUs (RocksDB's
 * AwaitState), taken from the leader: it counts twice
 * (BUDGET_CROWDED).  db_bench unsynced with 4 threads on 2 CPUs: full
 * tracing ran at 0.27 of untraced (cost 2.7); the probe time alone gave
 * 0.6, counted twice 2.6.  Hits outside the writes (a SQLite reader's
 * statements, background threads) cost the machine too: every hit of the
 * traced processes over all CPUs' time is a floor under the cost.  And
 * where a window follows a gap, the workload's own pace tells the cost
 * without a model: its write syscalls a second in the gap over those
 * inside the window, less one, is a floor too (it sees what no probe time
 * shows: a waiter's backoff that a slower lock holder stretched).
 *
 * The budget is a token bucket: it accrues budget x time, tracing every
 * write spends cost / (1 + cost) x time (the work the workload did not do),
 * and it starts full at BUDGET_BURST_NS.  Every write is traced while the
 * cost is within the budget or the bucket holds credit, so a short run is
 * traced whole (one with a 10% cost, for its first ~0.3 s).  The burst is
 * lent, not given: when every write stops, the first window waits until
 * the budget has refilled the bucket (budget_repay_ns), so over a run of T
 * longer than BUDGET_BURST_NS / budget (1.25 s at 2%) the cost stays within
 * budget x T, and a 4-6 s run is not charged its 0.4-0.6% more.  Past
 * that, windows
 * open at the duty the budget buys: a window of W loses W x cost / (1 +
 * cost) of work inside it and BUDGET_WINDOW_LOSS_NS around it (its attach
 * and detach), so windows are W x budget / that loss apart on average.
 * Where tracing is cheap, a short window would cost more around it than
 * inside: W is long enough that what is lost around it is at most a
 * fifth of what is lost inside (BUDGET_INSIDE_SHARE), from --window-ms
 * (the least) to BUDGET_WINDOW_MAX_NS.
 *
 * The probe-time model can read low, and then the burst and the windows
 * priced by it spend more than the budget: on SQLite's DELETE journal with
 * two clients, whose busy handler sleeps turn a slower lock holder into
 * idle time, the model read 0.03-0.08 on a 16-CPU machine where the
 * workload's own pace inside the next window said 0.75 (bench/results/NOTES.md,
 * sixth session).  So
 * what the model says tracing lost is kept (model_spent_ns) until the pace
 * prices a window, scaled by the pace's price over the model's there, or
 * the time traced meanwhile at the pace's price, whichever is more (the
 * model's own reading moves with what the pace cannot see: two SQLite
 * DELETE clients on 2 CPUs read 0.044 while both wrote and 0.12 in the
 * check, where one starved the other, and the ratio there made ~250 ms of
 * every write at the pace's 0.3 a 23 ms debt, not 59); less
 * what the credit and the duty were charged for it (charged_ns: every
 * write at the model's price, a window at the price it was bought at), it
 * is a debt, taken from the bucket, and the next window waits until the
 * budget has refilled it (budget_repay_ns, at most an hour): over a run
 * the cost again stays within budget x time, by the workload's own pace.  The first window after
 * every write was traced is the shortest (--window-ms) and the pace's
 * lead (BUDGET_PACE_LEAD_NS): a long one priced by the model alone was
 * 640-750 ms of a 4 s run there, at 10x the price.
 * The credit itself is spent on the model's word for at most
 * BUDGET_UNPACED_CREDIT_NS: there the model at 0.04-0.06 spent the 25 ms
 * of credit in 1.1-1.8 s of a 4 s run, and the pace after it said 0.8.
 * Then, once the model has spent what a check costs (BUDGET_WINDOW_LOSS_NS),
 * every write stops for a pace check: a gap (the collector's: 80 ms for
 * the workload to settle after the detach, then a shortest window's
 * length) and a shortest window and the pace's lead
 * (BUDGET_PACE_LEAD_NS), the check's price paid from the credit.
 * Where the pace priced it and credit is left, every write resumes, and
 * is not checked again until the credit is spent (once a spell).  Writes in flight at a
 * close the pace has not priced yet hold the probes for the shortest
 * drain (BUDGET_DRAIN_MIN_NS): after that start, one held them 227 ms.
 * And a window spends no more than it was priced at: where the pace inside
 * it, so far, says it has lost what its length was bought for, it closes
 * then (budget_window_spent).  On a 4 s run of that driver on 2 CPUs one
 * window was priced at 0.15 by the pace before it and read 0.35: its
 * 377 ms lost twice what the run's budget had for it.  The cut needs the
 * pace to say so, and never before the shortest window: a stretch where
 * the workload slowed for its own reasons is then recorded for less than
 * its share of time (windows.tsv's "spent" lines say which windows).
 *
 * Pure logic, no BPF: the collector feeds it samples and follows what it
 * says (tests/test_budget.py drives it through .output/budget_check).
 */
#ifndef __WS_BUDGET_H
#define __WS_BUDGET_H

#include <stdbool.h>

/* probe time's weight where the writers outnumber the CPUs */
#define BUDGET_CROWDED		2.0
/* while every write is traced, the estimate is made as soon as this many
 * writes were seen (some ms on a fast workload) ... */
#define BUDGET_MIN_WRITES	64
/* ... or after this long, whatever was seen */
#define BUDGET_PERIOD_NS	250000000ULL
/* the bucket's size and first credit: work the workload may lose to
 * tracing beyond budget x time (ns of its throughput) */
#define BUDGET_BURST_NS		25000000.0
/* the work a window costs beyond its inside: 7-18 ms on the three
 * workloads of bench/results/window_cost.md (lost a window, less
 * W x (1 - the speed inside)) */
#define BUDGET_WINDOW_LOSS_NS	10000000.0
/* what is lost around a window at most a fifth of what is lost inside */
#define BUDGET_AROUND_PER_INSIDE 0.2
#define BUDGET_WINDOW_MAX_NS	1000000000.0
/* every write traced on credit on the model's word alone, at most this
 * long before the workload's pace checks its price: then the probes come
 * off for the collector's settle (80 ms) and the shortest window's
 * length, a window as long as the shortest and the pace's lead follows,
 * and the pace inside it prices the credit spent (budget.h, above).  A
 * 1000-write synced db_bench run spends its credit in ~0.23 s on this VM,
 * and is still traced whole; on the 16-CPU device, SQLite's DELETE
 * journal spent it in 1.1-1.8 s at a tenth of its price.  Not so long
 * where writes slept inside their writes: they wait for one another in a
 * way no hit shows (SQLite's busy handler backs off 1-100 ms while the
 * lock holder's probes slow it; RocksDB's write stalls), and two SQLite
 * DELETE clients on this VM, priced at 0.044-0.12 by the model and
 * 0.2-0.3 by the pace, lost ~2% of a 4 s run to ~250 ms of every write
 * before the check: there the first estimate over the budget is checked */
#define BUDGET_UNPACED_CREDIT_NS 250000000.0
/* the pace inside a window is counted from this long after its open,
 * and the first window after every write stopped (a pace check's, or
 * the first once the credit is spent) is this much longer than the
 * shortest, and not cut before its due end: 16
 * synced writers on 16 CPUs ran at full speed for 10-20 ms after an
 * attach, then at 0.69 (bench/results/many_cores/window_cost.md), and a
 * 50 ms check counted from its open read their cost as nothing */
#define BUDGET_PACE_LEAD_NS	20000000.0
/* a stretch whose writers were busy (in a write at least half their
 * time) and whose writes went in groups (at least this share of them
 * followers) is priced by the model alone even within the budget: a
 * leader's probes and switches are its followers' wait, which no write's
 * own hits show.  16 synced db_bench writers on the 16-CPU device: the
 * model said 0.007-0.06, their own clock 0.45 inside windows
 * (many_cores/window_cost.md), and every write was traced 1.6-2.4 s of a
 * 5.7 s run within the budget, on the model's word.  Such a stretch is
 * checked by the pace, as credit is, once BUDGET_UNPACED_CREDIT_NS of it
 * has passed, and once until the writes go ungrouped */
#define BUDGET_GROUPED_SHARE	0.25
/* (a rate limiter that lets 4 writers go at once groups them too, 176 of
 * 330 writes at ~300 a second, but they wait for it, not for a leader:
 * they are in a write ~2% of their time) */
#define BUDGET_GROUPED_BUSY	0.5
/* a wait to repay the credit and what the pace found owing is at most an
 * hour (a budget of a millionth would wait months) */
#define BUDGET_REPAY_MAX_NS	3.6e12
/* windows never open less than this share of the time */
#define BUDGET_MIN_DUTY		0.001
/*
 * A window's writes in flight at its close keep its probes attached until
 * they end (the drain), and every other thread of the traced processes
 * pays for them meanwhile.  SQLite's busy handler lets one client of
 * two starve for seconds, untraced too (runners/workloads/sqlite_tpcc, 2
 * clients: one transaction of 4 s in an untraced 4 s run), and such a
 * transaction, begun in the every-write start, kept the probes 0.67-1 s
 * past its close in 4 runs of 4: 32-41% of the run attached and 3-13% of
 * its transactions lost against its own rate away from the probes; capped,
 * 20-25% and 2.4-4.9% (bench/results/NOTES.md, 2026-11-26).  A
 * drain may lose as much work as a window's edges (BUDGET_WINDOW_LOSS_NS)
 * at the cost inside, within these bounds; the rows still in flight then
 * are cut, counted (windows.rows_cut) and said in the table.
 */
#define BUDGET_DRAIN_MIN_NS	20000000.0
#define BUDGET_DRAIN_MAX_NS	1000000000.0

/* what the probes did in one stretch of time */
struct budget_sample {
	unsigned long long period_ns;
	double probe_ns;		/* hits times their calibrated costs */
	double paced_cost;		/* < 0: none; else the workload's own
					 * pace (write syscalls a second) in
					 * the gap before the window over its
					 * pace inside, less 1 */
	double all_probe_ns;		/* every hit of the traced processes,
					 * in writes or not (reads, background
					 * threads), over all_period_ns */
	unsigned long long all_period_ns;
	unsigned long long writes;	/* write records that began in it */
	unsigned int threads;		/* distinct threads that wrote */
	unsigned long long followers;	/* of writes, those another thread's
					 * group carried (RocksDB, PostgreSQL) */
	double busy_ns;			/* the writes' durations, summed */
	unsigned long long sleeps;	/* sleeps inside writes (a lock's
					 * backoff): what they wait for, the
					 * model cannot price */
};

struct budget {
	double budget;		/* allowed cost, a share of throughput */
	int ncpu;
	double min_window_ns;	/* --window-ms: the shortest window */
	double window_ns;	/* the next window's length */
	bool every_write;	/* tracing every write now */
	double cost;		/* the last estimate (< 0: none yet) */
	double duty;		/* the windows' share of time, when not */
	double tokens_ns;	/* the bucket's credit */
	double drain_ns;	/* how long windows stayed attached after
				 * their close, for writes in flight (mean) */
	double model_spent_ns;	/* work the probe-time model says tracing
				 * lost since the pace last priced it */
	double traced_ns;	/* the time traced over that stretch */
	bool unpaced;		/* the next window is the first since every
				 * write was traced on the model's word */
	double charged_ns;	/* what the credit and the duty were charged
				 * for model_spent_ns's spend */
	double credit_ns;	/* every write traced on credit this spell,
				 * on the model's word */
	bool pace_check;	/* every write stopped for the pace to price
				 * the credit: it resumes if credit is left */
	bool checked;		/* this spell of credit was checked */
	bool slept;		/* writes slept in this spell of credit */
	bool group_check;	/* the pace check under way is a grouped
				 * stretch's, within the budget */
	bool group_checked;	/* grouped writes were priced by a pace
				 * since they last went ungrouped */
	unsigned long estimates;
};

void budget_init(struct budget *b, double budget, int ncpu, unsigned long window_ms);
/* the cost of tracing every write, as a share of untraced throughput,
 * from one sample (0 when nothing was traced) */
double budget_cost(const struct budget_sample *s, int ncpu);
/* while every write is traced: is this sample enough to judge? */
bool budget_ready(const struct budget_sample *s);
/* judge a sample taken while every write was traced: true to go on
 * tracing every write, false to switch to windows (b->duty is set) */
bool budget_keep_every_write(struct budget *b, const struct budget_sample *s);
/* after a window closed, from what it saw: true to trace every write
 * from now on, false to schedule the next window at b->duty */
bool budget_after_window(struct budget *b, const struct budget_sample *s);
/* a window stayed attached this long after its close, until its last
 * write ended: the probes cost that too, and the duty pays for it */
void budget_drained(struct budget *b, double drain_ns);
/* how long a window's writes in flight may keep its probes attached
 * after its close, at the last cost estimate */
double budget_drain_max_ns(const struct budget *b);
/* the mean closed time between windows at b->duty */
double budget_gap_ms(const struct budget *b);
/* a window open for elapsed_ns, where the workload's pace inside it so
 * far prices tracing at paced_cost (< 0: no pace): has it lost what its
 * length was bought for?  Then it closes now */
bool budget_window_spent(const struct budget *b, double elapsed_ns, double paced_cost);
/* the workload's pace, its write syscalls a second in the gap before a
 * window (gap_rate) over those inside it, as a cost; -1 (none) where
 * either rate is unknown, and where the window ran faster than its gap.
 * That is noise around a small cost, or a pace the gap misread (16
 * synced writers on 16 CPUs, 40 ms after a detach, still recovering:
 * -0.02 against their 0.45), not a price of nothing: taken as one, a
 * check resumed every write on credit on a coin flip, and SQLite's DELETE
 * cell, whose 50-70 ms paces read 0.14-0.72 around a cost of ~0.5, fell
 * from 1.00 to 0.93 of untraced (12 pairs each, bench/results/NOTES.md) */
double budget_paced_cost(double gap_rate, double window_rate);
/* how much longer the next window waits, for the budget to refill the
 * bucket: the credit every write spent and the debts the pace found (0
 * when it is full, or every write stopped for a pace check); the bucket is
 * full again after that wait */
double budget_repay_ns(struct budget *b);

#endif /* __WS_BUDGET_H */
