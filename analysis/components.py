"""The components a row of each engine is split into: their names,
display order and colours, for every consumer, read from the engine
registry (engines/).

Names come from the engines' enums in probes/ (through
runfolder.records): a component's column in writes.parquet is
``<name>_ns`` (raw), ``<name>_adj_ns`` (compensated) and
``<name>_overhead_ns``; its key in summary.json's ``components`` is the
name.  Nothing else in walscope spells a component list.
"""
from __future__ import annotations

import engines
from runfolder import records as R

ENGINES = engines.NAMES

# a waiting write's queue (RocksDB's follower, PostgreSQL's WALWriteLock
# wait), split by what the writer it waited for was doing meanwhile
QUEUE_PARTS = ("queue_behind_sync", "queue_behind_wal_write", "queue_other")
# each part: the component the writer waited for was in (drawn in its colour)
QUEUE_BEHIND = dict(zip(QUEUE_PARTS, ("wal_sync_io", "wal_write_io", "other")))


# one order for every table and figure: each engine's own components in
# registry order (a name two engines share keeps its first place), the
# run queue and the residual last
DISPLAY_ORDER = tuple(dict.fromkeys(c.name for e in engines.ENGINES for c in e.components)) \
    + (engines.SCHED_RUNQ.name, engines.OTHER.name)

# display colours: a shared name keeps its first engine's
COLORS = {c.name: c.color for e in reversed(engines.ENGINES) for c in e.components}
COLORS.update({engines.SCHED_RUNQ.name: engines.SCHED_RUNQ.color,
               engines.OTHER.name: engines.OTHER.color})

# what each component holds (the first engine's words where two share a
# name: meaning(comp, engine) has each engine's own)
MEANING = {c: next(e.meaning(c) for e in engines.ENGINES if c in e.component_names())
           for c in DISPLAY_ORDER}


def column_order() -> list[str]:
    """Every engine's components as the columns of one table across engines
    (the named queries, the fleet report): each engine's display order in
    registry order, a name already placed keeping its place, so RocksDB's
    come first in their own order and each further engine adds its own
    after them.  Read from the registry at each call."""
    return list(dict.fromkeys(c for e in engines.ENGINES for c in e.component_names()))


def columns(comp: str) -> list[str]:
    """A component's writes.parquet columns: raw, compensated, and the
    probe overhead taken out."""
    return [f"{comp}_ns", f"{comp}_adj_ns", f"{comp}_overhead_ns"]


def meaning(comp: str, engine: str) -> str:
    return engines.get(engine).meaning(comp)


def display_order(engine: str) -> list[str]:
    """One engine's components in display order."""
    return engines.get(engine).component_names()


def names(engine: str, layout: R.Layout) -> list[str]:
    """An engine's components in slot order (slot i of comp_ns) in the
    layout its records were written with."""
    return layout.components(engine)


def io_component(io: str, kind: str, engine: str, layout: R.Layout) -> str | None:
    """The component of time in a write (io="write") or sync (io="sync")
    syscall on a file of that kind (enum ws_file_kind name); None where the
    engine's write path has none.  Each engine's rule is its unit's, the
    same as its BPF part's (one of the engine's components in layout)."""
    comp = engines.get(engine).io_component(io, kind)
    assert comp is None or comp in names(engine, layout), comp
    return comp
