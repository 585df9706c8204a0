// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * walscope.bpf.c - attribute each database write's latency to components.
 *
 * Per thread, a stack of phases opened by uprobes (the cookie's phase) and
 * syscalls seen at sys_enter/sys_exit.  Time is charged lazily at every
 * transition to the component that was current, so a write's components
 * partition its duration exactly.  Runnable-but-not-running time (sched
 * tracepoints) is moved to WS_COMP_SCHED_RUNQ whatever the phase.
 *
 * Only processes in the "traced" map are followed; children are added at
 * fork, exec keeps the tgid.  Records go through one ring buffer; every
 * reserve failure is counted per record type.
 *
 * One object, one BTF, one skeleton; the parts, in dependency order:
 *   state.bpf.h      per-thread state and the leaders' busy clocks
 *   hooks.gen.bpf.h  the engine hooks' dispatchers, declared (generated)
 *   maps.bpf.h       loader parameters, maps, ring buffer and map helpers
 *   partition.bpf.h  the component partition of a write (the core)
 *   files.bpf.h      syscall classes, file kinds, openat/unlink records
 *   objects.bpf.h    executable objects mapped or exec'd: stop, report
 *   engines.gen.bpf.h  each engine's unit (<name>.bpf.h) and the
 *                    dispatchers to its hooks (generated from engines/)
 *   uprobes.bpf.h    the generic uprobe/uretprobe programs (phase cookies)
 *   syscalls.bpf.h   sys_enter/sys_exit: I/O components and io records
 *   sched.bpf.h      run-queue waits, migrations, off-CPU periods
 *   tasks.bpf.h      fork, exit, the kernel's time accounting, sampling
 *
 * Overhead: each uprobe hit costs what collectors/walscope_calibrate.c
 * measures (~1-2 us a pair here); a tracepoint well under 1 us.  The
 * analysis compensates it per write and component.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "walscope.h"
#include "file_kind.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "state.bpf.h"
#include "hooks.gen.bpf.h"
#include "maps.bpf.h"
#include "partition.bpf.h"
#include "files.bpf.h"
#include "objects.bpf.h"
#include "engines.gen.bpf.h"
#include "uprobes.bpf.h"
#include "syscalls.bpf.h"
#include "sched.bpf.h"
#include "tasks.bpf.h"
#include "wall.bpf.h"

/* keep every record type and enum of walscope.h in BTF: Python derives its
 * dtypes and name tables from them (runfolder/records.py) */
const struct ws_write_rec *__ws_write_rec __attribute__((unused));
const struct ws_io_rec *__ws_io_rec __attribute__((unused));
const struct ws_sched_rec *__ws_sched_rec __attribute__((unused));
const struct ws_open_rec *__ws_open_rec __attribute__((unused));
const struct ws_sample_rec *__ws_sample_rec __attribute__((unused));
const struct ws_task_rec *__ws_task_rec __attribute__((unused));
const struct ws_wall_rec *__ws_wall_rec __attribute__((unused));
const struct ws_offcpu_ent *__ws_offcpu_ent __attribute__((unused));
const struct ws_stack_ent *__ws_stack_ent __attribute__((unused));
const struct ws_object_rec *__ws_object_rec __attribute__((unused));
enum ws_obj_how __ws_obj_how __attribute__((unused));
enum ws_rec_type __ws_rec_type __attribute__((unused));
enum ws_engine __ws_engine __attribute__((unused));
enum ws_phase __ws_phase __attribute__((unused));
enum ws_phase_comp __ws_phase_comp __attribute__((unused));
enum ws_file_kind __ws_file_kind __attribute__((unused));
enum ws_cpu_type __ws_cpu_type __attribute__((unused));
enum ws_write_flag __ws_write_flag __attribute__((unused));
enum ws_sys_write __ws_sys_write __attribute__((unused));
enum ws_sys_sync __ws_sys_sync __attribute__((unused));
enum ws_sys_other __ws_sys_other __attribute__((unused));
enum ws_sys_untraced __ws_sys_untraced __attribute__((unused));
enum ws_tuning __ws_tuning __attribute__((unused));
enum ws_cookie __ws_cookie __attribute__((unused));
enum ws_sched_ev __ws_sched_ev __attribute__((unused));
enum ws_task_phase __ws_task_phase __attribute__((unused));
enum ws_wall_state __ws_wall_state __attribute__((unused));
enum ws_counter __ws_counter __attribute__((unused));
enum ws_stack_id __ws_stack_id __attribute__((unused));
