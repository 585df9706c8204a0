"""The house rules a refactor must keep: data flows one way between the
layers, and each fact (components, syscall numbers, flags) has one source."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from analysis import components, syscalls
from runfolder import records as R
from tests.conftest import GOLDEN

ROOT = Path(__file__).resolve().parent.parent

# layer -> the packages (or single modules) its code may import
ALLOWED = {
    # the bottom: the run modes, probe-point types and the ELF/USDT readers
    # (what every engine's resolver reads objects with) import nothing
    "probepoints": {"probepoints"},
    # an engine unit's declarations import nothing but the registry
    # (engines/base.py); its resolve.py finds probe points with the readers
    # (RESOLVERS below)
    "engines": {"engines"},
    # the run folder's format: its files (stdlib only) and the record
    # layouts, which name components by the registry
    "runfolder": {"runfolder", "engines"},
    "collectors": {"collectors", "engines", "probepoints", "runfolder"},
    # the analysis reads run folders, the modes (pure data) that say what a
    # summary's mode recorded, and the registry
    "analysis": {"analysis", "runfolder", "probepoints.modes", "engines"},
    "viz": {"viz", "analysis", "runfolder.files", "engines"},
    # runners/, split by job: the traced programs run on their own (the
    # standard library only); the commands (trace_wal.py, walscope) drive
    # every layer; experiments run the commands' trace() many times
    "runners.workloads": {"runners.workloads"},
    "runners.command": {"runners.command", "engines", "probepoints", "runfolder",
                        "collectors", "analysis", "viz"},
    "runners.experiments": {"runners.experiments", "runners.command", "engines",
                            "probepoints", "runfolder", "collectors", "analysis", "viz"},
    # runners/*.py: study.py (the documented entry to experiments/study.py)
    # and docs.py (`make docs`, which reads every layer)
    "runners": {"runners", "engines", "probepoints", "runfolder", "collectors",
                "analysis", "viz"},
}
# an engine's resolve.py: the readers and its own unit's declarations
RESOLVERS = {"engines", "probepoints"}
OURS = {layer.split(".")[0] for layer in ALLOWED} | {"tests", "bench", "probes"}


def is_module(name: str) -> bool:
    """A module or package of this tree (not a name defined in one)."""
    p = ROOT / name.replace(".", "/")
    return p.with_suffix(".py").exists() or p.is_dir()


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of one of our modules in path; for
    `from P import n`, P.n if that is a module (from analysis import run),
    else P (n is a name P defines)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [f"{node.module}.{a.name}" if is_module(f"{node.module}.{a.name}")
                     else node.module for a in node.names]
        else:
            continue
        out += [(node.lineno, n) for n in names if n.split(".")[0] in OURS]
    return out


def allowed(module: str, rules: set[str]) -> bool:
    return any(module == r or module.startswith(r + ".") for r in rules)


def layer_files(layer: str) -> list[Path]:
    """The layer's Python files, less those of a layer inside it (runners/
    keeps only its own top-level files)."""
    inner = [ROOT / other.replace(".", "/") for other in ALLOWED
             if other.startswith(layer + ".")]
    return [p for p in sorted((ROOT / layer.replace(".", "/")).rglob("*.py"))
            if not any(d in p.parents for d in inner)]


def backward(p: Path, rules: set[str]) -> list[str]:
    return [f"{p.relative_to(ROOT) if p.is_relative_to(ROOT) else p.name}:{line} imports {m}"
            for line, m in imports_of(p) if not allowed(m, rules)]


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layers_import_one_way(layer):
    """probepoints -> engines -> runfolder -> collectors -> analysis -> viz
    -> runners; inside runners, workloads import none of it, experiments
    import the commands."""
    def rules(p: Path) -> set[str]:
        if layer == "engines" and p.name == "resolve.py":
            return RESOLVERS
        return ALLOWED[layer]
    files = layer_files(layer)
    assert files, layer
    bad = [b for p in files for b in backward(p, rules(p))]
    assert not bad, "\n".join(bad)


def folder_graph() -> dict[str, set[str]]:
    """Top-level folder -> the folders its Python files import (an engine's
    resolve.py counted as its folder's, engines/)."""
    graph: dict[str, set[str]] = {}
    for layer in ALLOWED:
        top = layer.split(".")[0]
        for p in layer_files(layer):
            graph.setdefault(top, set()).update(
                m.split(".")[0] for _, m in imports_of(p) if m.split(".")[0] != top)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every folder that reaches itself, with the path back."""
    out = []
    for start in graph:
        todo, seen = [[start]], set()
        while todo:
            path = todo.pop()
            for nxt in sorted(graph.get(path[-1], ())):
                if nxt == start:
                    out.append(path + [start])
                elif nxt not in seen:
                    seen.add(nxt)
                    todo.append(path + [nxt])
    return out


def test_no_folder_imports_itself_back():
    """No folder cycle: the engines' resolvers read objects with
    probepoints/, which imports nothing of walscope's, so collectors ->
    engines never comes back (runners/ counted as one folder)."""
    assert not cycles(folder_graph()), cycles(folder_graph())
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}})   # the check can fail


def test_every_file_is_in_one_layer():
    """No Python file of runners/ escapes the rules (a new subpackage needs
    its own line in ALLOWED)."""
    files = [p for layer in ALLOWED for p in layer_files(layer)]
    assert len(files) == len(set(files))
    assert set((ROOT / "runners").rglob("*.py")) <= set(files)
    assert (ROOT / "runners" / "study.py") in layer_files("runners")
    assert (ROOT / "runners" / "command" / "cli.py") not in layer_files("runners")


def test_a_traced_run_imports_one_way():
    """runners/command/trace.py's steps: plan -> collect -> record; none
    imports a later one (trace.py, the entry point, imports them all)."""
    steps = ["runners.command.plan", "runners.command.collect", "runners.command.record",
             "runners.command.trace"]
    for i, step in enumerate(steps):
        found = [m for _, m in imports_of(ROOT / (step.replace(".", "/") + ".py"))]
        later = [m for m in found for s in steps[i + 1:]
                 if m == s or m.startswith(s + ".")]
        assert not later, f"{step} imports {later}"
    assert set(steps[:-1]) <= set(found)   # the entry point calls every step


def test_the_import_rule_can_fail(tmp_path):
    """The checker sees a forbidden import in each form (so the test above
    can fail), and lets the allowed ones through."""
    f = tmp_path / "x.py"
    f.write_text("from viz import report\nimport runners.command.trace\n"
                 "from collectors import session\nfrom collectors.session import Collector\n")
    assert len(backward(f, ALLOWED["analysis"])) == 4
    f.write_text("from runners.experiments.study import main\n"
                 "from runners.experiments import run_matrix\nfrom runners import experiments\n"
                 "import runners.experiments.scenario\nfrom runners import study\n")
    assert len(backward(f, ALLOWED["runners.command"])) == 5
    f.write_text("from runners.command import defaults\nfrom runners.command.trace import trace\n"
                 "from collectors.session import Collector\n")
    assert len(backward(f, ALLOWED["runners.workloads"])) == 3
    assert not backward(f, ALLOWED["runners.experiments"])
    f.write_text("from runfolder import records as R\nfrom runfolder.records import Layout\n"
                 "from probepoints import modes\nfrom runfolder import files\nimport engines\n"
                 "from analysis import run\n")
    assert not backward(f, ALLOWED["analysis"])
    assert len(backward(f, ALLOWED["viz"])) == 3   # records (twice), modes
    f.write_text("from collectors import symbols\nfrom probepoints.elf import embedded\n"
                 "import engines\n")
    assert backward(f, RESOLVERS) == [f"{f.name}:1 imports collectors.symbols"]
    assert not allowed("collectors.session", ALLOWED["analysis"])


def test_every_component_has_one_place_in_the_order_and_a_colour():
    from_header = set().union(*(components.names(e, GOLDEN) for e in components.ENGINES))
    order = components.DISPLAY_ORDER
    assert sorted(order) == sorted(from_header) and len(set(order)) == len(order)
    assert from_header <= set(components.COLORS)


def test_io_components_are_the_engines_own():
    for engine in components.ENGINES:
        for io in ("write", "sync"):
            for kind in GOLDEN.file_kinds().values():
                c = components.io_component(io, kind, engine, GOLDEN)
                assert c is None or c in components.names(engine, GOLDEN)
    assert components.io_component("sync", "wal", "rocksdb", GOLDEN) == "wal_sync_io"
    assert components.io_component("write", "journal", "sqlite", GOLDEN) == "journal_write_io"
    assert components.io_component("write", "sst", "rocksdb", GOLDEN) is None


def test_syscall_numbers_are_the_systems():
    """The header's x86_64 numbers against the C library's own table."""
    unistd = syscalls.UNISTD
    if not unistd.exists():
        pytest.skip(f"{unistd} not installed (linux-libc-dev)")
    table = {m.group(1): int(m.group(2)) for m in
             re.finditer(r"#define __NR_(\w+) (\d+)", unistd.read_text())}
    ours = GOLDEN.syscalls()
    assert len(ours) >= 20
    for nr, name in ours.items():
        if name in table:   # uprobe(2) and uretprobe(2) are newer than some headers
            assert table[name] == nr, name
    assert {syscalls.name(n, GOLDEN) for n in (1, 75, 257)} == {"write", "fdatasync", "openat"}
    assert syscalls.name(39, GOLDEN) == "getpid"    # not the header's: the system's


def test_write_flags_come_from_the_header():
    header = (ROOT / "probes" / "walscope.h").read_text()
    for name, value in re.findall(r"\tWS_WF_(\w+) = (0x[0-9a-f]+),", header):
        assert GOLDEN.write_flag(name) == int(value, 16)
    assert GOLDEN.write_flag("leader") == 1


@pytest.mark.root
def test_the_test_layout_is_the_builds(tmp_path):
    """tests/golden/layout.json (what the unit tier reads records with) is
    the build's layout: regenerate it with `make golden` after changing
    probes/walscope.h."""
    import json
    build = R.Layout.build()
    names = {(t["kind"], t["name"]) for t in json.loads(build.path.read_text())["types"]
             if t.get("name", "").startswith("ws_") and t["kind"] in ("STRUCT", "ENUM")}
    assert len(names) > 20
    for kind, name in sorted(names):   # what the readers derive, not BTF's type ids
        if kind == "STRUCT":
            assert GOLDEN.struct_dtype(name) == build.struct_dtype(name), \
                f"{name}: run `make golden`"
        else:
            assert GOLDEN.enum_values(name) == build.enum_values(name), \
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
    from runners.command import walscope
    return set(walscope.DELEGATED)


def test_documented_commands_exist_and_parse():
    """Every command the README and docs show names a real program and
    options its parser accepts (a renamed flag fails here, not for a user)."""
    from runners.command import cli
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
            from runners.command import walscope
            try:
                walscope.build_parser().parse_args(argv[1:])
            except SystemExit:
                raise AssertionError(f"{where}: {' '.join(argv)}") from None
        elif prog == "./runners/study.py":
            from runners.experiments import study
            entry = [m for _, m in imports_of(ROOT / "runners" / "study.py")]
            assert "runners.experiments.study" in entry   # the parser it runs
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
