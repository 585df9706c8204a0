"""What an engine's resolver answers in: the probe points it looks for
(ProbeSpec, with the probe sets that attach each: probepoints/modes.py)
and what it found (Resolution).  Imports nothing of walscope's."""
from __future__ import annotations

from dataclasses import dataclass, field

from probepoints import modes


@dataclass(frozen=True)
class ProbeSpec:
    prefix: str          # demangled name prefix, up to and including "("
    phase: str           # its engine's phase enum member
    modes: frozenset[str]   # the probe sets that attach it (probepoints/modes.py)
    ret: bool = True     # also a return probe
    alt_of: str | None = None  # a newer/older name of that probe point
    # an overload whose signature has this runs only inside another probed
    # call of the same phase: not probed when such a call was found
    nested: str | None = None
    # inside a write this only runs within a call of one of these prefixes,
    # of the same phase: not probed where one of them is (its time and
    # component are the same; only its hits would add)
    within: tuple[str, ...] = ()
    # attached for the whole run, windows or not (entry only): an engine's
    # counting probe, which the BPF side counts in CNT_ROW_MARKS
    always: bool = False


# the probe sets that attach a point: every mode's, or the writes' too
FULL = frozenset({modes.EVERY_PROBE})


BOTH = frozenset({modes.EVERY_PROBE, modes.WRITE_PROBES})


class SymbolError(RuntimeError):
    """A target cannot be probed; the message is one line for the user."""


@dataclass
class Resolved:
    spec: ProbeSpec
    name: str            # demangled
    path: str
    offset: int          # file offset
    arg: int = 0         # cookie bits 16..: PH_SQL_STEP's zSql offset
    engine: str = ""   # whose phase enum spec.phase is in (its resolver's)


@dataclass
class Resolution:
    objects_checked: list[str] = field(default_factory=list)
    object_path: str | None = None
    probes: list[Resolved] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)   # spec prefixes not found
    version: str | None = None
    engine: str = ""   # the engine found (its resolver's)
    notes: list[str] = field(default_factory=list)     # degraded attribution
    # components measured by sampling inside their parent instead of probes
    sampled_split: dict[str, str] = field(default_factory=dict)  # comp -> parent
    # no write-group probes: leaders and queue come from syscalls (BPF side)
    groups_unprobed: bool = False
    # its rows come from its log's syscalls alone (no probes): the collector
    # turns the engine on with an attach line of kind "rows"
    syscall_rows: bool = False
