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
	char buf[64];
	ssize_t n;
	int fd;

	if (!env.wall_hz || wall_broken)
		return;
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

void free_wall(void)
{
	bpf_link__destroy(wall_iter);
	wall_iter = NULL;
}
