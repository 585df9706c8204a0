/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collect_window_log.h - windows.tsv, one line per event of the window
 * schedule (collect_windows.c says which), flushed at each line.
 */
#ifndef __COLLECT_WINDOW_LOG_H
#define __COLLECT_WINDOW_LOG_H

/* windows.tsv opened; -1 (reported) when it cannot be */
int window_log_open(void);
/* a line of it (nothing before it is opened or after it is closed) */
void window_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void window_log_close(void);

#endif /* __COLLECT_WINDOW_LOG_H */
