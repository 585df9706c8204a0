// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collect_commands.c - walscope-collect's stdin protocol.
 *
 * Commands on stdin, one per line; each gets exactly one reply line on
 * stdout, "ok ..." or "err ...: reason":
 *   pid N         trace process N and its future children -> "ok pid N"
 *   attach FILE   attach the uprobes listed in FILE (the --attach format)
 *                 -> "ok attach ATTACHED FAILED"
 *   cont PID      let a process stopped at a new object go on -> "ok cont PID"
 *   seen DEV INO  an object already inspected: do not stop at it
 *                 (DEV as the kernel encodes it: major << 20 | minor)
 *   quit          stop (EOF on stdin too)                  -> "ok quit"
 * stdout says "ready" once everything is attached.  With --follow-objects,
 * it also says, unasked, "obj PID TID HOW DEV INO ADDR LEN STOPPED TS NAME"
 * for each executable object a traced process maps or execs for the first
 * time (HOW: mmap or exec); a stopped process waits for "cont PID", and
 * every process still stopped is continued when the collector exits.
 * Errors are also printed to stderr, prefixed "walscope-collect:".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "walscope.h"
#include "file_kind.h"
#include "walscope.skel.h"
#include "collect_attach.h"
#include "collect_options.h"
#include "collect_windows.h"
#include "collect_commands.h"

/* processes stopped at a new object, not yet continued */
static pid_t *stopped;
static size_t nr_stopped, cap_stopped;

/* one reply line per command: the Python side waits for it */
void reply(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* an object record: tell the Python side, remember a stopped process */
void announce_object(const struct ws_object_rec *o)
{
	char name[WS_NAME_LEN + 1];
	pid_t *bigger;
	size_t i;

	memcpy(name, o->name, WS_NAME_LEN);
	name[WS_NAME_LEN] = 0;
	for (i = 0; name[i]; i++)	/* one line, one field */
		if (name[i] <= ' ')
			name[i] = '?';
	if (o->stopped) {
		if (nr_stopped == cap_stopped) {
			cap_stopped = cap_stopped ? cap_stopped * 2 : 16;
			bigger = realloc(stopped, cap_stopped * sizeof(*stopped));
			if (!bigger) {	/* never leave it stopped */
				kill(o->pid, SIGCONT);
				fprintf(stderr, "walscope-collect: out of memory\n");
				return;
			}
			stopped = bigger;
		}
		stopped[nr_stopped++] = o->pid;
	}
	reply("obj %u %u %s %llu %llu %llu %llu %u %llu %s", o->pid, o->tid,
	      o->how == WS_OBJ_EXEC ? "exec" :
	      o->how == WS_OBJ_LOADER ? "loader" : "mmap", (unsigned long long)o->dev,
	      (unsigned long long)o->ino, (unsigned long long)o->addr,
	      (unsigned long long)o->len, o->stopped,
	      (unsigned long long)o->ts_ns, name[0] ? name : "?");
}

/* SIGCONT to a process stopped at an object; 0 or -errno */
static int continue_pid(pid_t pid)
{
	size_t i, left = 0;
	int err = 0;

	if (kill(pid, SIGCONT))
		err = -errno;
	for (i = 0; i < nr_stopped; i++)
		if (stopped[i] != pid)
			stopped[left++] = stopped[i];
	nr_stopped = left;
	return err;
}

/* fds already open in a process we attach to: give them their kinds */
static void seed_fds(struct walscope_bpf *skel, __u32 pid)
{
	char dir[64], link[PATH_MAX], path[WS_PATH_LEN];
	struct fd_info {
		__u64 ino;
		__u16 kind;
		__u16 pad[3];
	} fi;
	struct dirent *de;
	struct stat st;
	ssize_t n;
	DIR *d;
	__u64 key;
	int fd;

	snprintf(dir, sizeof(dir), "/proc/%u/fd", pid);
	d = opendir(dir);
	if (!d)		/* gone already: add_pid's map update says so */
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		if (stat(link, &st))
			continue;	/* closed meanwhile */
		n = readlink(link, path, sizeof(path) - 1);
		if (n < 0)
			continue;
		path[n] = 0;
		memset(&fi, 0, sizeof(fi));
		fi.ino = st.st_ino;
		fi.kind = ws_file_kind_rules(path, S_ISDIR(st.st_mode), env.log_rules,
					     env.nr_log_rules);
		key = (__u64)pid << 32 | (__u32)fd;
		if (bpf_map__update_elem(skel->maps.fds, &key, sizeof(key),
					 &fi, sizeof(fi), BPF_ANY))
			fprintf(stderr, "walscope-collect: pid %u fd %d: fd "
				"map full, its file kind is unknown\n", pid, fd);
	}
	closedir(d);
}

/*
 * Run the task iterator: a ws_task_rec for each thread of process tgid (of
 * every traced process if 0), phase as given.  Its records go through the
 * ring buffer like any other.  Returns 0 or -errno.
 */
int sweep_tasks(struct walscope_bpf *skel, __u32 tgid, __u32 phase)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};
	struct bpf_link *link;
	char buf[64];
	ssize_t n;
	int fd, err = 0;

	if (tgid) {
		info.task.pid = tgid;
		opts.link_info = &info;
		opts.link_info_len = sizeof(info);
	}
	skel->data->sweep_phase = phase;
	link = bpf_program__attach_iter(skel->progs.ws_task_sweep, &opts);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
	} else {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		if (n < 0)
			err = -errno;
		close(fd);
	}
	bpf_link__destroy(link);
	return err;
}

static void add_pid(struct walscope_bpf *skel, __u32 pid)
{
	__u8 one = 1;
	int err;

	if (pid == (__u32)getpid()) {	/* its own writes would feed on themselves */
		reply("err pid %u: the collector itself", pid);
		return;
	}
	/* kinds first: the first syscall traced must already find its fd */
	seed_fds(skel, pid);
	err = bpf_map__update_elem(skel->maps.traced, &pid, sizeof(pid), &one,
				   sizeof(one), BPF_ANY);
	if (err) {
		fprintf(stderr, "walscope-collect: cannot trace pid %u: %s\n",
			pid, strerror(-err));
		reply("err pid %u: %s", pid, strerror(-err));
		return;
	}
	err = sweep_tasks(skel, pid, WS_TASK_BASELINE);
	if (err) {	/* traced, but its threads' baseline is missing */
		fprintf(stderr, "walscope-collect: pid %u: task iterator: %s\n",
			pid, strerror(-err));
		reply("err pid %u: task iterator: %s", pid, strerror(-err));
		return;
	}
	reply("ok pid %u", pid);
}

/* "attach FILE": more uprobes, while the process that needs them waits */
static void attach_command(struct walscope_bpf *skel, const char *file)
{
	size_t first = nr_probes, i, failed = 0;
	int err = attach_uprobes(skel, file, window_attached());

	if (err) {
		reply("err attach %s: %s", file, strerror(-err));
		return;
	}
	for (i = first; i < nr_probes; i++)
		failed += probes[i].err != 0;
	reply("ok attach %zu %zu", nr_probes - first - failed, failed);
}

/* "seen DEV INO": an object inspected already (at start, from /proc) */
static void seen_command(struct walscope_bpf *skel, const char *args)
{
	struct ws_obj_key k;
	unsigned long long dev, ino;
	__u8 one = 1;
	char tail;
	int err;

	if (sscanf(args, "%llu %llu%c", &dev, &ino, &tail) != 2) {
		reply("err seen %s: expected DEV INO", args);
		return;
	}
	k.dev = dev;
	k.ino = ino;
	err = bpf_map__update_elem(skel->maps.objects_seen, &k, sizeof(k), &one,
				   sizeof(one), BPF_ANY);
	if (err)
		reply("err seen %s: %s", args, strerror(-err));
	else
		reply("ok seen %llu %llu", dev, ino);
}

/* a whole decimal pid in a command, or 0 */
static pid_t command_pid(const char *arg)
{
	unsigned long pid;
	char *end;

	errno = 0;
	pid = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || !pid || pid > INT_MAX)
		return 0;
	return pid;
}

/* one command line; returns 1 for "quit" */
static int handle_command(struct walscope_bpf *skel, char *line)
{
	pid_t pid;
	int err;

	line[strcspn(line, "\r\n")] = 0;
	if (!strcmp(line, "quit")) {
		reply("ok quit");
		return 1;
	}
	if (!strncmp(line, "pid ", 4)) {
		pid = command_pid(line + 4);
		if (!pid) {
			fprintf(stderr, "walscope-collect: bad pid '%s'\n",
				line + 4);
			reply("err pid %s: not a process id", line + 4);
			return 0;
		}
		add_pid(skel, pid);
		return 0;
	}
	if (!strncmp(line, "cont ", 5)) {
		pid = command_pid(line + 5);
		if (!pid) {
			reply("err cont %s: not a process id", line + 5);
			return 0;
		}
		err = continue_pid(pid);
		if (err)
			reply("err cont %d: %s", pid, strerror(-err));
		else
			reply("ok cont %d", pid);
		return 0;
	}
	if (!strncmp(line, "attach ", 7)) {
		attach_command(skel, line + 7);
		return 0;
	}
	if (!strncmp(line, "seen ", 5)) {
		seen_command(skel, line + 5);
		return 0;
	}
	fprintf(stderr, "walscope-collect: unknown command '%s'\n", line);
	reply("err unknown command '%s'", line);
	return 0;
}

/*
 * Read what stdin has and run the complete lines; 1 on EOF or "quit".  The
 * buffer grows with a line, so no command is ever cut.
 */
int read_commands(struct walscope_bpf *skel, char **buf, size_t *cap,
		  size_t *used)
{
	char *nl, *start, *bigger;
	ssize_t n;

	if (*cap - *used < 256) {
		bigger = realloc(*buf, *cap * 2);
		if (!bigger) {
			fprintf(stderr, "walscope-collect: out of memory\n");
			return 1;
		}
		*buf = bigger;
		*cap *= 2;
	}
	n = read(0, *buf + *used, *cap - 1 - *used);
	if (n < 0)
		return errno != EINTR && errno != EAGAIN;
	if (n == 0)
		return 1;
	*used += n;
	(*buf)[*used] = 0;
	start = *buf;
	while ((nl = strchr(start, '\n'))) {
		*nl = 0;
		if (handle_command(skel, start))
			return 1;
		start = nl + 1;
	}
	*used = strlen(start);
	memmove(*buf, start, *used + 1);
	return 0;
}

/* every process still stopped at an object, continued (at exit) */
void continue_stopped(void)
{
	while (nr_stopped)
		continue_pid(stopped[0]);	/* drops every entry of that pid */
	free(stopped);
}
