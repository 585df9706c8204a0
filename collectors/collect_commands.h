/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collect_commands.h - walscope-collect's conversation with the Python
 * side: commands on stdin, one reply line each on stdout, and the object
 * announcements (--follow-objects) that need no asking.
 */
#ifndef __COLLECT_COMMANDS_H
#define __COLLECT_COMMANDS_H

#include <stddef.h>
#include <linux/types.h>

struct walscope_bpf;
struct ws_object_rec;

/* one line on stdout, flushed: the Python side waits for it */
void reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* what stdin has: its complete lines run; 1 on EOF or "quit" */
int read_commands(struct walscope_bpf *skel, char **buf, size_t *cap,
		  size_t *used);
/* an object record: "obj ..." on stdout, its process remembered if stopped */
void announce_object(const struct ws_object_rec *o);
/* every process still stopped at an object, continued */
void continue_stopped(void);
/* the task iterator's records for process tgid (every traced one if 0);
 * 0 or -errno */
int sweep_tasks(struct walscope_bpf *skel, __u32 tgid, __u32 phase);

#endif /* __COLLECT_COMMANDS_H */
