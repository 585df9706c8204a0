"""The house rules a refactor must keep: data flows one way between the
layers, and each fact (components, syscall numbers, flags) has one source."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from analysis import components, syscalls
from collectors import records as R

ROOT = Path(__file__).resolve().parent.parent

# layer -> the packages (or single modules) its code may import
ALLOWED = {
    # an engine unit's declarations import nothing but the registry; its
    # resolve.py (finding probe points) is collector-side code
    "engines": {"engines"},
    "collectors": {"collectors", "engines"},
    # the collector's record layouts are the analysis' input format; the
    # mode table (pure data) says what a summary's mode recorded; the run
    # folder's table of files (pure) names what analysis and viz read
    "analysis": {"analysis", "collectors.records", "collectors.modes",
                 "collectors.run_folder", "engines"},
    "viz": {"viz", "analysis", "collectors.run_folder", "engines"},
    "runners": {"runners", "engines", "collectors", "analysis", "viz"},
}
OURS = set(ALLOWED) | {"tests", "bench", "probes"}


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of one of our packages in path."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        out += [(node.lineno, n) for n in names if n.split(".")[0] in OURS]
    return out


def allowed(module: str, rules: set[str]) -> bool:
    return any(module == r or module.startswith(r + ".") or r.startswith(module + ".")
               for r in rules)


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layers_import_one_way(layer):
    """probes -> collectors -> analysis -> viz; only runners (the CLI's
    orchestration) import them all."""
    def rules(p: Path) -> set[str]:
        if layer == "engines" and p.name == "resolve.py":
            return ALLOWED["collectors"]
        return ALLOWED[layer]
    bad = [f"{p.relative_to(ROOT)}:{line} imports {m}"
           for p in sorted((ROOT / layer).rglob("*.py"))
           for line, m in imports_of(p)
           # "from analysis import run" names a module, not a symbol
           if not allowed(m, rules(p)) and not allowed(m.rsplit(".", 1)[0], rules(p))]
    assert not bad, "\n".join(bad)


def test_a_traced_run_imports_one_way():
    """runners/trace.py's steps: plan -> collect -> record; none imports a
    later one (trace.py, the entry point, imports them all)."""
    steps = ["runners.plan", "runners.collect", "runners.record", "runners.trace"]
    for i, step in enumerate(steps):
        found = [m for _, m in imports_of(ROOT / (step.replace(".", "/") + ".py"))]
        later = [m for m in found for s in steps[i + 1:]
                 if m == s or m.startswith(s + ".")]
        assert not later, f"{step} imports {later}"
    assert set(steps[:-1]) <= set(found)   # the entry point calls every step


def test_the_import_rule_can_fail(tmp_path):
    """The checker sees a forbidden import (so the test above can fail)."""
    f = tmp_path / "x.py"
    f.write_text("from viz import report\nimport runners.trace\n")
    found = [m for _, m in imports_of(f)]
    assert not any(allowed(m, ALLOWED["analysis"]) for m in found)
    assert allowed("collectors.records", ALLOWED["analysis"])
    assert allowed("collectors.modes", ALLOWED["analysis"])
    assert allowed("collectors.run_folder", ALLOWED["viz"])
    assert not allowed("collectors.records", ALLOWED["viz"])
    assert not allowed("collectors.session", ALLOWED["analysis"])


def test_every_component_has_one_place_in_the_order_and_a_colour():
    from_header = set().union(*(components.names(e) for e in components.ENGINES))
    order = components.DISPLAY_ORDER
    assert sorted(order) == sorted(from_header) and len(set(order)) == len(order)
    assert from_header <= set(components.COLORS)


def test_io_components_are_the_engines_own():
    for engine in components.ENGINES:
        for io in ("write", "sync"):
            for kind in R.file_kinds().values():
                c = components.io_component(io, kind, engine)
                assert c is None or c in components.names(engine)
    assert components.io_component("sync", "wal") == "wal_sync_io"
    assert components.io_component("write", "journal", "sqlite") == "journal_write_io"
    assert components.io_component("write", "sst") is None


def test_syscall_numbers_are_the_systems():
    """The header's x86_64 numbers against the C library's own table."""
    unistd = syscalls.UNISTD
    if not unistd.exists():
        pytest.skip(f"{unistd} not installed (linux-libc-dev)")
    table = {m.group(1): int(m.group(2)) for m in
             re.finditer(r"#define __NR_(\w+) (\d+)", unistd.read_text())}
    ours = R.syscalls()
    assert len(ours) >= 20
    for nr, name in ours.items():
        if name in table:   # uprobe(2) and uretprobe(2) are newer than some headers
            assert table[name] == nr, name
    assert {syscalls.name(n) for n in (1, 75, 257)} == {"write", "fdatasync", "openat"}
    assert syscalls.name(39) == "getpid"    # not the header's: the system's


def test_write_flags_come_from_the_header():
    header = (ROOT / "probes" / "walscope.h").read_text()
    for name, value in re.findall(r"\tWS_WF_(\w+) = (0x[0-9a-f]+),", header):
        assert R.write_flag(name) == int(value, 16)
    assert R.write_flag("leader") == 1


@pytest.mark.root
def test_the_test_layout_is_the_builds(tmp_path):
    """tests/golden/layout.json (what the unit tier reads records with) is
    the build's layout: regenerate it with `make golden` after changing
    probes/walscope.h."""
    import json
    golden = str(ROOT / "tests" / "golden" / "layout.json")
    build = str(R.BTF_JSON)
    names = {(t["kind"], t["name"]) for t in json.loads(R.Path(build).read_text())["types"]
             if t.get("name", "").startswith("ws_") and t["kind"] in ("STRUCT", "ENUM")}
    assert len(names) > 20
    for kind, name in sorted(names):   # what the readers derive, not BTF's type ids
        if kind == "STRUCT":
            assert R.struct_dtype(name, golden) == R.struct_dtype(name, build), \
                f"{name}: run `make golden`"
        else:
            assert R.enum_values(name, golden) == R.enum_values(name, build), \
                f"{name}: run `make golden`"


def documented_lines() -> list[tuple[str, str]]:
    """(file, command line as written) of every command in a ```sh block of
    README.md and docs/."""
    out = []
    for f in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
              *sorted((ROOT / "studies").glob("*/README.md"))]:
        for block in re.findall(r"```sh\n(.*?)```", f.read_text(), re.S):
            for line in block.splitlines():
                line = line.split("  #")[0].strip()
                if line.startswith(("sudo ", "./", "python", "viz/", "runners/", "make ")):
                    out.append((f.name, line))
    return out


def documented_commands() -> list[tuple[str, list[str]]]:
    """(file, argv) of every command in a ```sh block of README.md and docs/."""
    import shlex
    out = []
    for where, line in documented_lines():
        argv = shlex.split(line)
        out.append((where, argv[1:] if argv[0] == "sudo" else argv))
    return out


def walscope_commands() -> set[str]:
    """The walscope commands another module's parser reads."""
    from runners import walscope
    return set(walscope.DELEGATED)


def test_documented_commands_exist_and_parse():
    """Every command the README and docs show names a real program and
    options its parser accepts (a renamed flag fails here, not for a user)."""
    from runners import cli
    seen = set()
    cmds = documented_commands()
    assert len(cmds) >= 10
    for where, argv in cmds:
        prog = argv[0]
        seen.add(prog)
        if prog == "./trace_wal.py":
            args = [a for a in argv[1:] if a != "--"] if "--" not in argv[1:] else \
                argv[1:argv.index("--")] + ["--", *argv[argv.index("--") + 1:]]
            try:
                cli.build_parser().parse_args(args)
            except SystemExit:
                raise AssertionError(f"{where}: {' '.join(argv)}") from None
        elif prog == "./walscope" and argv[1] in walscope_commands():
            pass    # its module parses it: tests/test_commands.py runs it as written
        elif prog == "./walscope":
            from runners import walscope
            try:
                walscope.build_parser().parse_args(argv[1:])
            except SystemExit:
                raise AssertionError(f"{where}: {' '.join(argv)}") from None
        elif prog == "./runners/study.py":
            from runners import study
            try:
                a = study.build_parser().parse_args(argv[1:])
            except SystemExit:
                raise AssertionError(f"{where}: {' '.join(argv)}") from None
            assert set(a.studies) <= set(study.STUDIES) | {"all"}, f"{where}: {argv}"
        elif prog == "make":
            assert re.search(rf"^{argv[1]}:", (ROOT / "Makefile").read_text(), re.M), argv
        elif prog in ("python", "python3") and argv[1] == "-m":
            assert (ROOT / argv[2].replace(".", "/")).exists() or \
                (ROOT / (argv[2].replace(".", "/") + ".py")).exists(), argv
        elif prog.startswith("./") or "/" in prog:
            assert (ROOT / prog).exists(), f"{where}: {prog}"
            for a in argv[1:]:
                if a.endswith(".toml"):
                    assert (ROOT / a).exists(), f"{where}: {a}"
    assert {"./trace_wal.py", "./walscope", "make", "./setup.sh", "./runners/study.py"} <= seen
