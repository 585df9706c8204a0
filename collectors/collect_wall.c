// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collect_wall.c - walscope-collect's wall sweep (--wall-hz).  Each sweep
 * runs the ws_wall_sweep task iterator once: a record per traced thread
 * with its state and the kernel's accounting of it (wall.bin).  Sweeps
 * come at a fixed mean rate, each period drawn uniformly from half to one
 * and a half of it (no aliasing with periodic work), and at each window's
 * edges (collect_windows.c), so that the time between windows is cut
 * where its probes were attached and detached.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "walscope.h"
#include "walscope.skel.h"
#include "collect_options.h"
#include "collect_wall.h"

/* a thread this many write calls into a stretch no window saw is a writer
 * of a phase the windows missed */
#define WALL_NEW_WRITER_CALLS 32
#define WALL_TIDS 8192			/* threads followed (a power of two) */

static struct writer {
	__u32 tid;			/* 0: a free slot */
	__u32 pid;
	bool windowed;			/* wrote while a window was attached */
	bool counted;			/* counted in new_writers */
	unsigned long long first, last;	/* its syscw when first and last swept */
} writers[WALL_TIDS];
static unsigned int new_writers;
static unsigned long long sweeps, sweep_ns;

static struct bpf_link *wall_iter;
static bool wall_broken;		/* said once, then no sweeps */
static unsigned long long next_ns;	/* the next periodic sweep */

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* bpf_ktime_get_ns's clock */
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void wall_sweep(struct walscope_bpf *skel)
{
	unsigned long long t0;
	char buf[64];
	ssize_t n;
	int fd;

	if (!env.wall_hz || wall_broken)
		return;
	t0 = mono_ns();
	if (!wall_iter)
		wall_iter = bpf_program__attach_iter(skel->progs.ws_wall_sweep, NULL);
	fd = wall_iter ? bpf_iter_create(bpf_link__fd(wall_iter)) : -1;
	if (fd < 0) {
		fprintf(stderr, "walscope-collect: wall sweep: %s (no more "
			"sweeps)\n", strerror(errno));
		wall_broken = true;
		return;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	sweeps++;
	sweep_ns += mono_ns() - t0;
}

unsigned long long wall_sweeps(void)
{
	return sweeps;
}

unsigned long long wall_sweep_ns(void)
{
	return sweep_ns;
}

int step_wall(struct walscope_bpf *skel)
{
	unsigned long long now = mono_ns(), period;

	if (!env.wall_hz || wall_broken)
		return -1;
	if (now >= next_ns) {
		wall_sweep(skel);
		period = 1000000000ULL / env.wall_hz;
		next_ns = now + period / 2 + (unsigned long long)(drand48() * period);
		now = mono_ns();
	}
	return next_ns > now ? (int)((next_ns - now + 999999) / 1000000) : 0;
}

/* the slot of tid (open addressing); NULL when every slot is taken */
static struct writer *writer_of(__u32 tid)
{
	unsigned int i, h = (tid * 2654435761U) & (WALL_TIDS - 1);

	for (i = 0; i < WALL_TIDS; i++) {
		struct writer *w = &writers[(h + i) & (WALL_TIDS - 1)];

		if (w->tid == tid || !w->tid)
			return w;
	}
	return NULL;
}

/* the thread is one of an engine's own (--background): a flush or a
 * compaction starting to write is no new phase of the workload */
static bool background(const char *comm)
{
	const char *p = env.background;
	size_t n;

	while (p && *p) {
		n = strcspn(p, ",");
		if (n && !strncmp(comm, p, n))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

void wall_seen(const struct ws_wall_rec *r, bool attached)
{
	struct writer *w = writer_of(r->tid);

	if (!w || background(r->comm))
		return;
	/* a slot's tid reused by another thread: its counts began again */
	if (w->tid && (w->pid != r->pid || r->syscw < w->last)) {
		if (w->counted)
			new_writers--;
		w->tid = 0;
	}
	if (!w->tid) {
		w->tid = r->tid;
		w->pid = r->pid;
		w->first = w->last = r->syscw;
		w->windowed = false;
		w->counted = false;
		return;
	}
	if (r->syscw > w->last && attached) {
		w->windowed = true;
		if (w->counted) {	/* a window has seen it now */
			w->counted = false;
			new_writers--;
		}
	}
	w->last = r->syscw;
	if (!w->windowed && !w->counted &&
	    w->last - w->first >= WALL_NEW_WRITER_CALLS) {
		w->counted = true;
		new_writers++;
	}
}

unsigned int wall_new_writers(void)
{
	return new_writers;
}

void wall_phase_windowed(void)
{
	unsigned int i;

	for (i = 0; i < WALL_TIDS; i++)
		if (writers[i].counted) {
			writers[i].counted = false;
			writers[i].windowed = true;
		}
	new_writers = 0;
}

void free_wall(void)
{
	bpf_link__destroy(wall_iter);
	wall_iter = NULL;
}
