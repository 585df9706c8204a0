"""walscope's tracing modes: one row each, holding everything that differs
by mode.  The command line (--mode's choices and help), planning and the
collector's options (runners/command/plan.py), the resolvers (engines/*/resolve.py
get the row), the emptiness check, the table and the diff read a row here;
nothing else compares a mode's name (tests/test_modes.py checks it).

Pure data: it imports nothing but the standard library, so the analysis may
read it too (a summary's "mode" names its row).
"""
from __future__ import annotations

from dataclasses import dataclass

# probe sets: which of an engine's probe points (ProbeSpec.modes) a mode
# attaches
EVERY_PROBE = "full"      # every probe point
WRITE_PROBES = "writes"   # a write's boundaries and its WAL calls only

# sample mode's own perf rate (and the windowed modes', for their sampled
# splits): the timer interrupts perturb 4-thread sync=false db_bench far
# beyond their run time (2 us a sample), by RocksDB's adaptive yield: 5-12%
# at 199 Hz and up, and at 99 Hz 0.97 in one regime and 0.92 in a faster
# one (30 pairs each); 49 Hz read 0.98 in the faster one
SAMPLE_MODE_HZ = 49


@dataclass(frozen=True)
class Mode:
    name: str
    help: str                   # --mode's words for it
    # the probe set the resolvers attach (EVERY_PROBE, WRITE_PROBES), or
    # None: no uprobes at all (nothing per write is recorded)
    probe_set: str | None
    # the probe set leaves out the write-group calls: a write's group role
    # and its queue come from its syscalls (the collector's --groups-unprobed,
    # a Resolution's groups_unprobed)
    groups_unprobed: bool
    # syscall tracepoints; without them (--no-syscalls) the syscall in
    # progress comes from the task's saved registers and blocked time from
    # off-CPU sums
    syscalls: bool
    sched: bool                 # --sched's default: sched_switch/sched_wakeup hooks
    offcpu_stacks: bool         # --offcpu-stacks' default (~3 us a context switch)
    # objects the processes meet during the run are inspected and probed:
    # the collector's --follow-objects, the dynamic loader's hook
    follows_objects: bool
    # probes only inside windows of a fixed duty (--window-duty) opened at
    # random moments: the collector's --window-gap-ms
    duty_windows: bool
    # every write while that stays within --budget, else windows whose duty
    # the budget buys: the collector's --budget and --hit-ns
    budget_windows: bool
    # --sample-hz's default; None: planning decides (runners/command/plan.py prepare)
    sample_hz: int | None
    # modes with fewer probes, named when probe overhead swamps a component
    fewer_probes: tuple[str, ...]

    @property
    def windowed(self) -> bool:
        """Probes open and close in windows (--window-ms, windows.tsv)."""
        return self.duty_windows or self.budget_windows

    @property
    def records_writes(self) -> bool:
        """Per-write rows: an empty run is one without a write (else one
        where no engine was found); the table shows writes, not samples."""
        return self.probe_set is not None

    @property
    def every_write(self) -> bool:
        """Probes on every write, whatever that costs the workload."""
        return self.records_writes and not self.windowed


BUDGET = Mode(
    name="budget",
    help="every write with full's probes while that is estimated to cost at "
         "most --budget of throughput, and windows whose duty the budget buys "
         "when not",
    probe_set=EVERY_PROBE, groups_unprobed=False, syscalls=True, sched=True,
    offcpu_stacks=False, follows_objects=True, duty_windows=False, budget_windows=True,
    sample_hz=SAMPLE_MODE_HZ, fewer_probes=("writes", "sample"))
FULL = Mode(
    name="full",
    help="every probe point on every write, whatever it costs",
    probe_set=EVERY_PROBE, groups_unprobed=False, syscalls=True, sched=True,
    offcpu_stacks=True, follows_objects=True, duty_windows=False, budget_windows=False,
    sample_hz=None, fewer_probes=("writes", "sample"))
WRITES = Mode(
    name="writes",
    help="write and WAL entry points only",
    probe_set=WRITE_PROBES, groups_unprobed=True, syscalls=True, sched=True,
    offcpu_stacks=False, follows_objects=True, duty_windows=False, budget_windows=False,
    sample_hz=None, fewer_probes=("sample",))
SAMPLE = Mode(
    name="sample",
    help="no uprobes, no syscall tracepoints, nothing on the scheduler: perf "
         "samples, and threads' time from the kernel's accounting",
    probe_set=None, groups_unprobed=False, syscalls=False, sched=False,
    offcpu_stacks=False, follows_objects=False, duty_windows=False, budget_windows=False,
    sample_hz=SAMPLE_MODE_HZ, fewer_probes=())
WINDOW = Mode(
    name="window",
    help="full's probes in windows of a fixed duty (--window-duty) at random "
         "moments, for experiments",
    probe_set=EVERY_PROBE, groups_unprobed=False, syscalls=True, sched=True,
    offcpu_stacks=False, follows_objects=True, duty_windows=True, budget_windows=False,
    sample_hz=SAMPLE_MODE_HZ, fewer_probes=("writes", "sample"))

# every mode by name, in the order --mode lists them
MODES: dict[str, Mode] = {m.name: m for m in (BUDGET, FULL, WRITES, SAMPLE, WINDOW)}
# a plain trace_wal.py command's: every write while tracing every write
# costs at most the budget (estimated live from the probes' hits and their
# calibrated costs), else full's probes in windows whose duty the budget
# buys (collectors/budget.h); sampling all along
DEFAULT = BUDGET.name


def get(name: str | None) -> Mode | None:
    """The row of a mode's name (a summary's "mode"), None if there is none."""
    return MODES.get(name) if name is not None else None
