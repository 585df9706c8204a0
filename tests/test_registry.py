"""The engine registry holds each engine's facts once, and they agree with
each other: a unit's components are its header's, every component is drawn
in the flame graphs, and whatever a unit names (sampling rules, its
section's rows, its queue) is one of its own components."""
from __future__ import annotations

import dataclasses

import pytest

import engines
from analysis import components, folded, sampling, summary, windows
from tests.conftest import GOLDEN

UNITS = [pytest.param(e, id=e.name) for e in engines.ENGINES]


@pytest.mark.parametrize("unit", UNITS)
def test_a_units_components_are_its_headers(unit):
    """Per engine, not over the union: a name another engine has too
    (lock_wait, checkpoint, wal_sync_io) must still be this one's."""
    assert sorted(unit.component_names()) == sorted(GOLDEN.components(unit.name))


@pytest.mark.parametrize("unit", UNITS)
def test_every_component_has_its_frames(unit):
    """A component without frames would drop out of phase.folded."""
    drawn = {name for name, _ in unit.frames}
    for c in unit.component_names():
        if c == unit.queue:   # drawn split by what the writer ahead did
            assert set(components.QUEUE_PARTS) <= drawn, unit.name
        else:
            assert c in drawn, (unit.name, c)
    assert drawn <= set(unit.component_names()) | set(components.QUEUE_PARTS)


@pytest.mark.parametrize("unit", UNITS)
def test_what_a_unit_names_is_its_own(unit):
    own = set(unit.component_names())
    assert {c for _, c in unit.sample_rules} <= own
    assert {c for c, _ in unit.split_symbols} <= own
    assert {c for _, cs in unit.cpu_groups for c in cs} <= own
    assert unit.queue is None or unit.queue in own
    if unit.section:
        assert set(unit.section.rows_with) <= own
        for name, s in unit.section.io_sums:
            assert isinstance(s.syscalls, tuple) or s.syscalls in ("write", "sync"), name
            assert set(s.kinds) <= set(GOLDEN.file_kinds().values()), name


def test_shared_tables_are_the_units():
    """sampling's rules, splits and windows' CPU groups are read from the
    units, in registry order (the first engine's rules match first)."""
    assert sampling.RULES == tuple(r for e in engines.ENGINES for r in e.sample_rules)
    assert sampling.classify_symbol("rocksdb::crc32c::Extend") == "crc"
    assert sampling.classify_symbol("sqlite3VdbeExec") == "sql_exec"
    assert set(sampling.SPLIT_SYMBOLS) == {c for e in engines.ENGINES for c, _ in e.split_symbols}
    assert set(windows.CPU_GROUPS) == {g for e in engines.ENGINES for g, _ in e.cpu_groups}
    assert engines.background_prefixes() == ("rocksdb:",)


def test_a_units_section_reaches_the_summary_and_the_table(monkeypatch):
    """A unit's own section is built from the run's totals by the unit:
    summary.json carries it under the unit's name and the table prints its
    lines, with no edit outside the unit."""
    import numpy as np
    import pandas as pd

    from analysis.compensation import Calibration
    from analysis.table import format_table

    rocks = engines.get("rocksdb")
    seen: dict = {}

    def build(t):
        seen.update(t)
        return {"rows_twice": 2 * t["rows"], "wal_bytes": t["io"]["wal_bytes"]["bytes"]}

    section = engines.Section(
        io_sums=(("wal_bytes", engines.IoSum("write", ("wal",), False)),),
        rows_with=("memtable",), build=build,
        lines=lambda s: [f"made-up: {s['rocksdb']['rows_twice']} rows twice"])
    patched = dataclasses.replace(rocks, section=section)
    monkeypatch.setattr(engines, "ENGINES",
                        tuple(patched if e is rocks else e for e in engines.ENGINES))
    comps = components.names("rocksdb", GOLDEN)
    n = 3
    w = pd.DataFrame({"dur_ns": [10, 20, 30], "dur_adj_ns": [10, 20, 30],
                      "leader": [1, 0, 1], "partial": 0, "truncated": 0, "probe_hits": 0,
                      **{f"{c}_{x}": np.zeros(n, np.int64) for c in comps
                         for x in ("ns", "adj_ns", "overhead_ns")},
                      **{f"{p}_ns": np.zeros(n, np.int64) for p in components.QUEUE_PARTS}})
    w.loc[1, "memtable_ns"] = 5
    write = next(iter(sorted(summary.syscalls.writes(GOLDEN))))
    io = pd.DataFrame({"kind": ["wal", "sst"], "syscall": [write, write],
                       "in_write": [False, False], "lat_ns": [7, 9], "bytes": [100, 4000]})
    cal = Calibration(uprobe_ns=1000, uretprobe_ns=1000)
    s = summary.summarize(w, io, {}, cal, "rocksdb", layout=GOLDEN)
    assert seen["rows"] == 3 and seen["rows_with"] == {"memtable": 1}
    assert s["rocksdb"] == {"rows_twice": 6, "wal_bytes": 100}
    s.update(mode="full", self_check=None)
    assert "made-up: 6 rows twice" in format_table(s)


# the layers that know no engine by name: they loop over the registry
GENERIC = ("analysis", "viz", "collectors", "runners/command", "runners/docs.py",
           "trace_wal.py", "engines/__init__.py", "engines/base.py")
# where a generic layer may spell a component: the queue parts' definition
SPELLS_COMPONENTS = {"analysis/components.py"}
# a component's columns (writes.parquet, the named queries)
COLUMN_SUFFIXES = ("_ns", "_adj_ns", "_overhead_ns", "_us")


def _engine_words() -> tuple[set[str], set[str]]:
    """Every engine's names, and the components only units declare (the
    shared run queue and residual are everyone's)."""
    names = {w for e in engines.ENGINES for w in (e.name, e.title)}
    comps = {c.name for e in engines.ENGINES for c in e.components}
    return names, comps


def test_no_engine_or_component_is_spelled_outside_the_units():
    """An engine's name or one of its components written in a generic layer
    is a place adding an engine or a component would have to edit."""
    import ast

    from tests.conftest import ROOT
    names, comps = _engine_words()
    files = []
    for g in GENERIC:
        p = ROOT / g
        files += [p] if p.is_file() else sorted(p.rglob("*.py"))
    found = []
    for f in files:
        rel = str(f.relative_to(ROOT))
        tree = ast.parse(f.read_text())
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef))
                and n.body and isinstance(n.body[0], ast.Expr)
                and isinstance(n.body[0].value, ast.Constant)}
        for n in ast.walk(tree):
            if not isinstance(n, ast.Constant) or not isinstance(n.value, str) \
                    or id(n) in docs:
                continue
            spelled = n.value in comps or any(
                n.value == f"{c}{suffix}" for c in comps for suffix in COLUMN_SUFFIXES)
            if n.value in names or (spelled and rel not in SPELLS_COMPONENTS):
                found.append(f"{rel}:{n.lineno}: {n.value!r}")
    assert not found, found
