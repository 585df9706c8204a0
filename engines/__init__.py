"""The engine registry: every engine walscope traces, one unit each
(engines/base.py says what a unit holds).  Everything that differs by
engine loops over ENGINES or looks one up with get(); nothing else spells
an engine's component list.  A unit is found by its folder: every package
here whose ``__init__`` holds an ``ENGINE``, in the order of their
``order`` (adding an engine touches no file of the registry's)."""
from __future__ import annotations

import importlib
import pkgutil

from engines.base import (OTHER, SCHED_RUNQ, WAL_IO_SUMS, Component, Engine, IoSum,
                          Section)


def _units() -> tuple[Engine, ...]:
    found = []
    for m in pkgutil.iter_modules(__path__):
        if m.ispkg:
            unit = importlib.import_module(f"{__name__}.{m.name}")
            if isinstance(getattr(unit, "ENGINE", None), Engine):
                found.append(unit.ENGINE)
    return tuple(sorted(found, key=lambda e: (e.order, e.name)))


# resolution order: an object holding two engines is taken for the first
ENGINES: tuple[Engine, ...] = _units()
NAMES: tuple[str, ...] = tuple(e.name for e in ENGINES)
# the engine of a run folder, summary or record that names none: walscope
# traced one engine alone before it knew others, the first unit (order 10)
UNNAMED: str = ENGINES[0].name

__all__ = ["ENGINES", "NAMES", "Component", "Engine", "IoSum", "OTHER", "SCHED_RUNQ",
           "Section", "UNNAMED", "WAL_IO_SUMS", "background_prefixes", "get",
           "by_ws_engine", "titles"]


def get(name: str) -> Engine:
    for e in ENGINES:
        if e.name == name:
            return e
    raise KeyError(f"no engine {name!r} (known: {', '.join(NAMES)})")


def titles() -> str:
    """Every named engine's name for a sentence: "RocksDB, SQLite or
    PostgreSQL" (not the log-sync engine's, which names none: no mark)."""
    t = [e.title for e in ENGINES if e.mark]
    return ", ".join(t[:-1]) + " or " + t[-1] if len(t) > 1 else t[0]


def background_prefixes() -> tuple[str, ...]:
    """The name prefixes of every engine's own background threads (the
    others are the application's, which issue the rows)."""
    return tuple(e.background_threads for e in ENGINES if e.background_threads)


def by_ws_engine(values: dict[str, int]) -> dict[int, str]:
    """The records' engine numbers (enum ws_engine, read from BTF) -> names."""
    return {values[e.ws_engine]: e.name for e in ENGINES if e.ws_engine in values}
