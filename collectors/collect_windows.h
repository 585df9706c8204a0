/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collect_windows.h - walscope-collect's windows (--window-ms): when the
 * window programs and uprobes are attached, one at random in each stretch (a fixed duty) or by
 * the overhead budget (--budget, budget.h), and windows.tsv.
 */
#ifndef __COLLECT_WINDOWS_H
#define __COLLECT_WINDOWS_H

#include <stdbool.h>

struct walscope_bpf;
struct bpf_program;
struct ring_buffer;

/* --window-ms: the programs attached only while a window is open */
#define NR_WINDOW_PROGS 5
struct bpf_program *window_prog(struct walscope_bpf *skel, int i);

/* windows.tsv opened and the schedule begun (the first window open at
 * once with --budget); -1 (reported) when the file cannot be; nothing
 * without --window-ms */
int start_windows(struct walscope_bpf *skel);
/* the window schedule's next step, if due; returns the ms until the next */
int step_windows(struct walscope_bpf *skel);
/* a window open or its writes still draining: its probes are attached */
bool window_attached(void);
/* at the end: the open window closed, its writes drained from rb, the
 * last lines of windows.tsv */
void end_windows(struct walscope_bpf *skel, struct ring_buffer *rb);
/* every window link closed, windows.tsv closed */
void free_windows(void);

#endif /* __COLLECT_WINDOWS_H */
