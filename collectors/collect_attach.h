/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collect_attach.h - the uprobes walscope-collect is told to attach (the
 * probe list), attached for good or, with --window-ms, as uprobe_multi
 * links while a window is open; and the per-CPU sampler.
 */
#ifndef __COLLECT_ATTACH_H
#define __COLLECT_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct walscope_bpf;
struct bpf_link;

/* the attach type of a window's uprobe programs (enum bpf_attach_type:
 * libbpf 1.1 predates it; collect_attach.c says why) */
#define WS_TRACE_UPROBE_MULTI	48

/* the uprobes listed by --attach and "attach" commands, however many;
 * attached for good, or (--window-ms) while a window is open */
struct probe {
	char *name;		/* "enter|exit <demangled name>" */
	char *path;
	unsigned long long offset;
	__u64 cookie;		/* enum ws_phase | argument << 16; a
				 * loader hook's: the offset to r_state */
	bool ret;
	bool loader;		/* the dynamic loader's hook: attached for
				 * the whole run, windows or not */
	bool always;		/* kind "always": an entry probe attached for
				 * the whole run, windows or not (an engine's
				 * counting probe) */
	struct bpf_link *link;
	int multi_fd;		/* a loader or always probe's own uprobe_multi
				 * link (window mode), -1 if none */
	int err;		/* -errno of the last attach, 0 if it attached */
};

extern struct probe *probes;
extern size_t nr_probes;

/* the probes listed in file (the --attach format), attached now unless
 * windows decide when; window_open: a window is attached now, and takes
 * them at once.  0 or -errno (reported) */
int attach_uprobes(struct walscope_bpf *skel, const char *file, bool window_open);
/* destroy every probe's link and the list */
void free_probes(void);

/* a window's uprobes from probes[first] on, as multi links; returns the
 * probes attached */
size_t attach_window_probes(struct walscope_bpf *skel, size_t first);
/* close the window's multi links; wait: here and now, else each on a
 * thread of its own */
void detach_window_probes(bool wait);

/* ws_sample on a CPU clock at hz on each of ncpu CPUs, its links in
 * plinks; returns the CPUs sampled */
int open_sampling(struct walscope_bpf *skel, int hz,
		  struct bpf_link **plinks, int ncpu);

#endif /* __COLLECT_ATTACH_H */
