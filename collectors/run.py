"""One traced run: resolve probes, collect, analyse, write the run folder.

trace_wal.py and the runners both go through ``trace()``.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import platform
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from collectors import attribution as A
from collectors import columns as C
from collectors import records as R
from collectors import calibration, offcpu, sampling, stacks, symbols, threadtime, topology
from collectors.cli import DEFAULT_OFFCPU_STACK_EVERY
from collectors.session import (Collector, RunAs, SessionError, Workload,
                                chown_tree, process_tree)

DEFAULT_SAMPLE_HZ = 499   # on-CPU flame graphs and the sampled CRC split
# sample mode's own rate: the timer interrupts perturb 4-thread sync=false
# db_bench far beyond their run time (2 us a sample), by RocksDB's adaptive
# yield: 5-12% at 199 Hz and up, and at 99 Hz 0.97 in one regime and 0.92
# in a faster one (30 pairs each); 49 Hz read 0.98 in the faster one
SAMPLE_MODE_HZ = 49
# a workload may log its own transactions here (WALSCOPE_RUN_DIR/txlog.csv:
# tid,start_ns,end_ns,type[,ok] with CLOCK_MONOTONIC ns); they label the rows
TXLOG = "txlog.csv"


class TraceError(RuntimeError):
    """Bad input or an unusable machine: one line for the user."""


@dataclass
class TraceOptions:
    command: list[str] = field(default_factory=list)
    pid: int | None = None
    duration: float | None = None
    output: Path | None = None
    mode: str = "full"
    cpu_types: str | None = None
    user: str | None = None
    libs: list[str] = field(default_factory=list)
    ringbuf_kb: int = 16 << 10
    sample_hz: int | None = None
    echo: bool = True
    verbose: bool = False
    recalibrate: bool = False
    calibrate: bool = True
    cwd: str | None = None
    print_table: bool = True
    stacks: str = "off"          # on-CPU stacks: off, auto, bpf, dwarf
    stack_entries: int = 0       # stack map size (0: the BPF default)
    offcpu_stacks: bool | None = None  # kernel stacks at sched_switch;
    #                                    None: on in full mode only (sample
    #                                    mode sums off-CPU time without them)
    offcpu_stack_every: int = DEFAULT_OFFCPU_STACK_EVERY  # 1 in N periods walked
    sched: bool | None = None     # programs on sched_switch/sched_wakeup;
    #                               None: on except in sample mode
    stepped_probes: bool = False  # keep probe sites the kernel single-steps


@dataclass
class TraceResult:
    run_dir: Path
    exit_code: int
    summary: dict[str, Any]


CAP_PERFMON, CAP_BPF, CAP_SYS_ADMIN = 38, 39, 21


def check_privileges() -> None:
    if os.geteuid() == 0:
        return
    try:
        with open("/proc/self/status") as f:
            eff = next(int(l.split()[1], 16) for l in f if l.startswith("CapEff:"))
    except (OSError, StopIteration, ValueError):
        eff = 0
    has = lambda c: bool(eff >> c & 1)  # noqa: E731
    if not (has(CAP_SYS_ADMIN) or (has(CAP_BPF) and has(CAP_PERFMON))):
        raise TraceError("needs root (or CAP_BPF and CAP_PERFMON): "
                         "run it with sudo")


def check_kernel() -> None:
    if not Path("/sys/kernel/btf/vmlinux").exists():
        raise TraceError("this kernel has no BTF (/sys/kernel/btf/vmlinux): "
                         "walscope's CO-RE probes need CONFIG_DEBUG_INFO_BTF=y")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def default_run_dir(name: str) -> Path:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:40]
    return Path("runs") / f"{stamp}-{safe}"


def resolve_probes(opts: TraceOptions, run_as: RunAs) -> symbols.Resolution:
    if opts.pid is not None:
        objs = symbols.candidate_objects_for_pid(opts.pid, opts.libs)
        what = f"pid {opts.pid}"
    else:
        path = run_as.env()["PATH"]
        exe = _resolve_exe(opts.command[0], path)
        objs = symbols.candidate_objects_for_command(exe, opts.libs)
        what = exe
        # wrappers (taskset, nice, env, numactl...) exec the real program:
        # look at later arguments that are executables too
        for arg in opts.command[1:]:
            if arg.startswith("-"):
                continue
            found = symbols.shutil.which(arg, path=path) \
                if "/" not in arg else (arg if os.access(arg, os.X_OK) else None)
            if found and os.path.isfile(found) and symbols.is_elf(found):
                objs += [o for o in symbols.candidate_objects_for_command(found, [])
                         if o not in objs]
    res = symbols.resolve_rocksdb(objs, opts.mode, keep_stepped=opts.stepped_probes)
    if res.object_path is None:
        res = symbols.resolve_sqlite(objs, opts.mode)
    if res.object_path is None:
        raise TraceError(
            f"no RocksDB or SQLite found in {what} (checked {len(res.objects_checked)} "
            "objects; a stripped library or a dlopen()ed one: name it with --lib)")
    return res


def _resolve_exe(exe: str, path: str) -> str:
    if "/" not in exe:
        found = symbols.shutil.which(exe, path=path)
        if not found:
            raise TraceError(f"command not found: {exe}")
        exe = found
    if not os.path.exists(exe):
        raise TraceError(f"command not found: {exe}")
    return exe


def _seed_paths(pids: list[int]) -> dict[tuple[int, int], str]:
    out = {}
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    out[(pid, int(fd))] = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    pass
        except OSError:
            pass
    return out


def _wait_pid(pid: int, deadline: float | None) -> None:
    while os.path.exists(f"/proc/{pid}") and (deadline is None or time.monotonic() < deadline):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return
        except OSError:
            return
        time.sleep(0.1)


class _Terminate(Exception):
    pass


def _on_term(signum: int, frame: Any) -> None:
    raise _Terminate()


def trace(opts: TraceOptions) -> TraceResult:
    check_privileges()
    check_kernel()
    if opts.mode not in symbols.MODES:
        raise TraceError(f"unknown mode {opts.mode!r} (choose from {', '.join(symbols.MODES)})")
    if opts.pid is None and not opts.command:
        raise TraceError("nothing to trace: give a command after -- or -p PID")
    if opts.pid is not None and not os.path.exists(f"/proc/{opts.pid}"):
        raise TraceError(f"no such process: {opts.pid}")
    try:
        topo = topology.resolve(opts.cpu_types)
    except topology.TopologyError as e:
        raise TraceError(str(e)) from None
    try:
        run_as = RunAs.lookup(opts.user)
        res = resolve_probes(opts, run_as)
    except (SessionError, symbols.SymbolError) as e:
        raise TraceError(str(e)) from None
    for m in res.missing:
        print(f"walscope: probe point missing in {res.object_path}: {m}", file=sys.stderr)
    for n in res.notes:
        print(f"walscope: {res.object_path}: {n}", file=sys.stderr)
    if run_as.uid == 0 and opts.pid is None and not run_as.explicit_root:
        print("walscope: running the workload as root (no SUDO_USER; "
              "choose with --user)", file=sys.stderr)

    name = os.path.basename(opts.command[0]) if opts.command else f"pid{opts.pid}"
    run_dir = opts.output or default_run_dir(name)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:  # the workload may write its own logs there
            os.chown(run_dir, run_as.uid, run_as.gid)
    except OSError as e:
        raise TraceError(f"cannot create {run_dir}: {e.strerror}") from None
    cal = calibration.get(refresh=opts.recalibrate) if opts.calibrate else A.Calibration()
    stepped = sorted(c for c in (R.phase_component(p, res.engine)
                                 for p in symbols.stepped_phases(res.probes)) if c)
    if opts.calibrate:
        cal = dataclasses.replace(cal, stepped_components=tuple(stepped))

    if opts.sched is None:   # sample mode: kernel accounting, no switch hooks
        opts = dataclasses.replace(opts, sched=opts.mode != "sample"
                                   or bool(opts.offcpu_stacks))
    sample_hz = opts.sample_hz
    if opts.offcpu_stacks is None:   # ~3 us a context switch: full mode only
        opts = dataclasses.replace(opts, offcpu_stacks=opts.mode == "full")
    # user stacks are walked by frame pointer only where every object has
    # them (reading the objects' prologues takes ~0.3 s: only when needed)
    fp_objects = (opts.offcpu_stacks or opts.stacks == "auto") and \
        stacks.choose("auto", stack_objects(opts, res)) == "bpf"
    stack_method = opts.stacks if opts.stacks != "auto" else \
        ("bpf" if fp_objects else "dwarf")
    if opts.offcpu_stacks and not opts.sched:
        raise TraceError("--offcpu-stacks needs the scheduler hooks (drop --no-sched)")
    # sample mode traces no syscall: its blocked time comes from off-CPU sums
    offcpu_kind = ("user-stacks" if fp_objects else "stacks") if opts.offcpu_stacks \
        else "sums" if opts.mode == "sample" and opts.sched else "off"
    if sample_hz is None:
        sample_hz = SAMPLE_MODE_HZ if opts.mode == "sample" else DEFAULT_SAMPLE_HZ \
            if stack_method == "bpf" or res.sampled_split else 0
    attach = symbols.attach_lines(res.probes)
    started_utc = dt.datetime.now(dt.timezone.utc).isoformat()
    mono_to_unix_ns = time.time_ns() - time.monotonic_ns()
    t0 = time.monotonic()
    old_term = signal.signal(signal.SIGTERM, _on_term)
    collector = None
    workload = None
    exit_code = 0
    interrupted = False
    seeded: dict[tuple[int, int], str] = {}
    maps = sampling.MapSnapshots()
    perf = None
    try:
        collector = Collector(run_dir, attach, topo.letters(), opts.ringbuf_kb,
                              sample_hz, verbose=opts.verbose,
                              no_syscalls=opts.mode == "sample",
                              offcpu=offcpu_kind, no_sched=not opts.sched,
                              sample_stacks=stack_method == "bpf",
                              stack_entries=opts.stack_entries,
                              groups_unprobed=res.groups_unprobed,
                              offcpu_stack_every=opts.offcpu_stack_every)
        collector.wait_ready()
        if opts.pid is not None:
            pids = process_tree(opts.pid)
            seeded = _seed_paths(pids)
            for p in pids:
                collector.add_pid(p)
            if sample_hz or offcpu_kind != "off":
                maps.start(opts.pid)
            if stack_method == "dwarf":
                perf = stacks.PerfRecorder(opts.pid, sample_hz or DWARF_HZ,
                                           run_dir / "perf.data")
            try:
                deadline = time.monotonic() + opts.duration if opts.duration else None
                _wait_pid(opts.pid, deadline)
            except (KeyboardInterrupt, _Terminate):
                interrupted = True
        else:
            workload = Workload(opts.command, run_as, run_dir / "command.log",
                                echo=opts.echo, cwd=opts.cwd,
                                extra_env={"WALSCOPE_RUN_DIR": str(run_dir.resolve())})
            collector.add_pid(workload.pid)
            if stack_method == "dwarf":  # perf follows the pid across its exec
                perf = stacks.PerfRecorder(workload.pid, sample_hz or DWARF_HZ,
                                           run_dir / "perf.data")
            workload.release()
            if sample_hz or offcpu_kind != "off":
                maps.start(workload.pid)
            try:
                exit_code = workload.wait()
            except (KeyboardInterrupt, _Terminate):
                interrupted = True
                workload.interrupt()
                try:
                    exit_code = workload.wait()
                except (KeyboardInterrupt, _Terminate):
                    workload.proc.kill()
                    exit_code = workload.wait()
    except (SessionError, stacks.StackError) as e:
        if workload is not None and workload.proc.poll() is None:
            workload.proc.kill()
        raise TraceError(str(e)) from None
    finally:
        if perf is not None:
            perf.stop()
        maps.stop()
        if collector is not None:
            collector.stop()
        signal.signal(signal.SIGTERM, old_term)
    elapsed = time.monotonic() - t0

    summary = analyse(run_dir, cal, seeded, maps.maps, sample_hz, res.engine,
                      res.sampled_split, res.groups_unprobed)
    if stack_method != "off":
        summary["oncpu_stacks"] = fold_stacks(run_dir, stack_method, maps.maps)
        if stack_method == "dwarf" and any(p.spec.ret for p in res.probes):
            # a pending uretprobe replaced the return address on the stack
            summary["oncpu_stacks"]["note"] = (
                "user stacks stop at functions with a return probe pending "
                "(their return address is the uretprobe trampoline); "
                "--mode sample has none")
    if offcpu_kind != "off":
        summary["offcpu_stacks"] = fold_offcpu(run_dir, maps.maps, res.engine, fp_objects,
                                               opts.offcpu_stack_every)
    summary.update({
        "command": opts.command, "pid": opts.pid, "mode": opts.mode, "sched": opts.sched,
        "exit_code": exit_code, "interrupted": interrupted,
        "started_utc": started_utc, "elapsed_s": elapsed,
        "mono_to_unix_ns": mono_to_unix_ns,
        "probes": {"attached": len(attach), "missing": res.missing,
                   "points": sorted({p.name.split('(')[0] for p in res.probes})},
        "environment": {
            "kernel": platform.release(), "machine": platform.machine(),
            "cpu_model": cpu_model(), "cpu_types": topo.letters(),
            "cpu_types_source": topo.source,
            "engine": res.engine, "library": res.object_path,
            "library_version": res.version, "notes": res.notes,
            "user": run_as.name,
        },
    })
    write_outputs(run_dir, summary)
    render_views(run_dir)
    chown_tree(run_dir, run_as)
    if opts.print_table:
        print(A.format_table(summary))
        print(f"run folder: {run_dir}", file=sys.stderr)
    return TraceResult(run_dir, exit_code, summary)


def analyse(run_dir: Path, cal: A.Calibration,
            seeded: dict[tuple[int, int], str] | None = None,
            maps: dict[int, list] | None = None, sample_hz: int = 0,
            engine: str | None = None, split: dict[str, str] | None = None,
            groups_unprobed: bool = False) -> dict[str, Any]:
    """Parquet files from the records; returns the summary (not yet written).
    engine: None reads it from the records (a run recovered after a crash).
    groups_unprobed: leaders are the writes that called the WAL."""
    counters, rep = A.collector_counters(run_dir)
    engine = engine or A.records_engine(run_dir)
    # records -> Parquet a chunk at a time; summaries read columns back
    txlog = run_dir / TXLOG
    log = A.read_txlog(txlog) if engine == "sqlite" and txlog.exists() else None
    empty_w = np.zeros(0, R.struct_dtype("ws_write_rec"))
    samples = sampling.samples_frame(run_dir, maps or {}, engine) if sample_hz else None
    fractions = sampling.split_fractions(samples, split) \
        if split and samples is not None else {}

    def writes_chunks():
        for chunk in R.iter_records(run_dir, "ws_write_rec"):
            w = A.apply_split(A.writes_frame_from(chunk, cal, engine), fractions)
            yield A.label_transactions(w, log) if log is not None else w
    empty = A.writes_frame_from(empty_w, cal, engine)
    if log is not None:
        empty = A.label_transactions(empty, log)
    C.write_chunks(run_dir / "writes.parquet", writes_chunks(), empty)
    opens = A.opens_frame(run_dir, seeded or {})
    named = A.named_frame(run_dir)
    names: dict[int, str] = {}

    def io_chunks():
        for chunk in R.iter_records(run_dir, "ws_io_rec"):
            df = A.io_frame_from(chunk, opens, named)
            names.update(zip(df["tid"], df["thread"]))
            yield df
    C.write_chunks(run_dir / "io.parquet", io_chunks(),
                   A.io_frame_from(np.zeros(0, R.struct_dtype("ws_io_rec")), opens, named))

    def sched_chunks():
        for chunk in R.iter_records(run_dir, "ws_sched_rec"):
            yield A.sched_frame_from(chunk, names)
    C.write_chunks(run_dir / "sched.parquet", sched_chunks(),
                   A.sched_frame_from(np.zeros(0, R.struct_dtype("ws_sched_rec")), names))
    writes = C.ParquetColumns(run_dir / "writes.parquet")
    io = C.ParquetColumns(run_dir / "io.parquet")
    summary = A.summarize(writes, io, counters, cal, engine, groups_unprobed)
    if log is not None:
        summary["by_type"] = A.by_type(writes.frame(
            ["txn_type", "dur_ns", "app_latency_ns"]
            + [c for c in writes.columns if c.endswith("_adj_ns")]))
    threads = threadtime.threads_frame(run_dir)
    threads.to_parquet(run_dir / "threads.parquet", index=False)
    summary["thread_time"] = threadtime.summarize(threads, engine)
    if fractions:
        summary["sampled_split"] = fractions
    if samples is not None:
        samples.to_parquet(run_dir / "samples.parquet", index=False)
        summary["sample_breakdown"] = sampling.breakdown(samples, sample_hz)
        summary["sample_hz"] = sample_hz
    summary["collector"] = {k: rep.get(k) for k in
                            ("records", "bad_records", "write_error", "attach",
                             "cpu_user_s", "cpu_sys_s", "max_rss_kb")}
    summary["partial_run"] = not rep or bool(A.R.torn_bytes(run_dir))
    failed = [a["probe"] for a in rep.get("attach", []) if a.get("err")]
    summary["probes_failed"] = failed
    for f in failed:
        print(f"walscope: could not attach {f}", file=sys.stderr)
    lost = {k: v for k, v in summary["lost_events"].items() if v}
    ring = {k: v for k, v in lost.items() if k not in ("stack", "offcpu")}
    if ring:
        print(f"walscope: WARNING: events lost: {ring}; consider a larger "
              "--ringbuf-mb", file=sys.stderr)
    if lost.keys() - ring.keys():
        print(f"walscope: WARNING: stacks or off-CPU periods not kept (map full): "
              f"{ {k: lost[k] for k in lost.keys() - ring.keys()} }", file=sys.stderr)
    return summary


DWARF_HZ = 99   # perf's dwarf unwinding copies 16 KiB per sample


def stack_objects(opts: TraceOptions, res: symbols.Resolution) -> list[str]:
    """What on-CPU stacks walk through: the program and the database library."""
    objs = [res.object_path] if res.object_path else []
    exe = f"/proc/{opts.pid}/exe" if opts.pid is not None else (
        symbols.shutil.which(opts.command[0]) if opts.command else None)
    if exe and os.path.exists(exe) and symbols.is_elf(exe):
        objs.append(os.path.realpath(exe))
    return objs


def fold_stacks(run_dir: Path, method: str, maps: dict[int, list]) -> dict[str, Any]:
    """oncpu-stacks.folded; returns what summary.json says about it."""
    try:
        if method == "dwarf":
            folded, total, trunc = stacks.fold_perf(run_dir / "perf.data")
        else:
            folded, total, trunc = stacks.fold_bpf(run_dir, maps)
    except (stacks.StackError, OSError, subprocess.SubprocessError) as e:
        print(f"walscope: no on-CPU stacks: {e}", file=sys.stderr)
        return {"method": method, "samples": 0, "truncated": 0, "error": str(e)}
    from viz.folded import fold
    (run_dir / "oncpu-stacks.folded").write_text(fold(folded))
    if total and trunc / total > 0.2:
        print(f"walscope: {trunc} of {total} on-CPU stacks are truncated "
              f"({method} unwinding; see summary.json oncpu_stacks)", file=sys.stderr)
    return {"method": method, "samples": total, "truncated": trunc}


def fold_offcpu(run_dir: Path, maps: dict[int, list], engine: str,
                user_stacks: bool, stack_every: int = 1) -> dict[str, Any]:
    """offcpu-stacks.folded; returns what summary.json says about it."""
    try:
        folded, info = offcpu.fold(run_dir, maps, engine, user_stacks)
        info["stack_every"] = stack_every
    except OSError as e:
        print(f"walscope: no off-CPU stacks: {e}", file=sys.stderr)
        return {"error": str(e)}
    from viz.folded import fold, rounded
    (run_dir / "offcpu-stacks.folded").write_text(fold(rounded(folded)))
    return info


def render_views(run_dir: Path) -> None:
    """Folded stacks, flame graph SVGs and report.html; a failure only warns."""
    from viz import flamegraph, report
    try:
        flamegraph.render_run(run_dir)
    except flamegraph.RenderError as e:
        print(f"walscope: no flame graphs: {e}", file=sys.stderr)
    try:
        report.build(report.find_runs([run_dir]), run_dir / "report.html")
    except report.ReportError as e:
        print(f"walscope: no report: {e}", file=sys.stderr)


def write_outputs(run_dir: Path, summary: dict[str, Any]) -> None:
    tmp = run_dir / "summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    tmp.replace(run_dir / "summary.json")
