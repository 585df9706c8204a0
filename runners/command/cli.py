"""Command line of trace_wal.py (docs/trace_wal.8.md's usage is generated from it)."""
from __future__ import annotations

import argparse
import os
import sys
import textwrap
from pathlib import Path

import engines
from probepoints.elf import is_elf
from probepoints import modes
from runners.command import defaults
from runners.command.entry import hold_interrupts, quiet_broken_pipe, release_interrupts
from runners.command.version import VersionAction


def either(items: list[str]) -> str:
    """"a, b or c"."""
    return ", ".join(items[:-1]) + " or " + items[-1] if len(items) > 1 else items[0]


def rows_seen() -> str:
    """What a run must see, each engine's row: "RocksDB write, SQLite
    transaction or PostgreSQL transaction"."""
    return either([f"{e.title} {e.row}" for e in engines.ENGINES])


def rows_attributed() -> str:
    """Each engine's row, engines with the same row together: "write's
    (RocksDB) or transaction's (SQLite, PostgreSQL)"."""
    by_row: dict[str, list[str]] = {}
    for e in engines.ENGINES:
        by_row.setdefault(e.row, []).append(e.title)
    return " or ".join(f"{row}'s ({', '.join(t)})" for row, t in by_row.items())


def description() -> str:
    """--help's description: the engines, their rows and their components
    (the registry's), wrapped to 80 columns."""
    def para(text: str, indent: str = "") -> list[str]:
        return textwrap.wrap(text, 79, initial_indent=indent,
                             subsequent_indent=indent + "  " if indent else "",
                             break_on_hyphens=False)
    lines = para(f"Trace a {engines.titles()} workload and attribute every "
                 f"{rows_attributed()} latency to its components "
                 "(docs/components.md says what each holds):")
    for e in engines.ENGINES:
        lines += para(f"{e.title}: " + ", ".join(c.name for c in e.components) + ";",
                      "  ")
    lines += para(f"and in every engine {engines.SCHED_RUNQ.name} (run-queue waits) "
                  f"and {engines.OTHER.name} (the rest).", "  ")
    return "\n".join(lines)


EXAMPLES = """\
examples:
  sudo ./trace_wal.py -- db_bench --benchmarks=fillrandom --num=20000 --threads=4 --sync=true
  sudo ./trace_wal.py -o runs/mine -- ./my_rocksdb_app --flag
  sudo ./trace_wal.py -p 4242 --duration 30        # a process already running
  sudo ./trace_wal.py -- python3 -m runners.workloads.sqlite_tpcc --journal-mode wal --duration 20
  sudo ./trace_wal.py --mode sample -- db_bench --benchmarks=fillrandom --sync=false
  sudo ./trace_wal.py --cpu-types P:0,E:1 -- taskset -c 1 db_bench --benchmarks=fillrandom
"""

# trace_wal.py's exit status, as runners/command/record.py decides it (a test holds
# the numbers to its constants); --help and the man page's EXIT STATUS
# (runners/docs.py) are this table
EXIT_STATUS = [
    ("0", "the command exited 0 and a "
          + " or ".join(dict.fromkeys(e.row for e in engines.ENGINES))
          + " was seen (or --allow-empty); with -p: the process ended, --duration "
          "passed, or Ctrl-C or SIGTERM ended the tracing"),
    ("N", "the command's own non-zero status (128 + the signal's number if a "
          "signal killed it); it comes before 3; a command that failed before "
          "any write: one line with its own line that says why, no folder"),
    ("1", "walscope could not trace: bad input found after parsing (no such "
          "command, process or user; an output folder that is not empty), no "
          "privileges, no BTF, a collector that failed; one line on stderr"),
    ("2", "a usage error: an option or argument refused (one line on stderr)"),
    ("3", f"no {rows_seen()} seen: a line or two on stderr say why (the "
          "objects inspected), no folder is left, unless --allow-empty"),
    ("130", "Ctrl-C (SIGINT) stopped the command, or came before tracing began "
            "or during the analysis, from trace_wal's first line however it was "
            "started; one line on stderr says what was kept (summary.json's "
            "exit_code 130), or that nothing was"),
    ("143", "SIGTERM stopped the command; what was traced is kept, as with Ctrl-C"),
]


def exit_status_text() -> str:
    """EXIT_STATUS for --help."""
    lines = ["exit status:"]
    for code, what in EXIT_STATUS:
        lines += textwrap.wrap(what, 76, initial_indent=f"  {code:<5}",
                               subsequent_indent=" " * 7, break_on_hyphens=False)
    return "\n".join(lines) + "\n"


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text}")
    return v


def positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text}")
    return v


def budget_share(text: str) -> float:
    """An overhead budget in percent of throughput ("2%" or "2") as a share."""
    v = positive_float(text.strip().removesuffix("%"))
    if not v < 100:
        raise argparse.ArgumentTypeError(f"must be under 100%: {text}")
    return v / 100


def ringbuf_size(text: str) -> int:
    v = positive_int(text)
    if v & (v - 1) or v > 1024:
        raise argparse.ArgumentTypeError("must be a power of two up to 1024")
    return v


class OneLineParser(argparse.ArgumentParser):
    """argparse, but errors are one line (no usage dump) with exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def sampling_modes_text() -> str:
    """The modes with a sample rate of their own, and the rate: "49 in the
    sample, budget, window modes" (the one without probes first)."""
    fixed = sorted((m for m in modes.MODES.values() if m.sample_hz is not None),
                   key=lambda m: m.records_writes)
    rates = sorted({m.sample_hz for m in fixed})
    return ", ".join(f"{hz} in the " + ", ".join(m.name for m in fixed if m.sample_hz == hz)
                     + " modes" for hz in rates)


def planned_rate_modes() -> list[str]:
    """The modes whose sample rate planning chooses (runners/command/plan.py prepare)."""
    return [m.name for m in modes.MODES.values() if m.sample_hz is None]


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="trace_wal.py",
        description=description(),
        epilog=EXAMPLES + "\n" + exit_status_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=VersionAction)
    target = p.add_mutually_exclusive_group()
    target.add_argument("-p", "--pid", type=positive_int,
                        help="trace this running process and its children")
    p.add_argument("--duration", type=positive_float, metavar="SECONDS",
                   help="with -p: stop after this long (default: until it exits "
                        "or Ctrl-C)")
    p.add_argument("-o", "--output", type=Path, metavar="DIR",
                   help="run folder, new or empty (default runs/<UTC "
                        "time>-<command>)")
    p.add_argument("--force", action="store_true",
                   help="with -o: empty the folder first if it holds anything "
                        "(without it, a non-empty folder is refused: two runs "
                        "never mix)")
    p.add_argument("--mode", choices=tuple(modes.MODES), default=modes.DEFAULT,
                   help="; ".join(f"{m.name}: {m.help}" for m in modes.MODES.values())
                        + f" (default: {modes.DEFAULT})")
    p.add_argument("--budget", type=budget_share, metavar="PERCENT",
                   default=defaults.BUDGET,
                   help="--mode budget: the share of the workload's throughput "
                        "tracing may cost.  From the first instruction, every "
                        "write is recorded while the probes' hits at their "
                        "calibrated costs stay within it, or a 25 ms burst "
                        "covers them (a short run; the workload's own pace "
                        "checks the burst's price after 250 ms); past that, "
                        "windows open at the duty it buys, re-estimated at each "
                        "window by the probes and by the workload's pace (where "
                        "the pace says more, the next window waits until the "
                        "budget has paid the difference, and a window closes "
                        "once it has lost what it was priced at), and a "
                        "workload that quiets down is recorded whole again; "
                        "where windows were needed, the table names the budget "
                        "that would have recorded every write "
                        f"(default: {defaults.BUDGET * 100:g}%%)")
    p.add_argument("--log-file", action="append", default=[], metavar="GLOB",
                   help="a write-ahead log by its name (NAME, PREFIX*, *SUFFIX or "
                        "PREFIX*SUFFIX, up to 8 bytes each, optionally under a "
                        "directory, whose own name counts; repeatable, up to 4): "
                        "its writes and syncs are the log's to every engine, and "
                        "where no engine is found, each commit its syscalls show "
                        "is a row (a log synced on commit: a row per sync)")
    p.add_argument("--dataset", type=Path, metavar="DIR",
                   help="also add the run to this dataset (Hive-partitioned "
                        "Parquet; see docs/dataset.md)")
    p.add_argument("--host", help="with --dataset: the host name to file it under "
                                  "(default: this machine's)")
    p.add_argument("--window-ms", type=positive_int, metavar="MS",
                   default=defaults.WINDOW_MS,
                   help="--mode window and budget: each window's length "
                        "(default: %(default)s)")
    p.add_argument("--window-duty", type=positive_float, metavar="FRACTION",
                   default=defaults.WINDOW_DUTY,
                   help="--mode window: the share of the run inside windows, "
                        "one at a random moment in each stretch of its length over the duty (default: "
                        "%(default)s)")
    p.add_argument("--cpu-types", metavar="P:0-5,E:6-13",
                   help="declare core types (default: detect; uniform CPUs are "
                        "reported as such)")
    p.add_argument("--user", help="run the command as this user (default: "
                                  "SUDO_USER)")
    p.add_argument("--lib", action="append", default=[], metavar="PATH",
                   help="also inspect this object before the run (objects the "
                        "processes load later, dlopen()ed or exec'd, are found "
                        "as they load); repeatable")
    p.add_argument("--ringbuf-mb", type=ringbuf_size, default=16, metavar="MB",
                   help="BPF ring buffer size, a power of two (default 16)")
    p.add_argument("--ringbuf-kb", type=int, help=argparse.SUPPRESS)  # tests
    p.add_argument("--stack-entries", type=positive_int, default=0, metavar="N",
                   help="stack map entries, rounded up to a power of two (default: "
                        "probes/maps.bpf.h's, 16384; ~1 KB each): a stack whose "
                        "hash bucket another holds is not kept, and counted; a run "
                        "with many distinct stacks keeps more with a bigger map")
    p.add_argument("--sample-hz", type=int, metavar="HZ",
                   help=f"perf sampling frequency per CPU, 0 for none (default: "
                        f"{sampling_modes_text()}, "
                        "where faster sampling perturbed 4-thread sync=false "
                        f"db_bench by 3-12%%; in {' and '.join(planned_rate_modes())}, "
                        f"{defaults.SAMPLE_HZ} for --stacks bpf, the sampled "
                        "CRC split, or when no engine is found before "
                        "the run, else off)")
    p.add_argument("--wall-hz", type=int, default=defaults.WALL_HZ, metavar="HZ",
                   help="sweeps a second of the traced threads' state and kernel "
                        "accounting, by a task iterator attached to nothing they "
                        "run, and at each window's edge: the untouched lens's "
                        f"figures, between windows (default {defaults.WALL_HZ} in the "
                        "modes with windows, budget and window; 0: none)")
    p.add_argument("--stacks", choices=defaults.STACK_METHODS, default="off",
                   help="on-CPU stack flame graph: bpf (frame pointers), dwarf "
                        "(perf record --call-graph dwarf), auto (bpf if every "
                        "probed object keeps frame pointers) (default: off)")
    p.add_argument("--offcpu-stacks", action=argparse.BooleanOptionalAction,
                   help="off-CPU flame graph: kernel stacks of traced threads at "
                        "each switch out, blocked and runnable time summed per "
                        "stack in the kernel; ~3 us a context switch (default: "
                        "on in full mode, off in writes and sample; sample mode "
                        "sums off-CPU time by syscall without stacks)")
    p.add_argument("--offcpu-stack-every", type=positive_int, metavar="N",
                   default=defaults.OFFCPU_STACK_EVERY,
                   help="walk the stacks of 1 in N off-CPU periods, chosen at "
                        "random (a kernel stack walk costs ~4 us here and a "
                        "synced write blocks ~3 times); the others' time is "
                        "spread over the stacks sampled for the same thread, "
                        "syscall, file kind and component, so totals stay "
                        "exact; 1: every period (default: %(default)s)")
    p.add_argument("--sched", action=argparse.BooleanOptionalAction,
                   help="programs on sched_switch and sched_wakeup: run-queue "
                        "waits and off-CPU time per write, migrations, off-CPU "
                        "time by syscall; without them each thread's on-CPU, "
                        "runnable and blocked totals still come from the "
                        "kernel's own accounting (any sched_switch program, "
                        "even an empty one, cost 4-thread sync=false db_bench "
                        "~20%% of its throughput here: RocksDB's adaptive "
                        "yield reacts to slower switches) (default: on in "
                        "full and writes, off in sample)")
    p.add_argument("--stepped-probes", action="store_true",
                   help="keep probe sites the kernel must single-step (crc32c::"
                        "Extend, ~10 us a hit); by default their component is "
                        "split out of its parent by sampling")
    p.add_argument("--allow-empty", action="store_true",
                   help=f"a run that saw no {rows_seen()} exits 0 (default: "
                        "exit status 3, or the command's own if it failed)")
    p.add_argument("--recalibrate", action="store_true",
                   help="measure probe costs again instead of using the cache")
    p.add_argument("--no-calibrate", action="store_true",
                   help="do not compensate probe overhead")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="none of the command's output, not even the last line of "
                        "a command that failed before any write (all of it is in "
                        "the run folder's command.log)")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="the command's output on the terminal as it runs (by "
                        "default it goes to command.log only); -vv: libbpf's "
                        "debug output from the collector too")
    p.add_argument("command", nargs=argparse.REMAINDER,
                   help="command to run and trace, after --")
    return p


@quiet_broken_pipe
def main(argv: list[str] | None = None) -> int:
    from runners.command.plan import TraceError, TraceOptions
    from runners.command.trace import trace

    parser = build_parser()
    args = parser.parse_args(argv)
    cmd = list(args.command)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if args.pid is not None and cmd:
        parser.error("give either -p PID or a command, not both")
    if args.offcpu_stacks and args.sched is False:
        parser.error("--offcpu-stacks needs the scheduler hooks (drop --no-sched)")
    if args.pid is None and not cmd:
        parser.error("nothing to trace: give a command after -- or -p PID")
    if args.duration is not None and args.pid is None:
        parser.error("--duration applies to -p PID only")
    if not 0 < args.window_duty < 1:
        parser.error("--window-duty must be between 0 and 1")
    if args.host is not None and args.dataset is None:
        parser.error("--host applies to --dataset only")
    if args.sample_hz is not None and not 0 <= args.sample_hz <= 100000:
        parser.error("--sample-hz must be between 0 and 100000")
    if not 0 <= args.wall_hz <= 1000:
        parser.error("--wall-hz must be between 0 and 1000")
    if args.force and args.output is None:
        parser.error("--force applies to -o DIR only")
    for lib in args.lib:
        if not os.path.isfile(lib) or not is_elf(lib):
            parser.error(f"--lib {lib}: " + ("no such file" if not os.path.exists(lib)
                                             else "not a file" if not os.path.isfile(lib)
                                             else "not an ELF object"))
    opts = TraceOptions(command=cmd, pid=args.pid, duration=args.duration,
                        output=args.output, mode=args.mode,
                        cpu_types=args.cpu_types, user=args.user, libs=args.lib,
                        ringbuf_kb=args.ringbuf_kb or args.ringbuf_mb << 10,
                        sample_hz=args.sample_hz, wall_hz=args.wall_hz, stacks=args.stacks,
                        offcpu_stacks=args.offcpu_stacks, sched=args.sched,
                        offcpu_stack_every=args.offcpu_stack_every,
                        stack_entries=args.stack_entries,
                        stepped_probes=args.stepped_probes,
                        allow_empty=args.allow_empty, dataset=args.dataset,
                        force=args.force,
                        window_ms=args.window_ms, window_duty=args.window_duty,
                        budget=args.budget,
                        host=args.host, log_files=args.log_file,
                        echo=args.verbose >= 1 and not args.quiet,
                        tail_on_failure=not args.quiet, verbose=args.verbose >= 2,
                        recalibrate=args.recalibrate,
                        calibrate=not args.no_calibrate)
    from analysis.heap import keep_heap_small
    # the imports done: an interrupt held since the first line (entry.py)
    # is taken now, before tracing begins (a script's background job starts
    # with SIGINT ignored: hold_interrupts() undid that, so the workload
    # does not inherit the ignore either)
    hold_interrupts()   # (main() called by itself, not through entry.guarded)
    release_interrupts()
    keep_heap_small()
    try:
        result = trace(opts)
    except TraceError as e:
        print(f"walscope: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # (once tracing began, trace() handles Ctrl-C and says what it kept)
        print("walscope: interrupted before tracing began", file=sys.stderr)
        return 130
    return result.exit_code


# (entry.guarded leaves the interrupt held through main()'s own imports)
main.releases_interrupts = True   # type: ignore[attr-defined]
