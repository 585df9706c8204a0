"""The mode table (probepoints/modes.py) is the only place a mode is
defined: the command lines offer its rows, every field is read, nothing
else compares a mode's name, and what the tracer does in each mode is what
it did before the table (the collector's options, the defaults it plans)."""
from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from probepoints import modes

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "probepoints" / "modes.py"
# walscope's own code (the tests may name modes: they check what a mode did)
CODE = ["collectors", "analysis", "viz", "runners", "engines", "bench"]


def code_files() -> list[Path]:
    files = [p for d in CODE for p in sorted((ROOT / d).rglob("*.py"))]
    return files + sorted(ROOT.glob("*.py"))


def names_a_mode(node: ast.expr) -> bool:
    """A string literal that is a mode's name, or a literal tuple, list or
    set holding one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in modes.MODES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(names_a_mode(e) for e in node.elts)
    return False


def mode_comparisons(path: Path) -> list[str]:
    """line: text of every comparison of something called a mode (opts.mode,
    summary.get("mode"), mode) against a mode's name written out."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        literal = [o for o in operands if names_a_mode(o)]
        other = [o for o in operands if not names_a_mode(o)]
        if literal and any("mode" in ast.unparse(o).lower() for o in other):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_mode_is_compared_outside_the_table():
    """A decision that differs by mode reads a field of the mode's row."""
    bad = [f"{p.relative_to(ROOT)}:{hit}" for p in code_files() if p != TABLE
           for hit in mode_comparisons(p)]
    assert not bad, "compare a field of probepoints/modes.py's row instead:\n" + "\n".join(bad)


def test_the_comparison_rule_can_fail(tmp_path):
    """The checker sees a planted comparison (so the test above can fail),
    and leaves alone what is not a mode."""
    f = tmp_path / "x.py"
    f.write_text('if opts.mode == "sample":\n    pass\n'
                 'every = summary.get("mode") in ("full", "writes")\n'
                 'windowed = "window" != mode\n'
                 'wal = journal_mode == "wal"\n'
                 'sync = args.synchronous == "full"\n')
    assert [h.split(":")[0] for h in mode_comparisons(f)] == ["1", "3", "4"]
    assert code_files() and TABLE not in [p for p in code_files() if p != TABLE]


def test_every_mode_offered_has_a_row():
    """trace_wal.py's --mode and collectors/symbols.py's offer the table's
    rows, default to its default, and --help describes each row."""
    from runners.command import cli
    parser = cli.build_parser()
    action = next(a for a in parser._actions if "--mode" in a.option_strings)
    assert tuple(action.choices) == tuple(modes.MODES)
    assert action.default == modes.DEFAULT == "budget"
    assert modes.MODES[modes.DEFAULT] is modes.BUDGET
    for m in modes.MODES.values():
        assert f"{m.name}: {m.help}" in action.help
    import subprocess
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "collectors.symbols",
                        "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr[-500:]
    assert "{" + ",".join(modes.MODES) + "}" in p.stdout
    assert f"(default: {modes.DEFAULT})" in " ".join(p.stdout.split())


def test_every_field_is_read():
    """No field of a row that nothing reads (outside the table itself)."""
    fields = {f.name for f in dataclasses.fields(modes.Mode)} - {"name"}
    fields |= {n for n, v in vars(modes.Mode).items() if isinstance(v, property)}
    read: set[str] = set()
    for p in code_files():
        if p != TABLE:
            read |= {n.attr for n in ast.walk(ast.parse(p.read_text()))
                     if isinstance(n, ast.Attribute)}
    assert fields - read == set()


def test_the_rows_agree_with_themselves():
    """Each row is one consistent mode."""
    rank = {None: 0, modes.WRITE_PROBES: 1, modes.EVERY_PROBE: 2}
    for m in modes.MODES.values():
        assert modes.get(m.name) is m and m.probe_set in rank
        assert not (m.duty_windows and m.budget_windows)
        if m.windowed:   # windows open and close full's probes
            assert m.probe_set == modes.EVERY_PROBE and m.sample_hz
        if m.probe_set is None:   # nothing to attach: no object to follow
            assert not (m.follows_objects or m.groups_unprobed or m.records_writes)
        if m.offcpu_stacks:
            assert m.sched
        for other in m.fewer_probes:
            assert rank[modes.MODES[other].probe_set] < rank[m.probe_set]
    assert modes.get(None) is None and modes.get("?") is None


def test_every_probe_set_an_engine_names_is_a_rows():
    """The probe sets the engines' probe tables name are the table's."""
    from probepoints.points import BOTH
    from engines.postgres import resolve as PR
    from engines.rocksdb import resolve as RR
    sets = {m.probe_set for m in modes.MODES.values()} - {None}
    named = set().union(*(s.modes for s in RR.PROBES + PR.FUNCTIONS),
                        *(ms for _, ms in PR.MARKERS.values()), BOTH)
    assert named == sets


# what each mode did before the table (runners/command/trace.py's comparisons):
# the collector's options that follow from the mode
BEFORE = {
    "budget": {"no-syscalls": False, "groups-unprobed": False, "follow-objects": True,
               "window-ms": 50, "window-gap-ms": None, "budget": 0.02},
    "full": {"no-syscalls": False, "groups-unprobed": False, "follow-objects": True,
             "window-ms": None, "window-gap-ms": None, "budget": None},
    "writes": {"no-syscalls": False, "groups-unprobed": True, "follow-objects": True,
               "window-ms": None, "window-gap-ms": None, "budget": None},
    "sample": {"no-syscalls": True, "groups-unprobed": False, "follow-objects": False,
               "window-ms": None, "window-gap-ms": None, "budget": None},
    "window": {"no-syscalls": False, "groups-unprobed": False, "follow-objects": True,
               "window-ms": 50, "window-gap-ms": 2450, "budget": None},
}


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_collector_options_are_what_they_were(name, tmp_path):
    from collectors import topology
    from runners.command.plan import Plan, TraceOptions, collector_options
    (tmp_path / "calibration.json").write_text(json.dumps({"pair_ns": 1500}))
    plan = Plan(TraceOptions(command=["true"], mode=name), None, [], None,
                topology.Topology(("U",), "uniform"), tmp_path, 0, "off", "off", False)
    got = collector_options(plan)
    assert {k: got[k] for k in BEFORE[name]} == BEFORE[name]
    assert (got["hit-ns"] is not None) == (name == "budget")


def test_emptiness_and_cost_warnings_are_what_they_were():
    """A sample run is empty when no engine was found; the others when no
    write was seen; an unknown mode's run is judged by its writes."""
    from runners.command.record import is_empty

    def summary(mode: str, writes: int, found: list[str]) -> dict:
        return {"mode": mode, "writes": {"count": writes}, "engines_found": found}
    assert is_empty(summary("sample", 0, []))
    assert not is_empty(summary("sample", 0, ["rocksdb"]))
    for name in ("budget", "full", "writes", "window", "?"):
        assert is_empty(summary(name, 0, ["rocksdb"]))
        assert not is_empty(summary(name, 3, []))
    assert {n for n, m in modes.MODES.items() if m.every_write} == {"full", "writes"}
    assert {n for n, m in modes.MODES.items() if m.sched} == set(modes.MODES) - {"sample"}
    assert {n for n, m in modes.MODES.items() if m.offcpu_stacks} == {"full"}
    assert {n for n, m in modes.MODES.items() if m.sample_hz is None} == {"full", "writes"}


def test_the_table_reads_the_mode():
    """The sample table for a mode without write rows (and a summary that
    names no mode); the cheaper modes the overhead line suggests."""
    from analysis import table
    sample = {"writes": {"count": 0}, "sample_breakdown": {
        "wal": {"samples": 3, "share": 1.0, "est_cpu_ns": 1e6}}}
    assert table.format_table({**sample, "mode": "sample"}).startswith("on-CPU (sampled)")
    assert table.format_table(sample).startswith("on-CPU (sampled)")
    assert modes.WRITES.fewer_probes == ("sample",)
    assert modes.FULL.fewer_probes == modes.BUDGET.fewer_probes == ("writes", "sample")
