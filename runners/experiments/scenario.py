"""Scenario matrices: load and validate runners/experiments/scenarios/*.toml, expand cells.

A scenario file:

    name = "wal_sync_pe"
    command = "db_bench --benchmarks={benchmarks} --sync={sync} --threads={threads} --db={db}"
    repeats = 3            # untraced baseline runs per cell
    mode = "writes"        # trace mode of the traced run (full, writes, sample)
    aa_by = "sync"         # the A/A pairs: two cells of each value of this axis
                           # run twice a round (default: two cells in all)
    traced_rounds = 5      # rounds with a traced run of every cell (default 1:
                           # the middle round), at most repeats
    [axes]                 # every combination is a cell
    sync = [true, false]
    pin = ["P", "E", "none"]
    [fixed]                # placeholders with one value
    num = 20000
    [fixed_by.sync.false]  # fixed values for the cells of one axis value
    num = 200000           # (unsynced writes are 30x faster: runs of a length)

Placeholders in `command` must be axes, fixed values, `{db}` (the run's
database folder, fresh per run), `{cache}` (one folder per matrix, kept
across runs, e.g. for a loaded database template) or `{root}` (this
checkout, for the programs it builds, e.g. `{root}/.output/zipf_writer`); `pin` is the only axis
that need not appear (it becomes a taskset prefix).  Errors name the file, the key and its line.
"""
from __future__ import annotations

import itertools
import re
import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probepoints import modes

ROOT = Path(__file__).resolve().parents[2]
# the shipped scenario files (the studies' matrices among them)
SCENARIOS = Path(__file__).resolve().parent / "scenarios"

TOP_KEYS = {"name": str, "description": str, "command": str, "repeats": int,
            "mode": str, "axes": dict, "fixed": dict, "timeout_s": int, "aa_by": str,
            "traced_rounds": int, "fixed_by": dict}
REQUIRED = ("name", "command", "axes")
KNOWN_AXES = {"sync", "threads", "pin", "disable_wal", "manual_wal_flush",
              "benchmarks", "num", "value_size", "key_size", "alpha",
              "preclude_last_level_data_seconds", "preserve_internal_time_seconds",
              "enable_pipelined_write", "batch_size", "journal_mode", "synchronous",
              "clients", "warehouses", "scale", "kill_after_s", "writes", "keys",
              "last_level_temperature", "tier_s", "duration_s"}
SCALARS = (bool, int, float, str)
# A/A pairs a family's noise band is made from (docs/matrices.md)
AA_PAIRS = 2
PINS = ("P", "E", "none")
# the modes a scenario file may name: those without windows (the file format
# predates them; a study runs its matrix in the default mode all the same,
# runners/study.py)
SCENARIO_MODES = tuple(m.name for m in modes.MODES.values() if not m.windowed)


class ScenarioError(ValueError):
    """One line: file, key, line number, what is wrong."""


@dataclass(frozen=True)
class Cell:
    values: dict[str, Any]

    @property
    def name(self) -> str:
        def fmt(v: Any) -> str:
            return str(v).lower() if isinstance(v, bool) else str(v)
        return "_".join(f"{k}-{re.sub(r'[^A-Za-z0-9.]', '', fmt(v))}"
                        for k, v in self.values.items())


@dataclass
class Scenario:
    path: Path
    name: str
    command: str
    axes: dict[str, list[Any]]
    fixed: dict[str, Any] = field(default_factory=dict)
    repeats: int = 1
    mode: str = "writes"
    description: str = ""
    timeout_s: int = 1800
    aa_by: str = ""     # the axis whose values are the A/A families ("" : one)
    traced_rounds: int = 1   # rounds with a traced run of each cell
    # axis -> value (as a cell names it) -> fixed values for those cells
    fixed_by: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def fixed_for(self, cell: Cell) -> dict[str, Any]:
        """The fixed values fixed_by gives this cell."""
        out: dict[str, Any] = {}
        for axis, by_value in self.fixed_by.items():
            v = cell.values.get(axis)
            out.update(by_value.get(str(v).lower() if isinstance(v, bool) else str(v), {}))
        return out

    def family(self, cell: Cell) -> str:
        """The cell's A/A family: its value of aa_by ("all" without one)."""
        if not self.aa_by:
            return "all"
        v = cell.values[self.aa_by]
        return f"{self.aa_by}-{str(v).lower() if isinstance(v, bool) else v}"

    def aa_cells(self) -> dict[str, list[Cell]]:
        """The A/A pairs' cells by family: each family's first two cells (one
        where it has one), each run twice a round, so every family's noise
        band comes from two pairs."""
        out: dict[str, list[Cell]] = {}
        for c in self.cells():
            fam = out.setdefault(self.family(c), [])
            if len(fam) < AA_PAIRS:
                fam.append(c)
        return out

    def cells(self) -> list[Cell]:
        keys = list(self.axes)
        return [Cell(dict(zip(keys, combo)))
                for combo in itertools.product(*(self.axes[k] for k in keys))]

    def argv(self, cell: Cell, db: str, cache: str = "") -> list[str]:
        vals = {**self.fixed, **self.fixed_for(cell), **cell.values, "db": db,
                "cache": cache, "root": str(ROOT)}
        vals = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in vals.items()}
        return self.command.format(**vals).split()


def _line_of(text: str, key: str) -> int:
    for i, line in enumerate(text.splitlines(), 1):
        if re.match(rf"\s*\[?\s*{re.escape(key)}\s*[=\]]", line):
            return i
    return 0


def load(path: str | Path) -> Scenario:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ScenarioError(f"{path}: {e.strerror}") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: not valid TOML: {e}") from None

    def err(key: str, msg: str) -> ScenarioError:
        return ScenarioError(f"{path}:{_line_of(text, key.split('.')[-1])}: {key}: {msg}")

    for k, v in raw.items():
        if k not in TOP_KEYS:
            raise err(k, f"unknown key (expected one of {', '.join(sorted(TOP_KEYS))})")
        if not isinstance(v, TOP_KEYS[k]) or (TOP_KEYS[k] is int and isinstance(v, bool)):
            raise err(k, f"must be a {TOP_KEYS[k].__name__}, got {type(v).__name__}")
    for k in REQUIRED:
        if k not in raw:
            raise ScenarioError(f"{path}: missing required key '{k}'")
    axes = raw["axes"]
    if not axes:
        raise err("axes", "needs at least one axis")
    for k, v in axes.items():
        if k not in KNOWN_AXES:
            raise err(f"axes.{k}", f"unknown axis (known: {', '.join(sorted(KNOWN_AXES))})")
        if not isinstance(v, list) or not v:
            raise err(f"axes.{k}", "must be a non-empty list of values")
        for x in v:
            if not isinstance(x, SCALARS):
                raise err(f"axes.{k}", f"values must be scalars, got {type(x).__name__}")
        if k == "pin" and any(x not in PINS for x in v):
            raise err("axes.pin", 'values must be "P", "E" or "none"')
    fixed = raw.get("fixed", {})
    for k, v in fixed.items():
        if not isinstance(v, SCALARS):
            raise err(f"fixed.{k}", f"must be a scalar, got {type(v).__name__}")
        if k in axes:
            raise err(f"fixed.{k}", "is also an axis")
    mode = raw.get("mode", "writes")
    if mode not in SCENARIO_MODES:
        raise err("mode", f"must be {', '.join(SCENARIO_MODES[:-1])} or {SCENARIO_MODES[-1]}")
    repeats = raw.get("repeats", 1)
    if not 0 <= repeats <= 50:
        raise err("repeats", "must be between 0 and 50")
    names = {n for _, n, _, _ in string.Formatter().parse(raw["command"]) if n}
    known = set(axes) | set(fixed) | {"db", "cache", "root"}
    for n in sorted(names - known):
        raise err("command", f"placeholder {{{n}}} is neither an axis nor a fixed value")
    for a in sorted(set(axes) - names - {"pin"}):
        raise err(f"axes.{a}", "is not used in command")
    aa_by = raw.get("aa_by", "")
    if aa_by and aa_by not in axes:
        raise err("aa_by", f"must name an axis ({', '.join(axes)})")
    fixed_by = raw.get("fixed_by", {})
    for axis, by_value in fixed_by.items():
        if axis not in axes:
            raise err(f"fixed_by.{axis}", "must name an axis")
        names = {str(x).lower() if isinstance(x, bool) else str(x) for x in axes[axis]}
        for v, table in by_value.items():
            if v not in names or not isinstance(table, dict):
                raise err(f"fixed_by.{axis}.{v}", f"must be a table for one of {sorted(names)}")
            for k in table:
                if k not in fixed:
                    raise err(f"fixed_by.{axis}.{v}.{k}", "is not a fixed value")
    traced_rounds = raw.get("traced_rounds", 1)
    if not 1 <= traced_rounds <= max(repeats, 1):
        raise err("traced_rounds", f"must be between 1 and repeats ({max(repeats, 1)})")
    return Scenario(path, raw["name"], raw["command"], axes, fixed, repeats, mode,
                    raw.get("description", ""), raw.get("timeout_s", 1800), aa_by,
                    traced_rounds, fixed_by)
