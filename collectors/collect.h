/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collect.h - what every unit of walscope-collect shares with its main
 * loop (walscope_collect.c): the stop flag and the poll interval.
 */
#ifndef __COLLECT_H
#define __COLLECT_H

#include <signal.h>

#define POLL_MS 20	/* records are not announced: poll this often */

/* set by a signal or the first write error: the poll loop stops */
extern volatile sig_atomic_t exiting;

#endif /* __COLLECT_H */
