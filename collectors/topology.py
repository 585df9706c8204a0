"""CPU core types (P/E) from the kernel, or from the user's declaration.

Detection order: Intel hybrid PMU cpu lists (/sys/devices/cpu_core/cpus,
/sys/devices/cpu_atom/cpus), then per-CPU cpu_capacity, then cpufreq maximum
frequency, where some CPUs reach at most 80% of the fastest's (a few percent
apart is one kind of core, binned).  CPUs that all look alike are "U"
(uniform): never labelled P or E without evidence.  ``--cpu-types P:0-5,E:6-13`` overrides everything.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SYS = Path("/sys/devices")
# a CPU whose capacity or top frequency is at most this share of the
# fastest's is an efficiency core; above it, the same kind of core
E_CLASS = 0.8


class TopologyError(ValueError):
    """A --cpu-types declaration that cannot be used."""


@dataclass(frozen=True)
class Topology:
    types: tuple[str, ...]   # one of "P", "E", "U" per CPU index
    source: str              # where the split came from

    def letters(self) -> str:
        return "".join(self.types)

    def cpus(self, kind: str) -> list[int]:
        return [i for i, t in enumerate(self.types) if t == kind]

    @property
    def hybrid(self) -> bool:
        return "P" in self.types and "E" in self.types


def parse_cpu_list(text: str) -> list[int]:
    """Kernel cpu-list syntax: "0-3,8,10-11"."""
    out: list[int] = []
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            lo, hi = int(a), int(b)
            if hi < lo:
                raise ValueError(f"bad range {part}")
            out.extend(range(lo, hi + 1))
        else:
            out.append(int(part))
    return out


def nr_cpus() -> int:
    try:
        return len(parse_cpu_list(Path("/sys/devices/system/cpu/possible").read_text()))
    except OSError:
        return os.cpu_count() or 1


def parse_declaration(text: str, ncpu: int) -> Topology:
    """"P:0-5,E:6-13" -> Topology; CPUs not named are "U"."""
    types = ["U"] * ncpu
    current = None
    try:
        for tok in text.split(","):
            tok = tok.strip()
            if ":" in tok:
                current, tok = tok.split(":", 1)
                current = current.strip().upper()
                if current not in ("P", "E"):
                    raise TopologyError(
                        f"--cpu-types: core type must be P or E, got {current!r}")
            if current is None:
                raise TopologyError("--cpu-types: start with P: or E:, e.g. P:0-5,E:6-13")
            for cpu in parse_cpu_list(tok):
                if cpu >= ncpu:
                    raise TopologyError(
                        f"--cpu-types: CPU {cpu} does not exist (this machine has {ncpu})")
                types[cpu] = current
    except ValueError as e:
        if isinstance(e, TopologyError):
            raise
        raise TopologyError(f"--cpu-types: cannot parse {text!r} ({e})") from None
    return Topology(tuple(types), "declared")


def _read_int(p: Path) -> int | None:
    try:
        return int(p.read_text().strip())
    except (OSError, ValueError):
        return None


def detect(sys_root: Path = SYS, ncpu: int | None = None) -> Topology:
    ncpu = ncpu or nr_cpus()
    core, atom = sys_root / "cpu_core" / "cpus", sys_root / "cpu_atom" / "cpus"
    if core.exists() and atom.exists():
        types = ["U"] * ncpu
        for c in parse_cpu_list(core.read_text()):
            if c < ncpu:
                types[c] = "P"
        for c in parse_cpu_list(atom.read_text()):
            if c < ncpu:
                types[c] = "E"
        return Topology(tuple(types), "intel-hybrid-pmu")
    cpu_dir = sys_root / "system" / "cpu"
    for source, rel in (("cpu_capacity", "cpu_capacity"),
                        ("cpufreq-max", "cpufreq/cpuinfo_max_freq")):
        vals = [_read_int(cpu_dir / f"cpu{i}" / rel) for i in range(ncpu)]
        if not all(v is not None for v in vals):
            continue
        top = max(v for v in vals if v is not None)
        # an efficiency core is a class apart (big.LITTLE capacities 1024
        # against ~400-600); cores of one design whose boost bins or
        # capacities differ by a few percent (Intel's favoured cores, an
        # arm64 prime core) are not P and E
        if top and any(v is not None and v <= E_CLASS * top for v in vals):
            return Topology(tuple("E" if v is not None and v <= E_CLASS * top else "P"
                                  for v in vals), source)
    return Topology(tuple("U" * ncpu), "uniform")


def resolve(declared: str | None) -> Topology:
    ncpu = nr_cpus()
    return parse_declaration(declared, ncpu) if declared else detect(ncpu=ncpu)
