"""Planning a traced run: everything decided before the collector starts.

prepare() checks the input and the machine, makes the run folder, finds
the probe points in the objects the command (or -p PID) will run and
decides what to collect (sample rate, on- and off-CPU stacks, scheduler
hooks); collector_options() turns that Plan into walscope-collect's
options.  runners/command/collect.py runs it, runners/command/record.py finishes the folder.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import engines
from collectors import calibration, frame_pointers, log_files
from runfolder import records as R
from collectors import topology
from collectors.symbols import candidate_objects_for_command, candidate_objects_for_pid
from probepoints.elf import is_elf
from probepoints.points import Resolution, SymbolError
from probepoints import modes
from collectors.engine_processes import EngineProcesses
from collectors.objects import ObjectFollower
from runfolder.files import RUNS_DIR, RunFolder
from collectors.session import RunAs, SessionError
from runners.command import defaults


class TraceError(RuntimeError):
    """Bad input or an unusable machine: one line for the user."""


@dataclass
class TraceOptions:
    command: list[str] = field(default_factory=list)
    pid: int | None = None
    # serve -p PID -p PID: several processes, until every one has ended;
    # serve --all (every_engine): each process an engine is found in, as
    # they come (collectors/engine_processes.py)
    pids: tuple[int, ...] = ()
    every_engine: bool = False
    duration: float | None = None
    output: Path | None = None
    mode: str = modes.DEFAULT   # a name in probepoints/modes.py
    cpu_types: str | None = None
    user: str | None = None
    libs: list[str] = field(default_factory=list)
    ringbuf_kb: int = 16 << 10
    sample_hz: int | None = None
    wall_hz: int = defaults.WALL_HZ   # wall sweeps a second (0: none)
    echo: bool = False            # the command's output on the terminal as it runs
    tail_on_failure: bool = True  # ... else its last lines when it fails before a write
    verbose: bool = False         # libbpf's debug output from the collector
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
    log_files: list[str] = field(default_factory=list)  # --log-file GLOBs
    live_counters: bool = False   # the collector's counters.json while it runs (serve)


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


def default_run_dir(name: str) -> Path:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:40]
    return RUNS_DIR / f"{stamp}-{safe}"


def claim_run_dir(run_dir: Path, force: bool) -> bool:
    """Make the run folder, never mixing two runs in one: a folder that
    holds anything is refused, or with force emptied first (never the
    current folder or one above it, nor this checkout).  True when this
    made the folder (discard_run_dir() may then remove it)."""
    made = not run_dir.exists()
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
    return made


def discard_run_dir(run_dir: Path, own_dir: bool) -> None:
    """Remove what this run put in its folder (a run refused or that
    collected nothing: interrupted before its command ran, or no write
    seen), and the folder itself where this run made it (own_dir)."""
    if own_dir:
        shutil.rmtree(run_dir, ignore_errors=True)
        return
    for entry in run_dir.iterdir() if run_dir.is_dir() else []:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def unused_run_dir(path: Path) -> Path:
    """The default run folder, with -2, -3... if a run of the same name
    started in the same second."""
    n, found = 1, path
    while found.exists():
        n += 1
        found = path.with_name(f"{path.name}-{n}")
    return found


def candidate_objects(opts: TraceOptions, run_as: RunAs,
                      targets: EngineProcesses | None = None) -> list[str]:
    """The objects the command (or -p PID, or the processes targets
    found) will run, known before it runs: the program, its libraries,
    --lib; later ones are met as they load."""
    if opts.pid is not None:
        return candidate_objects_for_pid(opts.pid, opts.libs)
    if targets is not None:
        objs: list[str] = []
        for pid in targets.initial():
            try:
                objs += candidate_objects_for_pid(pid, [])
            except SymbolError:     # gone meanwhile
                continue
        return list(dict.fromkeys(objs + [os.path.realpath(p) for p in opts.libs]))
    path = run_as.env()["PATH"]
    exe = _resolve_exe(opts.command[0], path)
    objs = candidate_objects_for_command(exe, opts.libs)
    # wrappers (taskset, nice, env, numactl...) exec the real program:
    # look at later arguments that are executables too
    for arg in opts.command[1:]:
        if arg.startswith("-"):
            continue
        found = shutil.which(arg, path=path) \
            if "/" not in arg else (arg if os.access(arg, os.X_OK) else None)
        if found and os.path.isfile(found) and is_elf(found):
            objs += [o for o in candidate_objects_for_command(found, [])
                     if o not in objs]
    return objs


def _resolve_exe(exe: str, path: str) -> str:
    if "/" not in exe:
        found = shutil.which(exe, path=path)
        if not found:
            raise TraceError(f"command not found: {exe}")
        exe = found
    if not os.path.exists(exe):
        raise TraceError(f"command not found: {exe}")
    return exe


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
    own_dir: bool = False  # this run made run_dir (it was not there)
    # several processes, or all (serve): who is traced, at start and later
    targets: EngineProcesses | None = None
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
    several = bool(opts.pids) or opts.every_engine
    if opts.pid is None and not opts.command and not several:
        raise TraceError("nothing to trace: give a command after -- or -p PID")
    if opts.pid is not None and not os.path.exists(f"/proc/{opts.pid}"):
        raise TraceError(f"no such process: {opts.pid}")
    try:
        log_files.rules(opts.log_files)
    except log_files.LogFileError as e:
        raise TraceError(str(e)) from None
    try:
        topo = topology.resolve(opts.cpu_types)
    except topology.TopologyError as e:
        raise TraceError(str(e)) from None
    for pid in opts.pids:
        if not os.path.exists(f"/proc/{pid}"):
            raise TraceError(f"no such process: {pid}")
    targets = EngineProcesses(opts.pids if opts.pids else None) if several else None
    try:
        run_as = RunAs.lookup(opts.user)
        objs = candidate_objects(opts, run_as, targets)
    except (SessionError, SymbolError) as e:
        raise TraceError(str(e)) from None
    name = os.path.basename(opts.command[0]) if opts.command else f"pid{opts.pid}" \
        if opts.pid is not None else "all" if opts.every_engine else \
        "pid" + "-".join(map(str, opts.pids))
    run_dir = opts.output or unused_run_dir(default_run_dir(name))
    try:
        own_dir = claim_run_dir(run_dir, opts.force)
        if os.geteuid() == 0:  # the workload may write its own logs there
            os.chown(run_dir, run_as.uid, run_as.gid)
    except OSError as e:
        raise TraceError(f"cannot create {run_dir}: {e.strerror}") from None
    try:
        plan = _decide(opts, mode, topo, run_as, objs, run_dir, own_dir)
    except BaseException:   # a refusal or Ctrl-C: nothing was collected
        discard_run_dir(run_dir, own_dir)
        raise
    if targets is not None:   # --all: those an engine was found in; the rest later
        first = targets.first
        held = [p for p in first if not targets.every() or plan.objects.holds_engine(p)]
        targets.take(held, [p for p in first if p not in held])
        plan.targets = targets
    return plan


def _decide(opts: TraceOptions, mode: modes.Mode, topo: topology.Topology, run_as: RunAs,
            objs: list[str], run_dir: Path, own_dir: bool) -> Plan:
    """prepare()'s second half, once the run folder is there: the probe
    points of the objects known now, and what to collect."""
    found = ObjectFollower(mode, opts.stepped_probes, run_dir, cache_dir=calibration.CACHE_DIR)
    attach = found.inspect_start(objs)
    if opts.log_files and not found.found and objs:
        # no engine: the logs the user named give the rows
        attach += found.from_log_files(objs[0])
    res = found.merged()
    for m in res.missing:
        print(f"walscope: probe point missing in {res.object_path}: {m}", file=sys.stderr)
    for n in res.notes:
        print(f"walscope: {res.object_path}: {n}", file=sys.stderr)
    note = run_as_note(run_as, opts.pid, os.environ.get("SUDO_USER")) \
        if opts.command else None
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
                offcpu_kind, fp_objects, own_dir)


def stack_objects(opts: TraceOptions, res: Resolution) -> list[str]:
    """What on-CPU stacks walk through: the program and the database library."""
    objs = [res.object_path] if res.object_path else []
    exe = f"/proc/{opts.pid}/exe" if opts.pid is not None else (
        shutil.which(opts.command[0]) if opts.command else None)
    if exe and os.path.exists(exe) and is_elf(exe):
        objs.append(os.path.realpath(exe))
    return objs


def collector_options(plan: Plan) -> dict[str, Any]:
    """walscope-collect's options for this plan (see its --help)."""
    opts, mode = plan.opts, plan.mode
    return {
        "cpu-types": plan.topo.letters(),
        "ringbuf-kb": opts.ringbuf_kb,
        "sample-hz": plan.sample_hz,
        # the untouched lens reads between windows: no windows, no sweeps
        "wall-hz": opts.wall_hz if mode.windowed else 0,
        # an engine's own threads starting to write are no new phase
        "background": ",".join(engines.background_prefixes()) or None,
        # the engines whose rows have a leader and followers (the budget
        # counts followers)
        # the logs the user named (--log-file): WALs to every engine
        "log-files": log_files.option(opts.log_files),
        "live-counters": opts.live_counters,
        "grouped-engines": ",".join(
            str(R.Layout.build().enum_values("ws_engine")[e.ws_engine])
            for e in engines.ENGINES if e.grouped) or None,
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
