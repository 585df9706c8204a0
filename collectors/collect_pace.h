/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collect_pace.h - the traced processes' write syscalls (the "syscw"
 * lines of windows.tsv) and the workload's pace, traced and not, that the
 * budget prices a window by (--budget).
 */
#ifndef __COLLECT_PACE_H
#define __COLLECT_PACE_H

#include <stdbool.h>
#include "walscope.h"

struct walscope_bpf;

/*
 * The workload's pace (write syscalls a second) where it was not traced:
 * the gap before the open window, from the counts at its edges.  The gap
 * begins PACE_SETTLE_NS after the last detach, where the gap is longer
 * (walscope.h's WS_SETTLE_NS says why); and it ends before the next
 * attach.  Inside the window, the pace counts from BUDGET_PACE_LEAD_NS
 * after its open.
 */
#define PACE_MIN_SYSCALLS 20	/* fewer in a gap or window: no pace */
#define PACE_SETTLE_NS ((unsigned long long)WS_SETTLE_NS)
struct pace {
	unsigned long long close_ns, close_n;	/* where the gap began */
	unsigned long long settle_ns;		/* it begins again here (0: no) */
	unsigned long long open_ns, open_n;	/* where the window's pace
						 * begins: its open, then its
						 * lead's end */
	unsigned long long lead_ns;		/* the lead ends here (0: no) */
	double gap_rate;			/* < 0: none */
};
extern struct pace pace;

/* the count now in *n; false (and said once) where it cannot be read */
bool syscw_read(struct walscope_bpf *skel, unsigned long long *n);
/* the count now, also as a windows.tsv line (0 and no line where it
 * cannot be read, or without --budget) */
unsigned long long syscw_line(struct walscope_bpf *skel, unsigned long long ts);
/* the untraced gap, for the pace, begins (again) now */
void gap_begins(struct walscope_bpf *skel, unsigned long long now);
/* the open window's pace against the gap's, as a cost (< 0: unknown) */
double paced_cost(struct walscope_bpf *skel, unsigned long long now);
/* the window's lead is over: its pace counts from now (where the count
 * cannot be read, or every write is traced, from its open) */
void lead_ends(struct walscope_bpf *skel, unsigned long long now, bool every_write);
/* the count's iterator closed */
void pace_free(void);

#endif /* __COLLECT_PACE_H */
