/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collect_sample.h - the budget's sample (--budget): what the probes did
 * since it began, from the write records and the probe counters, as the
 * budget reads it (budget.h's struct budget_sample).
 */
#ifndef __COLLECT_SAMPLE_H
#define __COLLECT_SAMPLE_H

#include "budget.h"

struct walscope_bpf;
struct ws_write_rec;

/* a write record seen: its writer and its probe time count in the sample */
void sample_write(const struct ws_write_rec *w);
/* a new sample begins at now */
void sample_start(struct walscope_bpf *skel, unsigned long long now);
/* the sample so far */
struct budget_sample sample_take(struct walscope_bpf *skel, unsigned long long now);

#endif /* __COLLECT_SAMPLE_H */
