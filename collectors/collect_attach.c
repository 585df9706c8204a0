// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collect_attach.c - what walscope-collect attaches besides the
 * tracepoints: the uprobes of --attach and "attach FILE" (the probe list),
 * the dynamic loader's hook, the windows' uprobe_multi links, and the
 * per-CPU sampler.
 *
 * An attach file has one probe a line (--help: --attach); a loader hook's
 * kind is "loader"; a line of kind "rows" (its cookie an enum ws_engine
 * id) turns on an engine whose rows come from syscalls (syscall_rows).  A probe that fails to attach is reported and kept
 * with its error, which collector.json lists.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "walscope.h"
#include "walscope.skel.h"
#include "collect_options.h"
#include "collect_attach.h"

struct probe *probes;
size_t nr_probes;
static size_t cap_probes;

static int add_probe(const char *kind, const char *name, const char *path,
		     unsigned long long offset, __u64 cookie)
{
	struct probe *bigger, *p;

	if (nr_probes == cap_probes) {
		cap_probes = cap_probes ? cap_probes * 2 : 64;
		bigger = realloc(probes, cap_probes * sizeof(*probes));
		if (!bigger)
			return -ENOMEM;
		probes = bigger;
	}
	p = &probes[nr_probes];
	memset(p, 0, sizeof(*p));
	p->multi_fd = -1;
	if (asprintf(&p->name, "%s %s", kind, name) < 0)
		return -ENOMEM;
	p->path = strdup(path);
	if (!p->path) {
		free(p->name);
		return -ENOMEM;
	}
	p->offset = offset;
	p->cookie = cookie;
	p->ret = !strcmp(kind, "exit");
	p->loader = !strcmp(kind, "loader");
	p->always = !strcmp(kind, "always");
	nr_probes++;
	return 0;
}

static int attach_multi_prog(int prog_fd, const char *path,
			     const unsigned long *offsets, const __u64 *cookies,
			     size_t n, bool ret);

/* attach one listed probe (a failure is reported and kept in its err).  In
 * window mode the loader's hook and an engine's counting probes are
 * uprobe_multi links of one offset, as the windows' are: a classic
 * perf-event uprobe takes CAP_SYS_ADMIN where a multi link takes CAP_BPF
 * and CAP_PERFMON (measured: serve as nobody with only those two attached
 * every multi link and no classic one; deploy/walscope-serve@.service) */
static void attach_probe(struct walscope_bpf *skel, struct probe *p)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);

	if (p->link || p->multi_fd >= 0)
		return;
	if (env.window_ms && (p->loader || p->always)) {
		unsigned long off = p->offset;
		int fd = attach_multi_prog(bpf_program__fd(p->loader ?
					   skel->progs.ws_loader :
					   skel->progs.ws_phase_always),
					   p->path, &off, &p->cookie, 1, false);

		p->multi_fd = fd >= 0 ? fd : -1;
		p->err = fd >= 0 ? 0 : fd;
		if (fd < 0)
			fprintf(stderr, "walscope-collect: cannot attach %s: %s\n",
				p->name, strerror(-p->err));
		return;
	}
	opts.retprobe = p->ret;
	opts.bpf_cookie = p->cookie;
	p->link = bpf_program__attach_uprobe_opts(p->loader ? skel->progs.ws_loader :
						  p->ret ? skel->progs.ws_phase_exit :
						  p->always ? skel->progs.ws_phase_always :
						  skel->progs.ws_phase_enter,
						  -1, p->path, p->offset, &opts);
	p->err = p->link ? 0 : -errno;
	if (!p->link)
		fprintf(stderr, "walscope-collect: cannot attach %s: %s\n", p->name,
			strerror(-p->err));
}

/*
 * Read every line of the file into the probe list; attach them now unless
 * windows decide when (then a window open now, window_open, takes them at
 * once).  A loader hook (kind "loader", its cookie signed) and an entry
 * probe of kind "always" are attached at once in every mode.  A line that cannot be read, or memory running out,
 * fails the whole command.
 */
int attach_uprobes(struct walscope_bpf *skel, const char *file, bool window_open)
{
	char kind[16], path[PATH_MAX], name[PATH_MAX];
	unsigned long long offset;
	size_t first = nr_probes, i;
	__u32 rows = 0;
	char *line = NULL;
	size_t cap = 0;
	long long cookie;
	int lineno = 0, err = 0;
	FILE *f;

	f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "walscope-collect: %s: %s\n", file,
			strerror(errno));
		return -errno;
	}
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		if (sscanf(line, "%15[^\t]\t%lld\t%llu\t%4095[^\t]\t%4095[^\n]",
			   kind, &cookie, &offset, path, name) != 5 ||
		    (strcmp(kind, "enter") && strcmp(kind, "exit") &&
		     strcmp(kind, "loader") && strcmp(kind, "always") &&
		     strcmp(kind, "rows")) ||
		    (strcmp(kind, "loader") && cookie < 0) ||
		    (!strcmp(kind, "rows") && (cookie < 1 || cookie > 31))) {
			fprintf(stderr, "walscope-collect: %s:%d: not an attach "
				"line: %s", file, lineno, line);
			err = -EINVAL;
			break;
		}
		if (!strcmp(kind, "rows")) {	/* an engine of syscall rows, on */
			rows |= 1u << cookie;
			continue;
		}
		err = add_probe(kind, name, path, offset, (__u64)cookie);
		if (err) {
			fprintf(stderr, "walscope-collect: out of memory\n");
			break;
		}
	}
	if (!err && ferror(f)) {
		err = -errno;
		fprintf(stderr, "walscope-collect: reading %s: %s\n", file,
			strerror(errno));
	}
	free(line);
	fclose(f);
	if (err) {	/* the command failed whole: none of its lines stay */
		while (nr_probes > first) {
			nr_probes--;
			free(probes[nr_probes].name);
			free(probes[nr_probes].path);
		}
		return err;
	}
	__sync_fetch_and_or(&skel->bss->syscall_rows, rows);
	for (i = first; i < nr_probes; i++)
		if (!env.window_ms || probes[i].loader || probes[i].always)
			attach_probe(skel, &probes[i]);
	if (env.window_ms && window_open)	/* the open window's too */
		attach_window_probes(skel, first);
	return 0;
}

/* --sample-hz: ws_sample on each CPU's clock (a possible CPU that is not
 * online has none) */
int open_sampling(struct walscope_bpf *skel, int hz,
		  struct bpf_link **plinks, int ncpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = hz,
	};
	int cpu, fd, n = 0;

	for (cpu = 0; cpu < ncpu; cpu++) {
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
			     PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno != ENODEV)	/* a possible CPU not online */
				fprintf(stderr, "walscope-collect: cpu %d: "
					"perf_event_open: %s\n", cpu,
					strerror(errno));
			continue;
		}
		plinks[cpu] = bpf_program__attach_perf_event(
			skel->progs.ws_sample, fd);
		if (!plinks[cpu]) {
			fprintf(stderr, "walscope-collect: cpu %d: sampler: "
				"%s\n", cpu, strerror(errno));
			close(fd);
			continue;
		}
		n++;
	}
	return n;
}

/*
 * --window-ms: a window's uprobes as uprobe_multi links (Linux 6.6), one per
 * object and direction.  Detaching a classic uprobe waits for an RCU grace
 * period, per probe: 21 probes took 2.2 s here; a multi link waits once.
 * libbpf 1.1 (Debian 12) predates its API, so the link is made with the
 * bpf(2) call itself: union bpf_attr's link_create for this attach type.
 */
#define WS_F_UPROBE_MULTI_RETURN 1

struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;		/* const char * */
	__u64 offsets;		/* const unsigned long * */
	__u64 ref_ctr_offsets;
	__u64 cookies;		/* const __u64 * */
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 __pad;
	__u8 zero[64];		/* the rest of union bpf_attr, zero */
};

/* a multi link of prog at n offsets of path; returns its fd, or -errno */
static int attach_multi_prog(int prog_fd, const char *path,
			     const unsigned long *offsets, const __u64 *cookies,
			     size_t n, bool ret)
{
	struct uprobe_multi_attr a = {};
	int fd;

	a.prog_fd = prog_fd;
	a.attach_type = WS_TRACE_UPROBE_MULTI;
	a.path = (unsigned long)path;
	a.offsets = (unsigned long)offsets;
	a.cookies = (unsigned long)cookies;
	a.cnt = n;
	a.multi_flags = ret ? WS_F_UPROBE_MULTI_RETURN : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* one multi link for the probes listed in idx (one object, one
 * direction); returns its fd, or -errno */
static int attach_multi(struct walscope_bpf *skel, const size_t *idx, size_t n)
{
	unsigned long *offsets = calloc(n, sizeof(*offsets));
	__u64 *cookies = calloc(n, sizeof(*cookies));
	struct probe *p = &probes[idx[0]];
	size_t i;
	int fd;

	if (!offsets || !cookies) {
		free(offsets);
		free(cookies);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		offsets[i] = probes[idx[i]].offset;
		cookies[i] = probes[idx[i]].cookie;
	}
	fd = attach_multi_prog(bpf_program__fd(p->ret ? skel->progs.ws_phase_exit :
					       skel->progs.ws_phase_enter),
			       p->path, offsets, cookies, n, p->ret);
	free(offsets);
	free(cookies);
	return fd;
}

static int multi_fds[1024];
static size_t nr_multi;

/* the window's uprobes from probes[first] on: one multi link per object
 * and direction; returns the probes attached */
size_t attach_window_probes(struct walscope_bpf *skel, size_t first)
{
	size_t *idx = calloc(nr_probes ? nr_probes : 1, sizeof(*idx));
	bool *done = calloc(nr_probes ? nr_probes : 1, sizeof(*done));
	size_t i, j, n, attached = 0;
	int fd;

	if (!idx || !done) {
		fprintf(stderr, "walscope-collect: out of memory\n");
		free(idx);
		free(done);
		return 0;
	}
	for (i = first; i < nr_probes; i++) {
		if (done[i] || probes[i].loader || probes[i].always)
			continue;
		if (nr_multi == sizeof(multi_fds) / sizeof(multi_fds[0])) {
			/* no link left for it this window: said, and kept as
			 * its error (collector.json counts it as failed) */
			if (!probes[i].err)
				fprintf(stderr, "walscope-collect: window: %s: no "
					"uprobe_multi link left (%zu in use)\n",
					probes[i].name, nr_multi);
			probes[i].err = -EMFILE;
			continue;
		}
		for (n = 0, j = i; j < nr_probes; j++)
			if (!done[j] && !probes[j].loader && !probes[j].always &&
			    probes[j].ret == probes[i].ret &&
			    !strcmp(probes[j].path, probes[i].path)) {
				idx[n++] = j;
				done[j] = true;
			}
		fd = attach_multi(skel, idx, n);
		for (j = 0; j < n; j++)
			probes[idx[j]].err = fd < 0 ? fd : 0;
		if (fd < 0) {
			fprintf(stderr, "walscope-collect: window: uprobe_multi on %s: %s\n",
				probes[i].path, strerror(-fd));
			continue;
		}
		multi_fds[nr_multi++] = fd;
		attached += n;
	}
	free(idx);
	free(done);
	return attached;
}

/* closing a multi link removes its breakpoints at once, then waits for an
 * RCU grace period (~0.6 s here) before it returns: each wait is a thread's,
 * side by side, so every breakpoint of the window is gone right away */
static void *close_fd(void *arg)
{
	close((int)(long)arg);
	return NULL;
}

void detach_window_probes(bool wait)
{
	pthread_t th;

	while (nr_multi) {
		int fd = multi_fds[--nr_multi];

		if (wait || pthread_create(&th, NULL, close_fd, (void *)(long)fd))
			close(fd);	/* at exit, or no thread: here and now */
		else
			pthread_detach(th);
	}
}

void free_probes(void)
{
	size_t k;

	for (k = 0; k < nr_probes; k++) {
		bpf_link__destroy(probes[k].link);
		if (probes[k].multi_fd >= 0)
			close(probes[k].multi_fd);
		free(probes[k].name);
		free(probes[k].path);
	}
	free(probes);
}
