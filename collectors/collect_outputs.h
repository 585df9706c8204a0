/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collect_outputs.h - what walscope-collect writes to the run folder: one
 * record file per record type, the maps dumped at exit, collector.json;
 * and the errors collector.json and the exit status report.
 */
#ifndef __COLLECT_OUTPUTS_H
#define __COLLECT_OUTPUTS_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct walscope_bpf;

extern int write_error;		/* errno of the first failed write */
extern int poll_error;		/* errno of a failed ring buffer poll */

/* the first write error stops the collection; every one is reported once */
void fail_write(const char *name);
/* a file of the run folder, for writing; NULL (reported) on failure */
FILE *open_out(const char *name);
/* fclose that reports a failed final flush */
void close_out(FILE *f, const char *name);

/* the record files, opened empty; -1 (reported) when one cannot be */
int open_outputs(void);
/* a ring-buffer record appended to its file: returns its type, or 0 when
 * it is no record (counted as bad in collector.json) */
__u32 write_record(const void *data, size_t size);
/* after every poll: a crash loses at most the last partial record */
void flush_outputs(void);
/* at the end: closed, a failed final flush reported */
void close_outputs(void);
/* those still open after an error, closed unchecked */
void drop_outputs(void);

/* the stack map (stacks.bin) and the offcpu map (offcpu.bin) */
void dump_stacks(struct walscope_bpf *skel);
void dump_offcpu(struct walscope_bpf *skel);
/* counters.json, the counters now, renamed over the last (--live-counters) */
void write_live_counters(struct walscope_bpf *skel, unsigned long long ts_ns);
/* collector.json: counters, record counts, errors, attach results */
void write_summary(struct walscope_bpf *skel, int ncpu, int nsampled);

#endif /* __COLLECT_OUTPUTS_H */
