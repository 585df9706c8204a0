"""The load-only tier (`make test-load`, `pytest -m load`): every BPF
program of the build through the kernel's verifier, no workload, in a
few seconds.

walscope-collect --load-only loads the object as its other options would
(the rodata they set prunes what the verifier walks, and the windowed
modes load the uprobes for uprobe_multi), lists each program with the id
the kernel gave it, and exits: nothing is attached or pinned.  It runs
with each mode's options (runners/command/plan.py collector_options) and
with the variants no mode's defaults reach.  A rejected program fails
the test by name, with the end of the verifier's log; the programs listed
must be the object's own (its ELF symbols), every program must load
under some variant, and none may outlive the collector."""
from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from collectors import session, topology
from probepoints import modes
from runners.command import defaults
from runners.command.plan import Plan, TraceOptions, collector_options
from tests.conftest import ROOT

pytestmark = [pytest.mark.root, pytest.mark.load]   # root, the build

COLLECT = ROOT / ".output" / "walscope-collect"
OBJECT = ROOT / ".output" / "walscope.bpf.o"

# options no mode's defaults give, each changing what is loaded or what
# the verifier walks (rodata branches)
VARIANTS: dict[str, list[str]] = {
    "no options": [],
    "sample --sched": ["--no-syscalls", "--offcpu-sums", "--sample-hz", "49"],
    "kernel off-CPU stacks, 1 in 4": ["--offcpu-stacks", "--offcpu-stack-every", "4",
                                      "--writes-io-only", "--min-runq-ns", "1000",
                                      "--cpu-types", "PEU"],
    "no scheduler hooks": ["--no-sched", "--ringbuf-mb", "1", "--stack-entries", "1000"],
    # --log-file's rules, every field set (the file-kind rule loop walked)
    "log files": ["--log-files",
                  "617070/2e646174//0;/2e7265646f//0;/2e6c6f67/77616c/0;6a6f75726e616c///1"],
}

# the collector's options no configuration above uses, and why none needs to
UNUSED = {
    "output": "--load-only writes nothing",
    "attach": "uprobes are attached after load; their program loads without a target",
    "load-only": "every configuration has it",
    "verbose": "libbpf's debug output, not what is loaded",
    "live-counters": "a file written while it runs (walscope serve), not what is loaded",
    "help": "argp's own", "usage": "argp's own", "version": "argp's own",
}


def object_programs() -> dict[str, str]:
    """name -> section of each program in the object, read as libbpf reads
    it: a global function in an executable section other than .text."""
    with open(OBJECT, "rb") as f:
        elf = ELFFile(f)
        out: dict[str, str] = {}
        for sym in elf.get_section_by_name(".symtab").iter_symbols():
            if sym["st_info"]["type"] != "STT_FUNC" or sym["st_info"]["bind"] != "STB_GLOBAL" \
                    or not isinstance(sym["st_shndx"], int):
                continue
            sec = elf.get_section(sym["st_shndx"])
            if sec["sh_flags"] & SH_FLAGS.SHF_EXECINSTR and sec.name != ".text":
                out[sym.name] = sec.name
    assert out, f"{OBJECT}: no programs"
    return out


def mode_options(mode: modes.Mode, tmp_path: Path) -> list[str]:
    """walscope-collect's options for a run of this mode with everything it
    may load: its off-CPU stacks walked by frame pointer, on-CPU stacks in
    BPF, sampling on (the Plan prepare() would make at its heaviest)."""
    (tmp_path / "calibration.json").write_text(json.dumps({"pair_ns": 1500}))
    offcpu = "user-stacks" if mode.offcpu_stacks else \
        "sums" if not mode.syscalls and mode.sched else "off"
    plan = Plan(TraceOptions(command=["true"], mode=mode.name, sched=mode.sched), None, [],
                None, topology.Topology(("U",), "uniform"), tmp_path,
                mode.sample_hz or defaults.SAMPLE_HZ, "bpf", offcpu, True)
    return session.option_args(collector_options(plan))


def collector_option_names() -> set[str]:
    """The long options walscope-collect --help lists."""
    p = subprocess.run([str(COLLECT), "--help"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return set(re.findall(r"^\s+(?:-\S, )?--([a-z][a-z-]*)", p.stdout, re.M))


def rejected(argv: tuple[str, ...], stderr: str) -> str:
    """What failed, for a collector that could not load: the programs
    libbpf names, the options, and the end of its output (the verifier's
    log, which libbpf prints at warning level)."""
    names = sorted(set(re.findall(r"prog '(\w+)': (?:BPF program )?(?:load|failed)", stderr)))
    return (f"rejected: {', '.join(names) or 'no program named'} "
            f"(walscope-collect --load-only {' '.join(argv)})\n{stderr[-3000:]}")


@functools.cache
def load(argv: tuple[str, ...]) -> dict[str, tuple[str, int | None, int | None]]:
    """name -> (section, kernel id, verified instructions) of each program
    walscope-collect --load-only lists (id None: left out by the options)."""
    p = subprocess.run([str(COLLECT), "--load-only", *argv], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        pytest.fail(rejected(argv, p.stderr), pytrace=False)
    out: dict[str, tuple[str, int | None, int | None]] = {}
    for line in p.stdout.splitlines():
        kind, name, section, pid, _type, verified = line.split("\t")
        assert kind == "prog" and name not in out, line
        out[name] = (section, None if pid == "-" else int(pid),
                     None if verified == "-" else int(verified))
    return out


def still_loaded(ids: set[int], timeout: float = 5) -> set[int]:
    """Those of ids the kernel still holds after timeout (a program goes
    with its last file descriptor, freed after an RCU grace period)."""
    end = time.monotonic() + timeout
    while True:
        p = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                           timeout=30)
        assert p.returncode == 0, p.stderr
        left = ids & {prog["id"] for prog in json.loads(p.stdout)}
        if not left or time.monotonic() >= end:
            return left
        time.sleep(0.1)


CONFIGS = [*(f"mode {name}" for name in modes.MODES), *VARIANTS]


@pytest.fixture(scope="module")
def configs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, ...]]:
    """The collector's options of each configuration tried, by name."""
    out = {f"mode {m.name}": tuple(mode_options(m, tmp_path_factory.mktemp(m.name)))
           for m in modes.MODES.values()}
    return {**out, **{name: tuple(argv) for name, argv in VARIANTS.items()}}


def test_the_configurations_use_every_option(configs):
    """Each option of the collector is in some configuration or says why
    it need not be: a new option is tried here or explained."""
    used = {a[2:] for argv in configs.values() for a in argv if a.startswith("--")}
    listed = collector_option_names()
    assert all(UNUSED.values()) and set(UNUSED) <= listed
    assert listed - used - set(UNUSED) == set()


@pytest.mark.parametrize("config", CONFIGS)
def test_every_program_passes_the_verifier(config, configs):
    """The configuration's programs all load (a rejection names the
    program); the list is the object's, each loaded one has a kernel id
    and a verified length, and none is left in the kernel afterwards."""
    assert os.geteuid() == 0, "the load tier needs root: sudo make test-load"
    got = load(configs[config])
    assert {n: s for n, (s, _, _) in got.items()} == object_programs()
    ids = {pid for _, pid, _ in got.values() if pid is not None}
    assert ids, f"{config}: nothing loaded"
    for name, (_, pid, verified) in got.items():
        assert (pid is None) == (verified is None) and (pid is None or pid > 0), name
    assert still_loaded(ids) == set(), f"{config}: programs outlived the collector"


def test_every_program_loads_somewhere(configs):
    """Each program of the object is loaded by some configuration: one that
    every configuration leaves out is never verified."""
    loaded = {name for argv in configs.values()
              for name, (_, pid, _) in load(argv).items() if pid is not None}
    assert set(object_programs()) - loaded == set()
