// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collect_outputs.c - walscope-collect's files in the run folder (-o DIR):
 * writes.bin, io.bin, sched.bin, open.bin, samples.bin, tasks.bin and
 * objects.bin, one fixed-size record after another as the ring buffer
 * hands them over; stacks.bin and offcpu.bin, the maps dumped at exit;
 * collector.json, written whatever happened after load, so the Python
 * side can tell.
 *
 * Records are appended as they arrive and flushed after every poll, so a
 * crash loses at most the last partial record, which readers drop.
 */
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "walscope.h"
#include "walscope.skel.h"
#include "collect.h"
#include "collect_options.h"
#include "collect_attach.h"
#include "collect_outputs.h"
#include "collect_wall.h"

struct out_file {
	const char *name;
	size_t size;
	FILE *f;
	unsigned long long n;
};

static struct out_file outs[] = {
	[WS_REC_WRITE] = { "writes.bin", sizeof(struct ws_write_rec) },
	[WS_REC_IO] = { "io.bin", sizeof(struct ws_io_rec) },
	[WS_REC_SCHED] = { "sched.bin", sizeof(struct ws_sched_rec) },
	[WS_REC_OPEN] = { "open.bin", sizeof(struct ws_open_rec) },
	[WS_REC_SAMPLE] = { "samples.bin", sizeof(struct ws_sample_rec) },
	[WS_REC_TASK] = { "tasks.bin", sizeof(struct ws_task_rec) },
	[WS_REC_OBJECT] = { "objects.bin", sizeof(struct ws_object_rec) },
	[WS_REC_WALL] = { "wall.bin", sizeof(struct ws_wall_rec) },
};
#define NR_OUTS (sizeof(outs) / sizeof(outs[0]))

static unsigned long long bad_records;
int write_error;		/* errno of the first failed write */
int poll_error;		/* errno of a failed ring buffer poll */

/* the first write error stops the collection; every one is reported once */
void fail_write(const char *name)
{
	int err = errno ? errno : EIO;

	if (!write_error)
		fprintf(stderr, "walscope-collect: writing %s/%s: %s\n",
			env.outdir, name, strerror(err));
	write_error = err;
	exiting = 1;
}

/* a ring-buffer record appended to its file: returns its type, or 0 when
 * it is no record (counted as bad in collector.json) */
__u32 write_record(const void *data, size_t size)
{
	__u32 type;

	if (size < sizeof(__u32)) {
		bad_records++;
		return 0;
	}
	type = *(const __u32 *)data;
	if (type == 0 || type >= NR_OUTS || !outs[type].f ||
	    size < outs[type].size) {
		bad_records++;
		return 0;
	}
	if (fwrite(data, outs[type].size, 1, outs[type].f) != 1)
		fail_write(outs[type].name);
	outs[type].n++;
	return type;
}

/* after every poll: a crash loses at most the last partial record */
void flush_outputs(void)
{
	size_t i;

	for (i = 1; i < NR_OUTS; i++)
		if (outs[i].f && fflush(outs[i].f))
			fail_write(outs[i].name);
}

/* a file of the run folder, for writing; NULL (reported) on failure */
FILE *open_out(const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", env.outdir, name);
	f = fopen(path, "w");
	if (!f)
		fail_write(name);
	return f;
}

/* fclose that reports a failed final flush */
void close_out(FILE *f, const char *name)
{
	if (ferror(f) | fclose(f))
		fail_write(name);
}

/* the stack map as struct ws_stack_ent records (stacks.bin) */
void dump_stacks(struct walscope_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.stacks);
	struct ws_stack_ent e;
	__u32 next, *prev = NULL;
	FILE *f = open_out("stacks.bin");

	if (!f)
		return;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		e.id = next;
		prev = &e.id;
		memset(e.ips, 0, sizeof(e.ips));
		if (bpf_map_lookup_elem(fd, &e.id, e.ips))
			continue;	/* deleted meanwhile: nothing to keep */
		for (e.depth = 0; e.depth < WS_STACK_DEPTH && e.ips[e.depth];
		     e.depth++)
			;
		if (fwrite(&e, sizeof(e), 1, f) != 1) {
			fail_write("stacks.bin");
			break;
		}
	}
	close_out(f, "stacks.bin");
}

/* the offcpu map, as struct ws_offcpu_ent records (offcpu.bin) */
void dump_offcpu(struct walscope_bpf *skel)
{
	struct ws_offcpu_key *prev = NULL, next;
	int fd = bpf_map__fd(skel->maps.offcpu);
	struct ws_offcpu_ent e;
	FILE *f = open_out("offcpu.bin");

	if (!f)
		return;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		e.key = next;
		prev = &e.key;
		if (bpf_map_lookup_elem(fd, &e.key, &e.val))
			continue;
		if (fwrite(&e, sizeof(e), 1, f) != 1) {
			fail_write("offcpu.bin");
			break;
		}
	}
	close_out(f, "offcpu.bin");
}

/* a JSON string: quotes, backslashes and control characters escaped */
static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* the counters summed over CPUs into sums[CNT_NR] (0 where unread) */
static void read_counters(struct walscope_bpf *skel, __u64 *vals, int nr_cpus,
			  __u64 *sums)
{
	int c;
	__u32 k;

	for (k = 0; k < CNT_NR; k++) {
		sums[k] = 0;
		if (!bpf_map__lookup_elem(skel->maps.counters, &k, sizeof(k),
					  vals, sizeof(__u64) * nr_cpus, 0))
			for (c = 0; c < nr_cpus; c++)
				sums[k] += vals[c];
	}
}

/*
 * counters.json while it runs (--live-counters): the counters now, written
 * to a new file and renamed over the last, so a reader sees one whole
 * snapshot.  A failure is said once; the run goes on (collector.json has
 * the counters at the end).
 */
void write_live_counters(struct walscope_bpf *skel, unsigned long long ts_ns)
{
	static __u64 *vals;
	static int nr_cpus;
	static bool said;
	const char *name = "counters.json";
	__u64 sums[CNT_NR];
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f;
	__u32 k;

	if (!vals) {
		nr_cpus = libbpf_num_possible_cpus();
		vals = calloc(nr_cpus, sizeof(__u64));
		if (!vals)
			return;
	}
	read_counters(skel, vals, nr_cpus, sums);
	snprintf(path, sizeof(path), "%s/%s", env.outdir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", env.outdir, name);
	f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "{\"ts_ns\": %llu, \"counters\": [", ts_ns);
		for (k = 0; k < CNT_NR; k++)
			fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)sums[k]);
		fprintf(f, "]}\n");
	}
	if (!f || fclose(f) || rename(tmp, path)) {
		if (!said)
			fprintf(stderr, "walscope-collect: %s: %s (the live counters "
				"stop; collector.json keeps them at the end)\n", path,
				strerror(errno));
		said = true;
		unlink(tmp);
	}
}

/* collector.json: counters, record counts, errors, attach results */
void write_summary(struct walscope_bpf *skel, int ncpu, int nsampled)
{
	int nr_cpus = libbpf_num_possible_cpus();
	__u64 *vals = calloc(nr_cpus, sizeof(__u64)), sums[CNT_NR];
	struct rusage ru;
	size_t i;
	__u32 k;
	FILE *f;

	if (!vals) {
		errno = ENOMEM;
		fail_write("collector.json");
		return;
	}
	f = open_out("collector.json");
	if (!f) {
		free(vals);
		return;
	}
	read_counters(skel, vals, nr_cpus, sums);
	fprintf(f, "{\n  \"counters\": [");
	for (k = 0; k < CNT_NR; k++)
		fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)sums[k]);
	fprintf(f, "],\n  \"records\": {");
	for (i = 1; i < NR_OUTS; i++)
		fprintf(f, "%s\"%s\": %llu", i > 1 ? ", " : "", outs[i].name,
			outs[i].n);
	fprintf(f, "},\n  \"bad_records\": %llu,\n", bad_records);
	fprintf(f, "  \"write_error\": %d,\n", write_error);
	fprintf(f, "  \"poll_error\": %d,\n", poll_error);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(f, "  \"cpu_user_s\": %.3f,\n  \"cpu_sys_s\": %.3f,\n"
		   "  \"max_rss_kb\": %ld,\n",
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss);
	fprintf(f, "  \"sampled_cpus\": %d,\n  \"cpus\": %d,\n", nsampled,
		ncpu);
	fprintf(f, "  \"wall_sweeps\": %llu,\n  \"wall_sweep_ns\": %llu,\n",
		wall_sweeps(), wall_sweep_ns());
	fprintf(f, "  \"attach\": [");
	for (i = 0; i < nr_probes; i++) {
		fprintf(f, "%s\n    {\"probe\": ", i ? "," : "");
		json_string(f, probes[i].name);
		fprintf(f, ", \"err\": %d}", probes[i].err);
	}
	fprintf(f, "\n  ]\n}\n");
	close_out(f, "collector.json");
	free(vals);
}


/* the record files, opened empty; -1 (reported) when one cannot be */
int open_outputs(void)
{
	size_t k;

	for (k = 1; k < NR_OUTS; k++) {
		outs[k].f = open_out(outs[k].name);
		if (!outs[k].f)
			return -1;
		setvbuf(outs[k].f, NULL, _IOFBF, 1 << 20);
	}
	return 0;
}

/* at the end: closed, a failed final flush reported */
void close_outputs(void)
{
	size_t k;

	for (k = 1; k < NR_OUTS; k++) {
		close_out(outs[k].f, outs[k].name);
		outs[k].f = NULL;
	}
}

/* those still open after an error, closed unchecked */
void drop_outputs(void)
{
	size_t k;

	for (k = 1; k < NR_OUTS; k++)
		if (outs[k].f)
			fclose(outs[k].f);
}
