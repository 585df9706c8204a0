"""Recording a traced run: the run folder's own files and how the run ends.

Before the collector starts: calibration.json, run.json (without "end")
and the records' layout.  After it stopped: symbols and perf's stacks
while the machine is at hand, run.json again, the analysis (Parquet,
summary.json), the views (flame graphs, report.html), the dataset export,
the printed table, the warnings, and trace_wal.py's exit status.
"""
from __future__ import annotations

import datetime as dt
import json
import platform
import re
import signal
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engines
from analysis import dataset
from analysis import run as analysis
from analysis.table import format_table
from collectors import calibration, perf_record
from probepoints import modes
from runfolder import records as R
from collectors import symbolize
from collectors.attach_lines import attach_lines
from runfolder.files import RunFolder
from collectors.session import chown_tree
from runners.command.collect import COSTLY_WRITES_PER_S, Collected
from runners.command.plan import Plan, TraceError, discard_run_dir
from runners.command.version import walscope_commit


@dataclass
class TraceResult:
    run_dir: Path
    exit_code: int
    summary: dict[str, Any]


# trace_wal.py's exit status when Ctrl-C (or SIGTERM) stopped the command
# it ran: 128 + the signal's number, as a shell says for a command it killed
INTERRUPTED = 128 + signal.SIGINT
EMPTY_RUN = 3   # trace_wal.py's exit status for a run that saw no engine call


def start_folder(plan: Plan) -> None:
    """What the run folder holds before the collector starts: this
    machine's probe costs, how the run is traced (run.json, without an
    end) and the records' layout."""
    write_calibration(plan)
    write_run_info(plan, started=True)
    R.write_layout(plan.run_dir)


def finish(plan: Plan, got: Collected, elapsed: float) -> TraceResult:
    """After the collector stopped: the folder finished and analysed, its
    views rendered, the table printed, and the exit status (the command's
    own, 128 + the signal that interrupted it, or EMPTY_RUN), which
    summary.json's exit_code says too.  A run that collected nothing
    (interrupted before its command ran, or no write seen) leaves no
    folder, unless --allow-empty, and says so in a line or two."""
    opts = plan.opts
    exit_code = got.exit_code
    if got.interrupted and opts.command:   # (-p, serve: Ctrl-C is how a run ends)
        exit_code = 128 + got.signum
    if not got.ran:
        discard_run_dir(plan.run_dir, plan.own_dir)
        print(f"walscope: interrupted ({signal.Signals(got.signum or signal.SIGINT).name}) "
              "before the command ran: nothing kept", file=sys.stderr)
        return TraceResult(plan.run_dir, exit_code, {})
    try:
        finish_collection(plan, got, elapsed, exit_code)
        summary = analysis.analyse(plan.run_dir)
        if is_empty(summary) and not opts.allow_empty:
            return empty_run(plan, got, summary, exit_code)
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
    if opts.print_table:   # the table, then the lines below it (stdout first)
        print(format_table(summary), flush=True)
    if got.interrupted:
        print(f"walscope: interrupted ({signal.Signals(got.signum).name}): what was "
              f"traced until then is analysed and kept in {plan.run_dir}", file=sys.stderr)
    elif opts.print_table:
        print(f"run folder: {plan.run_dir}", file=sys.stderr)
    warn_cost(plan.run_dir, summary)
    win = summary.get("windows") or {}
    if plan.mode.duty_windows and summary.get("engines_found") \
            and not summary["writes"]["count"]:
        print(f"walscope: no write began inside a window ({win.get('count', 0)} windows of "
              f"{opts.window_ms} ms); the table has samples only: for per-write rows run "
              "longer, raise --window-duty, or use the default mode", file=sys.stderr)
    return TraceResult(plan.run_dir, exit_code, summary)


def empty_run(plan: Plan, got: Collected, summary: dict[str, Any],
              exit_code: int) -> TraceResult:
    """No write or transaction of any engine: no table, no folder, and why
    in at most two lines: how the command ended (its last line where it
    failed) or, where it did not, what was inspected."""
    opts = plan.opts
    what = " ".join(opts.command) if opts.command else f"process {opts.pid}" \
        if opts.pid is not None else "the processes served"
    what = what if len(what) <= 60 else what[:57] + "..."
    if got.interrupted:
        print(f"walscope: interrupted ({signal.Signals(got.signum).name}) before any "
              f"{engines.titles()} write: nothing kept", file=sys.stderr)
    elif got.exit_code and opts.command:
        last = last_line(plan.folder.command_log) if opts.tail_on_failure else ""
        print(f"walscope: `{what}` exited {got.exit_code} before any write"
              + (f": {last}" if last else ""), file=sys.stderr)
    else:
        found = ", ".join(summary.get("engines_found", [])) or "none"
        print(f"walscope: no {engines.titles()} write or transaction seen in `{what}` "
              f"(engines found: {found}); --allow-empty keeps such a run", file=sys.stderr)
        inspected = summary.get("objects", [])
        if inspected:
            print(f"walscope: inspected {inspected_line(inspected)}", file=sys.stderr)
    discard_run_dir(plan.run_dir, plan.own_dir)
    return TraceResult(plan.run_dir, exit_code or EMPTY_RUN, {})


def inspected_line(objects: list[dict[str, Any]]) -> str:
    """What the objects inspected were found to be, by reason: the rare
    reasons with the objects' names (a stripped library), the common one
    as a count."""
    by_why: dict[str, list[str]] = {}
    for o in objects:
        by_why.setdefault(o.get("why") or "probed", []).append(Path(o["path"]).name)
    groups = sorted(by_why.items(), key=lambda kv: len(kv[1]))
    if len(groups) == 1:
        return f"{len(objects)} objects: {groups[0][0]}"
    parts = [f"{' and '.join(names)}: {why}" if len(names) <= 2 else
             f"{len(names)} others: {why}" for why, names in groups]
    return f"{len(objects)} objects: " + "; ".join(parts)


# a line of a failed command's output that says why, as a rule
_SAYS_WHY = re.compile(r"(?i)\b(error|unknown|invalid|no such|not found|failed|fatal|"
                       r"cannot|can't|denied|usage)\b")


def last_line(log: Path, width: int = 160) -> str:
    """The line of a failed command's output that says why: the last of
    its last 40 lines that names an error (a program's stderr comes before
    its buffered stdout in command.log: db_bench's "unknown benchmark" is
    followed by its settings), else its last line."""
    try:
        with open(log, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 16384))
            tail = f.read().decode(errors="replace")
    except OSError:
        return ""
    lines = [ln.strip() for ln in tail.replace("\r", "\n").splitlines()
             if any(c.isalnum() for c in ln)][-40:]
    if not lines:
        return ""
    line = next((ln for ln in reversed(lines) if _SAYS_WHY.search(ln)), lines[-1])
    return line if len(line) <= width else line[:width - 3] + "..."


def write_calibration(plan: Plan) -> None:
    """calibration.json: this machine's probe costs, and which components
    had probes at single-stepped sites (known once every object is in)."""
    if not plan.opts.calibrate:
        return
    try:
        cal = calibration.get(refresh=plan.opts.recalibrate)
    except calibration.CalibrationError as e:
        raise TraceError(f"calibration: {e}") from None
    cal["stepped_components"] = sorted(plan.objects.stepped)
    plan.folder.calibration_json.write_text(json.dumps(cal, indent=1))


def finish_collection(plan: Plan, got: Collected, elapsed: float, exit_code: int) -> None:
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
    write_run_info(plan, started=False, exit_code=exit_code, command_exit_code=got.exit_code,
                   interrupted=got.interrupted, elapsed=elapsed, stack_error=error)


def write_run_info(plan: Plan, started: bool, exit_code: int = 0,
                   command_exit_code: int = 0, interrupted: bool = False, elapsed: float = 0.0,
                   stack_error: str | None = None) -> None:
    """run.json: how the run was traced, for the analysis.  Written when
    tracing starts (a tracer that dies leaves it without "end") and again
    when it ends."""
    opts, res = plan.opts, plan.objects.merged()
    info: dict[str, Any] = {
        "engine": res.engine,
        "engines": plan.objects.engines(),
        "sample_hz": plan.sample_hz,
        "wall_hz": opts.wall_hz,
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
            "sched": opts.sched, "exit_code": exit_code,
            "command_exit_code": command_exit_code, "interrupted": interrupted,
            "started_utc": plan.started_utc, "elapsed_s": elapsed,
            "mono_to_unix_ns": plan.mono_to_unix_ns,
            "probes": {"attached": len(attach_lines(res.probes)),
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


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


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
