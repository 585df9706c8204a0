"""Collecting a traced run: the collector and the workload (or -p PID)
running together until the workload ends, Ctrl-C or SIGTERM comes or
--duration passes; the objects the processes load followed as they come,
memory maps and perf kept for stacks, and a warning while it runs when a
mode with probes on every write meets a fast workload.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from collectors import perf_record, procfs
from runfolder import records as R
from collectors.session import Collector, SessionError, Workload, process_tree
from runners.command import defaults
from runners.command.plan import Plan, TraceError, collector_options


def _wait_pid(pid: int, deadline: float | None, stop: Any = lambda: False) -> None:
    while not stop() and (deadline is None or time.monotonic() < deadline):
        st = procfs.proc_stat(pid)
        if st is None or st.state == "Z":     # gone, or ended and not reaped yet
            return
        time.sleep(0.1)


class Interrupts:
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

    def install(self) -> "Interrupts":
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


@dataclass
class Collected:
    exit_code: int = 0           # the command's own
    ran: bool = False            # the command ran (or -p PID was traced)
    interrupted: bool = False
    signum: int = 0              # what interrupted it (SIGINT, SIGTERM)
    maps: procfs.MapSnapshots = field(default_factory=procfs.MapSnapshots)
    perf: perf_record.PerfRecorder | None = None


def collect(plan: Plan, on_tracing: Callable[[], None] | None = None,
            stop: Interrupts | None = None,
            on_process: Callable[[int, str], None] | None = None) -> Collected:
    """Run the collector with the workload (or -p PID) until it ends, is
    interrupted (Ctrl-C, SIGTERM) or --duration passes; the collector is
    stopped last, whatever happened.  on_tracing, if given, is called once
    the processes are traced (-p: attached; a command: released), and
    on_process(pid, name) as each of several is (serve -p -p, --all).  stop:
    the caller's interrupts, installed before (a signal that came while it
    prepared counts); by default collect's own."""
    opts, got = plan.opts, Collected()
    collector = workload = None
    own = stop is None
    stop = Interrupts().install() if stop is None else stop
    try:
        collector = Collector(plan.run_dir, plan.attach, collector_options(plan),
                              on_object=plan.objects.on_object)
        collector.wait_ready()
        if plan.mode.follows_objects:   # uprobes for what the processes load later
            plan.objects.follow(collector)
        if opts.pid is not None:
            got.ran = True
            pids = add_tree(collector, opts.pid)
            procfs.save_open_files(plan.run_dir, procfs.open_files(pids))
            if on_tracing is not None:
                on_tracing()
            start_watching(plan, got, opts.pid)
            watch_cost(plan)
            deadline = time.monotonic() + opts.duration if opts.duration else None
            _wait_pid(opts.pid, deadline, stop=lambda: bool(stop))
        elif plan.targets is not None:
            got.ran = True
            follow_targets(plan, got, collector, on_tracing, on_process, stop)
        elif not stop:   # (a Ctrl-C while the collector started: not run)
            workload = Workload(opts.command, plan.run_as, plan.folder.command_log,
                                echo=opts.echo, cwd=opts.cwd,
                                extra_env={"WALSCOPE_RUN_DIR": str(plan.run_dir.resolve())})
            stop.workload = workload
            got.ran = True
            if stop:     # came before the handler knew the workload
                workload.interrupt()
            collector.add_pid(workload.pid)
            if plan.stack_method == "dwarf":  # perf follows the pid across its exec
                got.perf = perf_record.PerfRecorder(
                    workload.pid, plan.sample_hz or defaults.DWARF_HZ,
                    plan.folder.perf_data)
            workload.release()
            if on_tracing is not None:
                on_tracing()
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
        plan.objects.save_cache()
        if own:
            stop.restore()
        got.interrupted, got.signum = bool(stop), stop.signum
    return got


# how often the processes of several (serve -p -p, --all) are looked at
TARGETS_POLL_S = 0.2


def follow_targets(plan: Plan, got: Collected, collector: Collector,
                   on_tracing: Callable[[], None] | None,
                   on_process: Callable[[int, str], None] | None, stop: Interrupts) -> None:
    """Several processes (serve -p PID -p PID) or all those an engine is
    found in (serve --all): each traced with its children, the ones met
    later as they are found, until every one given has ended (--all: until
    stopped) or --duration passes.  on_tracing() once the first are
    traced; on_process(pid, name) as each is."""
    targets = plan.targets
    assert targets is not None
    if targets.every() and not plan.mode.follows_objects:
        raise TraceError(f"--mode {plan.opts.mode} does not follow objects: it cannot "
                         "find engines in processes met later")
    deadline = time.monotonic() + plan.opts.duration if plan.opts.duration else None
    files: dict[int, dict[int, str]] = {}

    def trace(roots: list[int]) -> None:
        for root in roots:
            try:
                pids = add_tree(collector, root)
            except SessionError as e:   # (a full process table): the others go on
                print(f"walscope: pid {root} not traced: {e}", file=sys.stderr)
                continue
            files.update(procfs.open_files(pids))
            start_watching(plan, got, root)
            if on_process is not None:
                st = procfs.proc_stat(root)
                on_process(root, st.comm if st else str(root))
        if roots:
            procfs.save_open_files(plan.run_dir, files)

    trace([p for p in targets.first if p in targets.traced])
    if on_tracing is not None:
        on_tracing()
    watch_cost(plan)
    said: set[str] = set()
    while not stop and not targets.done() and (
            deadline is None or time.monotonic() < deadline):
        try:
            found = targets.more(plan.objects.inspect_process)
        except (OSError, SessionError) as e:    # this scan's: the next one may do
            found = []
            if str(e) not in said:
                said.add(str(e))
                print(f"walscope: looking for engines: {e}", file=sys.stderr)
        targets.take(found)
        trace(found)
        time.sleep(TARGETS_POLL_S)


def add_tree(collector: Collector, root: int) -> list[int]:
    """root and its descendants traced (one that ended meanwhile skipped;
    walscope's own processes never: a root that started walscope, a shell
    or a test runner, holds it in its tree, and the collector tracing its
    own writes feeds on itself), the tree listed again until no child was
    forked unseen between a listing and its parent's tracing (BPF follows
    forks only from then)."""
    done = set(process_tree(os.getpid()))     # (walscope's: never added)
    added: list[int] = []
    for _ in range(ADD_TREE_ROUNDS):
        todo = [p for p in process_tree(root) if p not in done]
        if not todo:
            break
        for p in todo:
            try:
                collector.add_pid(p)
            except SessionError:
                if os.path.exists(f"/proc/{p}"):
                    raise
            done.add(p)
            added.append(p)
    return added


ADD_TREE_ROUNDS = 3     # (a server forking all the time: children met later are
#                         traced through their parent, the fork hook)


def start_watching(plan: Plan, got: Collected, pid: int) -> None:
    """-p PID: memory maps for symbols, perf for dwarf stacks."""
    if plan.sample_hz or plan.offcpu_kind != "off":
        got.maps.start(pid)
    if plan.stack_method == "dwarf" and got.perf is None:   # (the first of several)
        got.perf = perf_record.PerfRecorder(pid, plan.sample_hz or defaults.DWARF_HZ,
                                            plan.folder.perf_data)


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
    size = R.Layout.build().struct_dtype("ws_write_rec").itemsize   # the collector's

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
