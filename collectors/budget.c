// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* budget.c - the default mode's schedule (see budget.h) */
#include <math.h>
#include "budget.h"

void budget_init(struct budget *b, double budget, int ncpu, unsigned long window_ms)
{
	b->budget = budget;
	b->ncpu = ncpu > 0 ? ncpu : 1;
	b->min_window_ns = b->window_ns = window_ms * 1e6;
	b->every_write = true;	/* the first write is covered */
	b->cost = -1;
	b->duty = 1;
	b->tokens_ns = BUDGET_BURST_NS;
	b->drain_ns = 0;
	b->model_spent_ns = b->traced_ns = 0;
	b->unpaced = false;
	b->charged_ns = 0;
	b->credit_ns = 0;
	b->pace_check = false;
	b->checked = b->slept = false;
	b->group_check = b->group_checked = false;
	b->estimates = 0;
}

/* every hit of the traced processes over all CPUs' time */
static double machine_cost(const struct budget_sample *s, int ncpu)
{
	double capacity = (double)s->all_period_ns * ncpu, left;

	if (s->all_probe_ns <= 0 || !s->all_period_ns)
		return 0;
	left = capacity - s->all_probe_ns;
	if (left < capacity / 20)
		left = capacity / 20;
	return s->all_probe_ns / left;
}

double budget_cost(const struct budget_sample *s, int ncpu)
{
	unsigned int threads = s->threads ? s->threads : 1;
	double capacity, probe, left;

	if (ncpu < 1)
		ncpu = 1;
	if (s->probe_ns <= 0 || !s->period_ns)
		return fmax(machine_cost(s, ncpu), s->paced_cost);
	capacity = (double)s->period_ns * (threads < (unsigned int)ncpu ? threads : (unsigned int)ncpu);
	probe = s->probe_ns * (threads > (unsigned int)ncpu ? BUDGET_CROWDED : 1);
	left = capacity - probe;
	/* probes took (nearly) all the time there was: a twentieth left */
	if (left < capacity / 20)
		left = capacity / 20;
	return fmax(fmax(probe / left, machine_cost(s, ncpu)), s->paced_cost);
}

bool budget_ready(const struct budget_sample *s)
{
	return s->writes >= BUDGET_MIN_WRITES || s->period_ns >= BUDGET_PERIOD_NS;
}

/* the share of the work tracing every write takes, at a cost */
static double inside_of(double cost)
{
	return cost > 0 ? cost / (1 + cost) : 0;
}

static void set_duty(struct budget *b)
{
	double inside = inside_of(b->cost), loss, d;

	/* long enough that its inside, not its edges, is most of its cost;
	 * but the first after every write was traced on the model's word is
	 * the shortest, so that the workload's pace prices it cheaply (and
	 * the pace's lead longer: it counts from there) */
	b->window_ns = b->unpaced ? b->min_window_ns + BUDGET_PACE_LEAD_NS :
		       inside > 0 ? BUDGET_WINDOW_LOSS_NS / (BUDGET_AROUND_PER_INSIDE * inside)
				  : BUDGET_WINDOW_MAX_NS;
	if (b->window_ns < b->min_window_ns)
		b->window_ns = b->min_window_ns;
	if (b->window_ns > BUDGET_WINDOW_MAX_NS)
		b->window_ns = BUDGET_WINDOW_MAX_NS;
	/* a window's cycle (it, then its gap) may lose budget x its length:
	 * its inside, its drain and its edges */
	loss = (b->window_ns + b->drain_ns) * inside + BUDGET_WINDOW_LOSS_NS;
	d = b->budget * b->window_ns / loss;

	b->duty = d < BUDGET_MIN_DUTY ? BUDGET_MIN_DUTY : d > 1 ? 1 : d;
}

/* busy writers whose writes went in groups: the model cannot price them
 * alone */
static bool grouped(const struct budget_sample *s)
{
	unsigned int threads = s->threads ? s->threads : 1;

	return s->writes && s->followers >= s->writes * BUDGET_GROUPED_SHARE &&
	       s->busy_ns >= BUDGET_GROUPED_BUSY * s->period_ns * threads;
}

bool budget_keep_every_write(struct budget *b, const struct budget_sample *s)
{
	double inside;
	bool over, in_groups, group;

	b->cost = budget_cost(s, b->ncpu);
	inside = inside_of(b->cost);
	b->estimates++;
	over = b->cost > b->budget;
	in_groups = grouped(s);
	/* within the budget on the model's word alone: grouped writes no
	 * pace has priced yet */
	group = !over && in_groups && !b->group_checked;
	if (!over && !group) {
		/* a stretch within the budget owes nothing, whatever the
		 * pace says later; a spell of credit begins afresh after it */
		b->model_spent_ns = b->traced_ns = b->charged_ns = b->credit_ns = 0;
		b->checked = b->slept = false;
		if (!in_groups)
			b->group_checked = false;
	} else {	/* spent on the model's word and price */
		b->model_spent_ns += s->period_ns * inside;
		b->traced_ns += s->period_ns;
		b->charged_ns += s->period_ns * inside;
		b->credit_ns += s->period_ns;
		b->slept |= s->sleeps > 0;
	}
	b->tokens_ns += s->period_ns * (b->budget - inside);
	if (b->tokens_ns > BUDGET_BURST_NS)
		b->tokens_ns = BUDGET_BURST_NS;
	/* credit is checked once a spell, and only once the model has spent
	 * what a check costs: it guards no more than that; at once where
	 * writes slept, and grouped writes once, the model's spend being
	 * what it cannot tell */
	b->group_check = group && b->credit_ns >= BUDGET_UNPACED_CREDIT_NS &&
			 b->tokens_ns > 0;
	b->pace_check = b->group_check ||
			(over && b->tokens_ns > 0 && !b->checked &&
			 (b->slept || (b->credit_ns >= BUDGET_UNPACED_CREDIT_NS &&
				       b->model_spent_ns >= BUDGET_WINDOW_LOSS_NS)));
	if (!b->pace_check && (!over || b->tokens_ns > 0))
		return true;
	b->every_write = false;
	b->unpaced = true;
	b->credit_ns = 0;
	if (!b->pace_check)	/* the credit is spent: the spell is over */
		b->checked = b->slept = false;
	set_duty(b);
	return false;
}

/*
 * What the model spent since the pace last priced it, scaled by the price
 * (the pace's, or the model's where that is more) over the model's in this
 * window, or the time traced since then at the pace's own price where that
 * is more (the model's reading moved), is what tracing lost; less what
 * the credit and the duty were charged for it (every write at the model's
 * price, a window at the price it was bought at), it is owed.  A window
 * without a pace (none before it, or too few write syscalls) is priced by
 * the model alone, and the spend waits for the next pace.
 */
static void pace_debt(struct budget *b, const struct budget_sample *s, double model,
		      double charged)
{
	double paced, lost, owed;

	b->model_spent_ns += s->period_ns * model;
	b->traced_ns += s->period_ns;
	b->charged_ns += s->period_ns * charged;
	if (s->paced_cost < 0)
		return;
	/* a window whose probes did nothing: its pace is the workload's own
	 * drift, not tracing's */
	if (model > 0) {
		paced = inside_of(b->cost);
		lost = fmax(b->model_spent_ns * paced / model,
			    b->traced_ns * inside_of(s->paced_cost));
		owed = lost - b->charged_ns;
		if (owed > 0)
			b->tokens_ns -= owed;
	}
	b->model_spent_ns = b->traced_ns = b->charged_ns = 0;
}

bool budget_after_window(struct budget *b, const struct budget_sample *s)
{
	struct budget_sample m = *s;
	double model_cost, model, bought = inside_of(b->cost);	/* its price, as bought */
	bool on_credit;

	m.paced_cost = -1;	/* the probes' price alone, then the pace's floor */
	model_cost = budget_cost(&m, b->ncpu);
	model = inside_of(model_cost);
	b->cost = fmax(model_cost, s->paced_cost);
	b->estimates++;
	/* a pace check is paid from the credit: its window at the model's
	 * price (the debt has the rest) and its edges */
	pace_debt(b, s, model, b->pace_check ? model : bought);
	if (b->pace_check)
		b->tokens_ns -= s->period_ns * model + BUDGET_WINDOW_LOSS_NS;
	/* a pace check the pace priced, and credit left: every write again,
	 * on it, and no second check before the credit is spent */
	on_credit = b->pace_check && s->paced_cost >= 0 && b->tokens_ns > 0;
	/* grouped writes are checked once (where too few write syscalls
	 * left the pace blind, the model's word stands: not checked again
	 * every 380 ms) */
	if (b->group_check)
		b->group_checked = true;
	/* the pace has priced what the writes' sleeps hid: a later spell
	 * is checked early only if its own writes sleep */
	b->unpaced = b->pace_check = b->group_check = b->slept = false;
	b->every_write = on_credit || b->cost <= b->budget;
	if (b->every_write) {
		b->checked = on_credit && b->cost > b->budget;
		b->duty = 1;
		return true;
	}
	set_duty(b);
	return false;
}

double budget_paced_cost(double gap_rate, double window_rate)
{
	if (gap_rate <= 0 || window_rate <= 0 || gap_rate < window_rate)
		return -1;
	return gap_rate / window_rate - 1;
}

bool budget_window_spent(const struct budget *b, double elapsed_ns, double paced_cost)
{
	if (b->every_write || paced_cost <= b->cost || elapsed_ns < b->min_window_ns)
		return false;
	return elapsed_ns * inside_of(paced_cost) >= b->window_ns * inside_of(b->cost);
}

void budget_drained(struct budget *b, double drain_ns)
{
	b->drain_ns = b->drain_ns > 0 ? (b->drain_ns + drain_ns) / 2 : drain_ns;
	if (!b->every_write)
		set_duty(b);
}

double budget_drain_max_ns(const struct budget *b)
{
	double inside = inside_of(b->cost), ns;

	if (b->unpaced)		/* the price is the model's alone */
		return BUDGET_DRAIN_MIN_NS;
	if (inside <= 0)
		return BUDGET_DRAIN_MAX_NS;
	ns = BUDGET_WINDOW_LOSS_NS / inside;
	return ns < BUDGET_DRAIN_MIN_NS ? BUDGET_DRAIN_MIN_NS :
	       ns > BUDGET_DRAIN_MAX_NS ? BUDGET_DRAIN_MAX_NS : ns;
}

double budget_gap_ms(const struct budget *b)
{
	return b->window_ns / 1e6 * (1 - b->duty) / b->duty;
}

double budget_repay_ns(struct budget *b)
{
	double ns;

	if (b->tokens_ns >= BUDGET_BURST_NS || b->every_write || b->pace_check ||
	    b->budget <= 0)
		return 0;
	ns = (BUDGET_BURST_NS - b->tokens_ns) / b->budget;
	b->tokens_ns = BUDGET_BURST_NS;
	return ns < BUDGET_REPAY_MAX_NS ? ns : BUDGET_REPAY_MAX_NS;
}
