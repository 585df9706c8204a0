"""One traced run: resolve probes, collect, analyse, render.

trace_wal.py and the runners both go through ``trace()``, the one place
that drives every layer: collectors (live, root) write the raw records and
what analysing them needs (run.json, calibration.json, symbols.json,
fds.json, perf-script.txt); analysis turns the folder into Parquet and
summary.json; viz renders flame graphs and report.html.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import engines
from analysis import dataset
from analysis import run as analysis
from analysis.table import format_table
from collectors import calibration, frame_pointers, perf_record, procfs, records as R
from collectors import modes, symbolize, symbols, topology
from collectors.objects import ObjectFollower
from collectors.run_folder import RunFolder
from collectors.session import (Collector, RunAs, SessionError, Workload,
                                chown_tree, process_tree)
from runners import defaults


class TraceError(RuntimeError):
    """Bad input or an unusable machine: one line for the user."""


@dataclass
class TraceOptions:
    command: list[str] = field(default_factory=list)
    pid: int | None = None
    duration: float | None = None
    output: Path | None = None
    mode: str = modes.DEFAULT   # a name in collectors/modes.py
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
    #                                    None: the mode's default (a mode
    #                                    without syscalls sums off-CPU time
    #                                    without them)
    offcpu_stack_every: int = defaults.OFFCPU_STACK_EVERY  # 1 in N periods walked
    sched: bool | None = None     # programs on sched_switch/sched_wakeup;
    #                               None: the mode's default
    stepped_probes: bool = False  # keep probe sites the kernel single-steps
    allow_empty: bool = False     # a run with no engine call is not an error
    force: bool = False           # empty a non-empty output folder (else refuse)
    window_ms: int = defaults.WINDOW_MS       # --mode window/budget: a window's length
    window_duty: float = defaults.WINDOW_DUTY  # --mode window: the share of time in one
    budget: float = defaults.BUDGET           # --mode budget: the throughput it may cost
    dataset: Path | None = None   # also export the run into this dataset
    host: str | None = None       # ... under this host name


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


def claim_run_dir(run_dir: Path, force: bool) -> None:
    """Make the run folder, never mixing two runs in one: a folder that
    holds anything is refused, or with force emptied first (never the
    current folder or one above it, nor this checkout)."""
    if run_dir.exists() and not run_dir.is_dir():
        raise TraceError(f"{run_dir} exists and is not a folder")
    held = sorted(run_dir.iterdir()) if run_dir.is_dir() else []
    if held and not force:
        more = f" and {len(held) - 1} more" if len(held) > 1 else ""
        raise TraceError(f"{run_dir} is not empty (it holds {held[0].name}{more}): give "
                         "a new folder, or --force to empty it first")
    if held:
        real = run_dir.resolve()
        if real == Path(os.getcwd()).resolve() or real in Path(os.getcwd()).resolve().parents \
                or real == R.ROOT.resolve() or real in R.ROOT.resolve().parents:
            raise TraceError(f"--force would empty {run_dir}, which holds the current "
                             "folder or walscope: give a run folder")
        for entry in held:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    run_dir.mkdir(parents=True, exist_ok=True)


def unused_run_dir(path: Path) -> Path:
    """The default run folder, with -2, -3... if a run of the same name
    started in the same second."""
    n, found = 1, path
    while found.exists():
        n += 1
        found = path.with_name(f"{path.name}-{n}")
    return found


def candidate_objects(opts: TraceOptions, run_as: RunAs) -> list[str]:
    """The objects the command (or -p PID) will run, known before it runs:
    the program, its libraries, --lib; later ones are met as they load."""
    if opts.pid is not None:
        return symbols.candidate_objects_for_pid(opts.pid, opts.libs)
    path = run_as.env()["PATH"]
    exe = _resolve_exe(opts.command[0], path)
    objs = symbols.candidate_objects_for_command(exe, opts.libs)
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
    return objs


def _resolve_exe(exe: str, path: str) -> str:
    if "/" not in exe:
        found = symbols.shutil.which(exe, path=path)
        if not found:
            raise TraceError(f"command not found: {exe}")
        exe = found
    if not os.path.exists(exe):
        raise TraceError(f"command not found: {exe}")
    return exe


def _wait_pid(pid: int, deadline: float | None, stop: Any = lambda: False) -> None:
    while os.path.exists(f"/proc/{pid}") and not stop() \
            and (deadline is None or time.monotonic() < deadline):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return
        except OSError:
            return
        time.sleep(0.1)


class _Interrupts:
    """SIGINT and SIGTERM while the workload runs: noted and passed on to
    it (SIGINT; a second one kills it), never raised as an exception.  An
    exception could land between waitpid() reaping the workload and Popen
    keeping its status, and the next wait() would find no child and say 0:
    Ctrl-C then exited 0 in 2 of 6 tries."""

    def __init__(self) -> None:
        self.signum = 0
        self.count = 0
        self.workload: Workload | None = None
        self.old: dict[int, Any] = {}

    def install(self) -> "_Interrupts":
        for sig in (signal.SIGINT, signal.SIGTERM):
            self.old[sig] = signal.signal(sig, self._on_signal)
        return self

    def restore(self) -> None:
        for sig, old in self.old.items():
            signal.signal(sig, old)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.signum = self.signum or signum
        self.count += 1
        w = self.workload
        if w is None:
            return
        if self.count == 1:
            w.interrupt()
        elif w.proc.poll() is None:
            w.proc.kill()

    def __bool__(self) -> bool:
        return bool(self.signum)


# trace_wal.py's exit status when Ctrl-C (or SIGTERM) stopped the command
# it ran: 128 + the signal's number, as a shell says for a command it killed
INTERRUPTED = 128 + signal.SIGINT


@dataclass
class Plan:
    """Everything decided before the collector starts."""
    opts: TraceOptions
    objects: ObjectFollower     # what was found, and finds the rest
    attach: list[str]          # uprobes found before the run
    run_as: RunAs
    topo: topology.Topology
    run_dir: Path
    sample_hz: int
    stack_method: str      # on-CPU stacks: off, bpf, dwarf
    offcpu_kind: str       # off, sums, stacks, user-stacks
    fp_objects: bool       # every probed object keeps frame pointers
    started_utc: str = field(
        default_factory=lambda: dt.datetime.now(dt.timezone.utc).isoformat())
    mono_to_unix_ns: int = field(
        default_factory=lambda: time.time_ns() - time.monotonic_ns())

    @property
    def mode(self) -> modes.Mode:
        """The mode's row (prepare() checked the name)."""
        return modes.MODES[self.opts.mode]

    @property
    def folder(self) -> RunFolder:
        """The run folder's files."""
        return RunFolder(self.run_dir)


@dataclass
class Collected:
    exit_code: int = 0
    interrupted: bool = False
    signum: int = 0              # what interrupted it (SIGINT, SIGTERM)
    maps: procfs.MapSnapshots = field(default_factory=procfs.MapSnapshots)
    perf: perf_record.PerfRecorder | None = None


def trace(opts: TraceOptions) -> TraceResult:
    plan = prepare(opts)
    write_calibration(plan)
    write_run_info(plan, started=True)
    R.write_layout(plan.run_dir)
    t0 = time.monotonic()
    got = collect(plan)
    elapsed = time.monotonic() - t0
    try:
        finish_collection(plan, got, elapsed)
        summary = analysis.analyse(plan.run_dir)
        render_views(plan.run_dir)
    except analysis.AnalysisError as e:
        raise TraceError(str(e)) from None
    except KeyboardInterrupt:
        chown_tree(plan.run_dir, plan.run_as)
        print(f"walscope: interrupted while analysing: the records are kept in "
              f"{plan.run_dir} (`walscope analyse {plan.run_dir}` analyses them)",
              file=sys.stderr)
        return TraceResult(plan.run_dir, INTERRUPTED, {})
    if opts.dataset is not None:
        try:
            dataset.export(plan.run_dir, opts.dataset, host=opts.host)
        except (dataset.DatasetError, OSError) as e:
            print(f"walscope: not exported to {opts.dataset}: {e}", file=sys.stderr)
    chown_tree(plan.run_dir, plan.run_as)
    if opts.print_table:
        print(format_table(summary))
    if got.interrupted:
        print(f"walscope: interrupted ({signal.Signals(got.signum).name}): what was "
              f"traced until then is analysed and kept in {plan.run_dir}", file=sys.stderr)
    elif opts.print_table:
        print(f"run folder: {plan.run_dir}", file=sys.stderr)
    warn_cost(plan.run_dir, summary)
    exit_code = got.exit_code
    if got.interrupted and opts.pid is None:   # (-p: Ctrl-C is how a run ends)
        exit_code = 128 + got.signum
    win = summary.get("windows") or {}
    if plan.mode.duty_windows and summary.get("engines_found") \
            and not summary["writes"]["count"]:
        print(f"walscope: no write began inside a window ({win.get('count', 0)} windows of "
              f"{opts.window_ms} ms); the table has samples only: for per-write rows run "
              "longer, raise --window-duty, or use the default mode", file=sys.stderr)
    if is_empty(summary) and not opts.allow_empty and not got.interrupted:
        inspected = len(summary.get("objects", []))
        print(f"walscope: no {engines.titles()} write or transaction seen "
              f"(engines found: {', '.join(summary.get('engines_found', [])) or 'none'}; "
              f"{inspected} objects inspected, see summary.json objects); "
              "--allow-empty accepts such a run", file=sys.stderr)
        exit_code = exit_code or EMPTY_RUN
    return TraceResult(plan.run_dir, exit_code, summary)


EMPTY_RUN = 3   # trace_wal.py's exit status for a run that saw no engine call
# above this many traced writes a second, full mode's ~11 probe hits a write
# (1-2 us each here) take over a fifth of every second from the workload
# (an unsynced 1-thread db_bench: ~36,000/s traced, 3x slower)
COSTLY_WRITES_PER_S = 15_000


# how long the live check of a costly mode watches the workload first
COST_WATCH_S = 1.0


def watch_cost(plan: Plan) -> None:
    """In a mode with probes on every write (full, writes), warn while the
    workload runs when its first second already holds more writes than such
    a mode can trace cheaply (the records on disk count them; the collector
    writes them as they come)."""
    if not plan.mode.every_write:
        return
    path = plan.folder.records("ws_write_rec")
    size = R.struct_dtype("ws_write_rec").itemsize

    def check() -> None:
        t0 = time.monotonic()
        time.sleep(COST_WATCH_S)
        try:
            n = path.stat().st_size // size
        except OSError:
            return
        rate = n / (time.monotonic() - t0)
        if rate > COSTLY_WRITES_PER_S:
            print(f"walscope: ~{rate:,.0f} writes/s in the first second, each through "
                  f"{plan.opts.mode} mode's probes: this run will be several times slower "
                  "than untraced; the default mode (budget) records every write only "
                  "while that is cheap, and windows within its budget when not",
                  file=sys.stderr)
    threading.Thread(target=check, name="walscope-cost-watch", daemon=True).start()


def warn_cost(run_dir: Path, summary: dict[str, Any]) -> None:
    """Say so when the mode's probes were on every write of a fast workload."""
    n = summary["writes"]["count"]
    mode = modes.get(summary.get("mode"))
    if mode is None or not mode.every_write or n < 2:
        return
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    starts = pq.read_table(RunFolder(run_dir).writes_parquet, columns=["start_ns"])["start_ns"]
    span = (pc.max(starts).as_py() - pc.min(starts).as_py()) / 1e9
    rate = n / span if span > 0 else 0
    if rate > COSTLY_WRITES_PER_S:
        per = summary["probe_hits"]["per_write"]
        print(f"walscope: {rate:,.0f} writes/s with {per:.0f} probe hits each: this mode "
              "slowed the workload down several times (its components are compensated, "
              "its throughput is not the workload's); the default mode (budget) keeps "
              "the cost within its budget, --mode sample costs nearly nothing",
              file=sys.stderr)


def is_empty(summary: dict[str, Any]) -> bool:
    """No write or transaction of any engine in a mode that records them
    (a mode without probes, sample, records none: it is empty when no
    engine was found)."""
    mode = modes.get(summary.get("mode"))
    if mode is not None and not mode.records_writes:
        return not summary.get("engines_found")
    counts = [summary["writes"]["count"]] + [
        s["writes"]["count"] for s in summary.get("by_engine", {}).values()]
    return not any(counts)


def run_as_note(run_as: RunAs, pid: int | None, sudo_user: str | None) -> str | None:
    """A line when the command will run as root though nobody asked for it
    by name (--user): why root was chosen."""
    if run_as.uid != 0 or pid is not None or run_as.explicit_root:
        return None
    why = f"SUDO_USER is {sudo_user}" if sudo_user else \
        "no SUDO_USER: not started through sudo"
    return f"running the workload as root ({why}; choose with --user)"


def prepare(opts: TraceOptions) -> Plan:
    """Check the input and the machine, find the probe points, make the run
    folder and decide what to collect."""
    check_privileges()
    check_kernel()
    mode = modes.get(opts.mode)
    if mode is None:
        raise TraceError(f"unknown mode {opts.mode!r} (choose from {', '.join(modes.MODES)})")
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
        objs = candidate_objects(opts, run_as)
    except (SessionError, symbols.SymbolError) as e:
        raise TraceError(str(e)) from None
    name = os.path.basename(opts.command[0]) if opts.command else f"pid{opts.pid}"
    run_dir = opts.output or unused_run_dir(default_run_dir(name))
    try:
        claim_run_dir(run_dir, opts.force)
        if os.geteuid() == 0:  # the workload may write its own logs there
            os.chown(run_dir, run_as.uid, run_as.gid)
    except OSError as e:
        raise TraceError(f"cannot create {run_dir}: {e.strerror}") from None
    found = ObjectFollower(mode, opts.stepped_probes, run_dir)
    attach = found.inspect_start(objs)
    res = found.merged()
    for m in res.missing:
        print(f"walscope: probe point missing in {res.object_path}: {m}", file=sys.stderr)
    for n in res.notes:
        print(f"walscope: {res.object_path}: {n}", file=sys.stderr)
    note = run_as_note(run_as, opts.pid, os.environ.get("SUDO_USER"))
    if note:
        print(f"walscope: {note}", file=sys.stderr)

    if opts.sched is None:   # sample mode: kernel accounting, no switch hooks
        opts = dataclasses.replace(opts, sched=mode.sched or bool(opts.offcpu_stacks))
    if opts.offcpu_stacks is None:   # ~3 us a context switch: full mode only
        opts = dataclasses.replace(opts, offcpu_stacks=mode.offcpu_stacks)
    if opts.offcpu_stacks and not opts.sched:
        raise TraceError("--offcpu-stacks needs the scheduler hooks (drop --no-sched)")
    # user stacks are walked by frame pointer only where every object has
    # them (reading the objects' prologues takes ~0.3 s: only when needed)
    fp_objects = bool(opts.offcpu_stacks or opts.stacks == "auto") and \
        frame_pointers.choose("auto", stack_objects(opts, res)) == "bpf"
    stack_method = opts.stacks if opts.stacks != "auto" else \
        ("bpf" if fp_objects else "dwarf")
    # a mode that traces no syscall (sample): blocked time from off-CPU sums
    offcpu_kind = ("user-stacks" if fp_objects else "stacks") if opts.offcpu_stacks \
        else "sums" if not mode.syscalls and opts.sched else "off"
    sample_hz = opts.sample_hz
    if sample_hz is None:   # sampled splits; a RocksDB met later may need them
        sample_hz = mode.sample_hz if mode.sample_hz is not None else \
            defaults.SAMPLE_HZ if stack_method == "bpf" or res.sampled_split \
            or not found.found else 0
    return Plan(opts, found, attach, run_as, topo, run_dir, sample_hz, stack_method,
                offcpu_kind, fp_objects)


def write_calibration(plan: Plan) -> None:
    """calibration.json: this machine's probe costs, and which components
    had probes at single-stepped sites (known once every object is in)."""
    if not plan.opts.calibrate:
        return
    try:
        cal = calibration.get(refresh=plan.opts.recalibrate)
    except calibration.CalibrationError as e:
        raise TraceError(f"calibration: {e}") from None
    engine = plan.objects.merged().engine
    cal["stepped_components"] = sorted(
        c for c in (R.phase_component(p, engine) for p in plan.objects.stepped) if c)
    plan.folder.calibration_json.write_text(json.dumps(cal, indent=1))


def collect(plan: Plan) -> Collected:
    """Run the collector with the workload (or -p PID) until it ends, is
    interrupted (Ctrl-C, SIGTERM) or --duration passes; the collector is
    stopped last, whatever happened."""
    opts, got = plan.opts, Collected()
    collector = workload = None
    stop = _Interrupts().install()
    try:
        collector = Collector(plan.run_dir, plan.attach, collector_options(plan),
                              on_object=plan.objects.on_object)
        collector.wait_ready()
        if plan.mode.follows_objects:   # uprobes for what the processes load later
            plan.objects.follow(collector)
        if opts.pid is not None:
            pids = process_tree(opts.pid)
            procfs.save_open_files(plan.run_dir, procfs.open_files(pids))
            for p in pids:
                collector.add_pid(p)
            start_watching(plan, got, opts.pid)
            watch_cost(plan)
            deadline = time.monotonic() + opts.duration if opts.duration else None
            _wait_pid(opts.pid, deadline, stop=lambda: bool(stop))
        elif not stop:   # (a Ctrl-C while the collector started: not run)
            workload = Workload(opts.command, plan.run_as, plan.folder.command_log,
                                echo=opts.echo, cwd=opts.cwd,
                                extra_env={"WALSCOPE_RUN_DIR": str(plan.run_dir.resolve())})
            stop.workload = workload
            if stop:     # came before the handler knew the workload
                workload.interrupt()
            collector.add_pid(workload.pid)
            if plan.stack_method == "dwarf":  # perf follows the pid across its exec
                got.perf = perf_record.PerfRecorder(
                    workload.pid, plan.sample_hz or defaults.DWARF_HZ,
                    plan.folder.perf_data)
            workload.release()
            watch_cost(plan)
            if plan.sample_hz or plan.offcpu_kind != "off":
                got.maps.start(workload.pid)
            got.exit_code = workload.wait()
    except (SessionError, perf_record.StackError) as e:
        if workload is not None and workload.proc.poll() is None:
            workload.proc.kill()
        raise TraceError(str(e)) from None
    finally:
        if got.perf is not None:
            got.perf.stop()
        got.maps.stop()
        plan.objects.close()   # what is queued is handled, every process let go
        if collector is not None:
            collector.stop()
        stop.restore()
        got.interrupted, got.signum = bool(stop), stop.signum
    return got


def collector_options(plan: Plan) -> dict[str, Any]:
    """walscope-collect's options for this plan (see its --help)."""
    opts, mode = plan.opts, plan.mode
    return {
        "cpu-types": plan.topo.letters(),
        "ringbuf-kb": opts.ringbuf_kb,
        "sample-hz": plan.sample_hz,
        # sample mode traces no syscall: the syscall in progress comes
        # from the task's saved registers
        "no-syscalls": not mode.syscalls,
        f"offcpu-{plan.offcpu_kind}": plan.offcpu_kind != "off",
        "offcpu-stack-every": opts.offcpu_stack_every if opts.offcpu_stack_every > 1
        else None,
        "no-sched": not opts.sched,
        # RocksDB's leaders are the writes that call the WAL (--mode writes)
        "groups-unprobed": mode.groups_unprobed,
        # hold each process at a new object until its probes are in
        "follow-objects": mode.follows_objects,
        "sample-stacks": plan.stack_method == "bpf",
        "stack-entries": opts.stack_entries or None,
        "verbose": opts.verbose,
        # --mode window and budget: the full probe set, but only inside
        # windows; budget: every write while that is cheap (one window)
        "window-ms": opts.window_ms if mode.windowed else None,
        "window-gap-ms": max(1, round(opts.window_ms * (1 - opts.window_duty)
                                      / opts.window_duty))
        if mode.duty_windows else None,
        "budget": opts.budget if mode.budget_windows else None,
        "hit-ns": ",".join(f"{v:.0f}" for v in hit_costs(plan))
        if mode.budget_windows else None,
    }


def hit_costs(plan: Plan) -> tuple[float, ...]:
    """What a probe pair and an entry-only probe cost on this machine, warm
    and cold, and a traced and an untraced syscall (the run's calibration;
    the cached one with --no-calibrate): the budget charges each write its
    hits."""
    try:
        cal = json.loads(plan.folder.calibration_json.read_text())
    except (OSError, ValueError):
        try:
            cal = calibration.get(refresh=False)
        except calibration.CalibrationError:
            cal = {}
    warm, cold = cal.get("warm") or cal, cal.get("cold") or cal
    return (float(warm.get("pair_ns", 2000)), float(cold.get("pair_ns", 2000)),
            float(warm.get("uprobe_ns", 1000)), float(cold.get("uprobe_ns", 1000)),
            float(cal.get("sys_ns", 400)), max(float(cal.get("sys_ign_ns", 300)), 0.0),
            float(cal.get("uprobe_ns", 1000)), float(cal.get("uretprobe_ns", 1000)),
            float(cal.get("tracepoint_ns", 400)))


def start_watching(plan: Plan, got: Collected, pid: int) -> None:
    """-p PID: memory maps for symbols, perf for dwarf stacks."""
    if plan.sample_hz or plan.offcpu_kind != "off":
        got.maps.start(pid)
    if plan.stack_method == "dwarf":
        got.perf = perf_record.PerfRecorder(pid, plan.sample_hz or defaults.DWARF_HZ,
                                            plan.folder.perf_data)


def finish_collection(plan: Plan, got: Collected, elapsed: float) -> None:
    """What the analysis needs from the live machine: symbols resolved while
    the objects and /proc/kallsyms are at hand, perf's stacks as text, the
    stepped sites of objects met during the run, and how the run ended
    (run.json)."""
    error = None
    write_calibration(plan)
    if plan.sample_hz or plan.offcpu_kind != "off":
        got.maps.save(plan.run_dir)
        symbolize.write_symbols(plan.run_dir, got.maps.maps)
    if plan.stack_method == "dwarf":
        try:
            perf_record.script(plan.folder.perf_data, plan.folder.perf_script_txt)
        except (perf_record.StackError, OSError) as e:
            error = str(e)
    write_run_info(plan, started=False, exit_code=got.exit_code,
                   interrupted=got.interrupted, elapsed=elapsed, stack_error=error)


def write_run_info(plan: Plan, started: bool, exit_code: int = 0,
                   interrupted: bool = False, elapsed: float = 0.0,
                   stack_error: str | None = None) -> None:
    """run.json: how the run was traced, for the analysis.  Written when
    tracing starts (a tracer that dies leaves it without "end") and again
    when it ends."""
    opts, res = plan.opts, plan.objects.merged()
    info: dict[str, Any] = {
        "engine": res.engine,
        "engines": plan.objects.engines(),
        "sample_hz": plan.sample_hz,
        "sampled_split": res.sampled_split,
        "groups_unprobed": res.groups_unprobed,
        "oncpu_stacks": plan.stack_method,
        "offcpu": plan.offcpu_kind,
        "offcpu_stack_every": opts.offcpu_stack_every,
        "window": {"ms": opts.window_ms, "duty": opts.window_duty}
        if plan.mode.duty_windows else
        {"ms": opts.window_ms, "budget": opts.budget} if plan.mode.budget_windows else None,
        # summary.json keys the analysis copies as they are
        "summary": {
            "command": opts.command, "pid": opts.pid, "mode": opts.mode,
            "sched": opts.sched, "exit_code": exit_code, "interrupted": interrupted,
            "started_utc": plan.started_utc, "elapsed_s": elapsed,
            "mono_to_unix_ns": plan.mono_to_unix_ns,
            "probes": {"attached": len(symbols.attach_lines(res.probes)),
                       "missing": res.missing,
                       "points": sorted({p.name.split('(')[0] for p in res.probes})},
            "environment": {
                "kernel": platform.release(), "machine": platform.machine(),
                "cpu_model": cpu_model(), "cpu_types": plan.topo.letters(),
                "cpu_types_source": plan.topo.source,
                "engine": res.engine, "library": res.object_path,
                "library_version": res.version, "notes": res.notes,
                "user": plan.run_as.name, "host": socket.gethostname(),
                "walscope_commit": walscope_commit(),
            },
            "engines_found": plan.objects.engines(),
            "objects": plan.objects.report(),
        },
    }
    if plan.stack_method == "dwarf" and any(p.spec.ret for p in res.probes):
        # a pending uretprobe replaced the return address on the stack
        info["oncpu_stacks_note"] = (
            "user stacks stop at functions with a return probe pending "
            "(their return address is the uretprobe trampoline); "
            "--mode sample has none")
    if stack_error:
        info["oncpu_stacks_error"] = stack_error
    if not started:
        info["end"] = dt.datetime.now(dt.timezone.utc).isoformat()
    dst = plan.folder.run_json
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.write_text(json.dumps(info, indent=1) + "\n")
    tmp.replace(dst)


def walscope_commit() -> str:
    """The checkout's commit (what a dataset's files say wrote them)."""
    try:
        p = subprocess.run(["git", "-C", str(R.ROOT), "rev-parse", "--short=12", "HEAD"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return p.stdout.strip() if p.returncode == 0 else "unknown"


def stack_objects(opts: TraceOptions, res: symbols.Resolution) -> list[str]:
    """What on-CPU stacks walk through: the program and the database library."""
    objs = [res.object_path] if res.object_path else []
    exe = f"/proc/{opts.pid}/exe" if opts.pid is not None else (
        symbols.shutil.which(opts.command[0]) if opts.command else None)
    if exe and os.path.exists(exe) and symbols.is_elf(exe):
        objs.append(os.path.realpath(exe))
    return objs


def render_views(run_dir: Path) -> None:
    """Flame graph SVGs and report.html; a failure only warns."""
    from viz import flamegraph, report
    try:
        flamegraph.render_run(run_dir)
    except flamegraph.RenderError as e:
        print(f"walscope: no flame graphs: {e}", file=sys.stderr)
    try:
        report.build(report.find_runs([run_dir]), RunFolder(run_dir).report_html)
    except report.ReportError as e:
        print(f"walscope: no report: {e}", file=sys.stderr)
