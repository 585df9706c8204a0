/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collect_wall.h - walscope-collect's wall sweep (--wall-hz): the traced
 * threads' state and kernel accounting, read by a task iterator
 * (probes/wall.bpf.h) at a jittered fixed rate and at each window's edges.
 */
#ifndef __COLLECT_WALL_H
#define __COLLECT_WALL_H

#include <stdbool.h>

struct walscope_bpf;
struct ws_wall_rec;

/* one sweep now (a struct ws_wall_rec per traced thread); nothing without
 * --wall-hz, or after the iterator failed once (said once) */
void wall_sweep(struct walscope_bpf *skel);
/* the next periodic sweep, if due; returns the ms until the one after
 * (-1: none planned) */
int step_wall(struct walscope_bpf *skel);
/* a wall record seen (on_record): its thread's write calls, and whether a
 * window's probes were attached when it was read */
void wall_seen(const struct ws_wall_rec *r, bool attached);
/* writers no window has seen: threads that made WALL_NEW_WRITER_CALLS
 * write calls or more since they were first swept, none of them while a
 * window was attached (a new phase: a run's threads after a load's) */
unsigned int wall_new_writers(void);
/* a window opened for them: they count as seen (one window a phase) */
void wall_phase_windowed(void);
/* sweeps run, and the time they took the collector (its own cost) */
unsigned long long wall_sweeps(void);
unsigned long long wall_sweep_ns(void);
/* the iterator's link closed */
void free_wall(void);

#endif /* __COLLECT_WALL_H */
