/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collect_wall.h - walscope-collect's wall sweep (--wall-hz): the traced
 * threads' state and kernel accounting, read by a task iterator
 * (probes/wall.bpf.h) at a jittered fixed rate and at each window's edges.
 */
#ifndef __COLLECT_WALL_H
#define __COLLECT_WALL_H

struct walscope_bpf;

/* one sweep now (a struct ws_wall_rec per traced thread); nothing without
 * --wall-hz, or after the iterator failed once (said once) */
void wall_sweep(struct walscope_bpf *skel);
/* the next periodic sweep, if due; returns the ms until the one after
 * (-1: none planned) */
int step_wall(struct walscope_bpf *skel);
/* the iterator's link closed */
void free_wall(void);

#endif /* __COLLECT_WALL_H */
