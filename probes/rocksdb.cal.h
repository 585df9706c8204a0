/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocksdb.cal.h - RocksDB's play in walscope-calibrate (user space; see
 * collectors/walscope_calibrate.c for what a play is given).
 *
 * rocksdb_cal_write() plays DBImpl::WriteImpl (PH_WRITE), and inside it
 * rocksdb_cal_phase() is called N times with an entry+return probe pair
 * (PH_QUEUE), or rocksdb_cal_one() with an entry-only probe (PH_LEADER).
 * Its figures:
 *   uprobe_ns, uretprobe_ns: an entry probe's hit, a return probe's
 *   pair_ns, pair_in_ns, pair_out_ns: an entry+return pair, and its cost
 *     inside the probed window and outside it
 *   one_ns: an entry-only probe
 *   stepped_pair_ns, stepped_pair_in_ns: a pair at a site whose first
 *     instruction the kernel cannot emulate and must single-step out of
 *     line (crc32c::Extend's "jmp *mem")
 *   timer_ns: the timed call's own cost, unprobed
 *
 * The probed functions start with "push %rbp" like RocksDB's (the uprobe
 * emulates it; an instruction it must single-step, such as a bare "ret",
 * costs several times more: rocksdb_cal_stepped() measures that case).
 */
#ifndef __WS_ROCKSDB_CAL_H
#define __WS_ROCKSDB_CAL_H

__attribute__((noinline, used, optimize("O0"))) void rocksdb_cal_phase(void)
{
	asm volatile("" ::: "memory");
}

__attribute__((noinline, used, optimize("O0"))) void rocksdb_cal_one(void)
{
	asm volatile("" ::: "memory");
}

__attribute__((noinline, used, optimize("O2"))) void rocksdb_cal_stepped(void)
{
	asm volatile("" ::: "memory");
}

/* one "write": time each call of fn; returns the median per call */
__attribute__((noinline, used)) double rocksdb_cal_write(void (*fn)(void))
{
	unsigned long long t0;
	int i;

	for (i = 0; i < iters; i++) {
		pollute();
		t0 = now_ns();
		fn();
		samples[i] = now_ns() - t0;
	}
	return median();
}

#define ROCKSDB_CAL_COOKIE(ph)	WS_CAL_COOKIE(WS_ENGINE_ROCKSDB, ph)

/* time fn under an entry+return pair inside a write; *in: the cost the
 * write's record shows inside the pair */
static double rocksdb_cal_pair(struct ws_cal *c, const char *name,
			       void (*fn)(void), double *in)
{
	struct bpf_link *a, *b;
	double t;

	a = cal_attach(c, c->skel->progs.ws_phase_enter, name, 0,
		       ROCKSDB_CAL_COOKIE(PH_QUEUE));
	b = cal_attach(c, c->skel->progs.ws_phase_exit, name, 1,
		       ROCKSDB_CAL_COOKIE(PH_QUEUE));
	rocksdb_cal_write(fn);		/* warm up */
	cal_drain(c);
	have_write = 0;
	t = rocksdb_cal_write(fn);
	cal_drain(c);
	*in = 0;
	if (have_write && last_write.hits_in[RC_QUEUE])
		*in = (double)last_write.comp_ns[RC_QUEUE] /
		      last_write.hits_in[RC_QUEUE];
	bpf_link__destroy(a);
	bpf_link__destroy(b);
	return t;
}

static void rocksdb_calibrate(struct ws_cal *c)
{
	struct bpf_link *w_in, *w_out, *o_in;
	double base, pair, pair_in, stepped, stepped_in, one;

	/* warm up, then the unprobed reference, untraced */
	cal_traced(c, 0);
	rocksdb_cal_write(rocksdb_cal_phase);
	base = rocksdb_cal_write(rocksdb_cal_phase);
	cal_traced(c, 1);

	w_in = cal_attach(c, c->skel->progs.ws_phase_enter, "rocksdb_cal_write",
			  0, ROCKSDB_CAL_COOKIE(PH_WRITE));
	w_out = cal_attach(c, c->skel->progs.ws_phase_exit, "rocksdb_cal_write",
			   1, ROCKSDB_CAL_COOKIE(PH_WRITE));
	pair = rocksdb_cal_pair(c, "rocksdb_cal_phase", rocksdb_cal_phase,
				&pair_in) - base;
	stepped = rocksdb_cal_pair(c, "rocksdb_cal_stepped", rocksdb_cal_stepped,
				   &stepped_in) - base;

	o_in = cal_attach(c, c->skel->progs.ws_phase_enter, "rocksdb_cal_one",
			  0, ROCKSDB_CAL_COOKIE(PH_LEADER));
	rocksdb_cal_write(rocksdb_cal_one);
	one = rocksdb_cal_write(rocksdb_cal_one) - base;
	bpf_link__destroy(o_in);
	bpf_link__destroy(w_in);
	bpf_link__destroy(w_out);

	cal_field(c, "uprobe_ns", one);
	cal_field(c, "uretprobe_ns", pair - one);
	cal_field(c, "pair_ns", pair);
	/* the body of the phase function itself is part of pair_in */
	cal_field(c, "pair_in_ns", pair_in);
	cal_field(c, "pair_out_ns", pair - pair_in);
	cal_field(c, "one_ns", one);
	cal_field(c, "timer_ns", base);
	cal_field(c, "stepped_pair_ns", stepped);
	cal_field(c, "stepped_pair_in_ns", stepped_in);
}

#endif /* __WS_ROCKSDB_CAL_H */
