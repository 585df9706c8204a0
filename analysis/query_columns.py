"""What of the named queries follows the engine registry (engines/).

The SQL: each analysis/queries/*.sql keeps its hand-written text and,
between a ``-- gen:NAME`` and a ``-- /gen:NAME`` line, the text
``SQL_BLOCKS[NAME]`` returns, indented as the opening line.  `make docs`
(runners/docs.py) writes those blocks, and a test fails on a file that
differs: adding a component to an engine's unit reaches every query.

The views: a dataset's files hold the columns of the engines its runs
traced, as the code that wrote them knew them.  ``registry_columns`` is
what each view adds, as NULL, where no file has it, so a query naming
every engine's columns runs on a fleet of any engines (analysis/query.py).
"""
from __future__ import annotations

from typing import Callable

import engines
from analysis import components
from analysis import dataset as D
from runfolder.files import TABLES, WRITES_PARQUET

# the dataset's table of writes.parquet
WRITES = next(t for t, f in TABLES.items() if f == WRITES_PARQUET)


def component_means() -> str:
    """Each component's mean compensated time per row (us), every engine's
    in column order; NULL over rows of an engine without it."""
    return ",\n".join(f"avg({c}_adj_ns) / 1e3 AS {c}_us" for c in components.column_order())


def largest_other_share() -> str:
    """The largest share of the rows' raw time that one component holds,
    leaving out the queues (a row waits behind a sync inside its queue)."""
    queues = {e.queue for e in engines.ENGINES if e.queue}
    sums = [f"sum({c}_ns)" for c in components.column_order() if c not in queues]
    return ("greatest(" + ",\n         ".join(sums) + ") / sum(dur_ns) AS largest_other_share")


def engine_versions() -> str:
    """The runs table's version columns, one per engine."""
    return ", ".join(D.version_column(e.name) for e in engines.ENGINES)


SQL_BLOCKS: dict[str, Callable[[], str]] = {
    "component_means": component_means,
    "largest_other_share": largest_other_share,
    "engine_versions": engine_versions,
}


def registry_columns(table: str) -> dict[str, str]:
    """The columns a table's view has whatever its files hold -> SQL type
    (a name DuckDB and Spark both read): every engine's component columns
    in writes, every engine's version in runs."""
    if table == WRITES:
        return {col: "BIGINT" for c in components.column_order()
                for col in components.columns(c)}
    if table == D.RUNS:
        return {D.version_column(e.name): "STRING" for e in engines.ENGINES}
    return {}


def null_columns(table: str, present: list[str]) -> list[str]:
    """SQL select items for the registry's columns of table that present
    lacks: ``CAST(NULL AS type) AS name``."""
    have = {c.lower() for c in present}
    return [f"CAST(NULL AS {t}) AS {c}" for c, t in registry_columns(table).items()
            if c.lower() not in have]
