// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collect_sample.c - the budget's sample (collect_sample.h): each write
 * record's probe time at the calibrated costs, its writer, its span, and
 * every probe hit the counters saw, in writes or not.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "walscope.h"
#include "walscope.skel.h"
#include "collect_options.h"
#include "collect_sample.h"

/* writers told apart in a sample: more count as this many */
#define MAX_WRITERS 64

/* what the probes did since the sample began (--budget) */
static struct {
	unsigned long long since_ns;
	__u64 hits[3];			/* uprobe, uretprobe, tracepoint
					 * counters at since_ns */
	__u64 sleeps;			/* CNT_WRITE_SLEEPS at since_ns */
	double probe_ns;		/* in its writes, by their records */
	unsigned long long lo_ns, hi_ns;	/* its writes' span */
	unsigned long long writes;
	unsigned long long followers;	/* carried by another's group */
	double busy_ns;			/* its writes' time, summed */
	__u32 tids[MAX_WRITERS];
	unsigned int threads;
} sample;

/* a write record seen: its writer counts in the sample, and its probe
 * time (its hits as the record counts them, at the calibrated costs:
 * what compensation removes from it, less the wait-for charges) */
void sample_write(const struct ws_write_rec *w)
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
	sample.busy_ns += w->dur_ns;
	/* only an engine whose rows form groups has followers */
	if ((env.grouped >> (w->engine & 63) & 1) && !(w->flags & WS_WF_LEADER))
		sample.followers++;
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

void sample_start(struct walscope_bpf *skel, unsigned long long now)
{
	read_hits(skel, sample.hits);
	sample.sleeps = counter(skel, CNT_WRITE_SLEEPS);
	sample.since_ns = now;
	sample.probe_ns = 0;
	sample.lo_ns = sample.hi_ns = 0;
	sample.writes = 0;
	sample.followers = 0;
	sample.busy_ns = 0;
	sample.threads = 0;
}

/* the sample so far, as the budget reads it: the span of its writes (the
 * records come in after their writes end, a poll or two late), or the
 * time since it began when it has fewer than two */
struct budget_sample sample_take(struct walscope_bpf *skel, unsigned long long now)
{
	struct budget_sample s = { .paced_cost = -1 };
	__u64 hits[3], sleeps;
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
	s.followers = sample.followers;
	s.busy_ns = sample.busy_ns;
	sleeps = counter(skel, CNT_WRITE_SLEEPS);	/* 0 where unread */
	s.sleeps = sleeps > sample.sleeps ? sleeps - sample.sleeps : 0;
	return s;
}
