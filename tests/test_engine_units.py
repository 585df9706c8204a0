"""Every engine one unit on the BPF side (issue 46): the generic probes name
no engine, the dispatch to each unit's hooks is generated from the
registry, and adding an engine touches only its own unit and the
generated headers: a toy engine, added in a copy of the tree, builds
into the BPF object with its hooks dispatched and its enums in BTF."""
from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

import engines
from engines import bpf_units
from tests.conftest import ROOT

PROBES = ROOT / "probes"
VMLINUX = ROOT / ".output" / "vmlinux.h"
GENERATED = (bpf_units.HEADER, bpf_units.HOOKS_HEADER, bpf_units.BPF_HEADER,
             bpf_units.CAL_HEADER, bpf_units.FILES_HEADER)
# an engine unit's C files: its record interface, its BPF part, its files
# by name, its play in walscope-calibrate
UNIT_SUFFIXES = (".h", ".bpf.h", ".files.h", ".cal.h")
# the generic C: the probes and the collector's programs
GENERIC_C = (ROOT / "probes", ROOT / "collectors")


def unit_files() -> set[str]:
    return {f"{e.name}{ext}" for e in engines.ENGINES for ext in UNIT_SUFFIXES}


def code_of(text: str) -> str:
    """C without its comments."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def engine_words() -> list[str]:
    """What names an engine in C: its name, its enum ws_engine member, its
    components' and phases' prefixes (the members of its enums)."""
    words = []
    for e in engines.ENGINES:
        words += [e.name, e.ws_engine, e.comp_prefix]
        if not e.phase_enum:   # an engine without probes has no phases
            continue
        head = (PROBES / f"{e.name}.h").read_text()
        m = re.search(rf"enum\s+{e.phase_enum}\s*{{(.*?)}}", head, re.S)
        assert m, f"{e.name}.h: no enum {e.phase_enum}"
        words += re.findall(r"^\s*([A-Z][A-Z0-9_]*)\s*=", m.group(1), re.M)
    return words


def test_the_generated_headers_are_current():
    for name, text in bpf_units.generated().items():
        assert (PROBES / name).read_text() == text, \
            f"probes/{name} is stale: run `make golden`"


def test_no_generic_c_file_names_an_engine():
    """The probes, the collector and the calibrator: only the units and the
    generated headers name an engine (in code; comments may)."""
    words = engine_words()
    pat = re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")", re.I)
    hits = []
    files = [f for d in GENERIC_C for f in sorted(d.iterdir())
             if f.suffix in (".h", ".c") and f.name not in unit_files()
             and f.name not in GENERATED]
    assert len(files) > 20 and any(f.name == "walscope_calibrate.c" for f in files)
    for f in files:
        for n, line in enumerate(code_of(f.read_text()).splitlines(), 1):
            for m in pat.finditer(line):
                hits.append(f"{f.parent.name}/{f.name}:{n}: {m.group(1)}")
    assert not hits, "generic C files name an engine:\n" + "\n".join(hits)


# the generic Python: the readers, the run folder, the collectors, the
# analysis and the pictures (the runners and benches drive named
# workloads; the CLI's examples name them)
GENERIC_PY = ("probepoints", "runfolder", "collectors", "analysis", "viz")


def python_code_tokens(text: str):
    """A Python file's names and strings, without its comments and
    docstrings (a string that is a statement of its own)."""
    toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    quiet = (tokenize.NL, tokenize.COMMENT)
    for i, t in enumerate(toks):
        if t.type not in (tokenize.NAME, tokenize.STRING) and \
                t.type != getattr(tokenize, "FSTRING_MIDDLE", -1):
            continue
        if t.type == tokenize.STRING:
            j = i - 1
            while j >= 0 and toks[j].type in quiet:
                j -= 1
            k = i + 1
            while toks[k].type in (tokenize.STRING, *quiet):
                k += 1
            if (j < 0 or toks[j].type in (tokenize.NEWLINE, tokenize.INDENT,
                                          tokenize.DEDENT)) and \
                    toks[k].type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                continue
        yield t


def python_engine_words() -> re.Pattern[str]:
    """An engine's name, its title's first word, its ids and its symbols'
    prefixes, inside a name or a string."""
    words = set()
    for e in engines.ENGINES:
        words |= {e.name, e.title.split()[0], e.ws_engine, *e.imports}
    return re.compile("(" + "|".join(sorted(map(re.escape, words), key=len,
                                            reverse=True)) + ")", re.I)


def python_hits(text: str, pat: re.Pattern[str]) -> list[str]:
    return [f"{t.start[0]}: {m.group(1)} in {t.string[:60]!r}"
            for t in python_code_tokens(text) for m in pat.finditer(t.string)]


def test_no_generic_python_file_names_an_engine():
    """What differs by engine is read from its unit (the registry), in
    code; comments and docstrings may name one as an example."""
    pat = python_engine_words()
    files = [f for d in GENERIC_PY for f in sorted((ROOT / d).rglob("*.py"))]
    assert len(files) > 40
    hits = [f"{f.relative_to(ROOT)}:{h}" for f in files for h in python_hits(f.read_text(), pat)]
    assert not hits, "generic Python files name an engine:\n" + "\n".join(hits)


def test_the_python_scan_finds_a_name_where_there_is_one():
    pat = python_engine_words()
    assert python_hits('if engine == "rocksdb":\n    x = 1\n', pat)
    assert python_hits('TITLE = f"SQLite {x}"\n', pat)
    assert python_hits("def f():\n    return postgres_version\n", pat)
    assert not python_hits('"""RocksDB\'s rule."""\nx = 1  # SQLite\n', pat)
    assert not python_hits('def f():\n    """On PostgreSQL."""\n    return 1\n', pat)


def test_the_scan_finds_a_name_where_there_is_one():
    """The check above can fail: a RocksDB rule in a generic file is found."""
    pat = re.compile(r"\b(" + "|".join(re.escape(w) for w in engine_words()) + r")")
    assert pat.search(code_of("if (t->rec.engine == WS_ENGINE_ROCKSDB) /* x */"))
    assert not pat.search(code_of("/* RocksDB's rule */ x = 1;"))


def test_every_unit_hook_is_dispatched_and_nothing_else():
    text = (PROBES / bpf_units.BPF_HEADER).read_text()
    for u in bpf_units.units():
        bpf = PROBES / f"{u.name}.bpf.h"
        for k in bpf_units.HOOKS:
            call = f"{u.name}_{k.name}("
            assert (call in text) == (k.name in u.hooks), (u.name, k.name)
        if u.bpf:
            assert f'#include "{u.name}.bpf.h"' in text
        assert bpf.exists() == u.bpf


def test_an_engine_without_a_syscall_rule_gets_none():
    """No engine's rule is another's default (the old else branch)."""
    us = [bpf_units.Unit("a", "WS_ENGINE_A", (), False, False, True, ("sys_comp",)),
          bpf_units.Unit("b", "WS_ENGINE_B", (), False, False, False, ())]
    out = "\n".join(bpf_units.dispatcher(
        next(k for k in bpf_units.HOOKS if k.name == "sys_comp"), us))
    assert "case WS_ENGINE_A:" in out and "WS_ENGINE_B" not in out
    assert out.rstrip().endswith("return 0xff;\n}") or "return 0xff;" in out


TOY_UNIT = '''"""A toy engine: a row is one toy_commit call."""
from __future__ import annotations

from engines.base import Component, Engine

ENGINE = Engine(
    order=90,
    name="toy", title="Toy", ws_engine="WS_ENGINE_TOY",
    comp_enum="ws_toy_comp", comp_prefix="TC_", phase_enum="ws_toy_phase",
    row="commit", mark=b"toy_commit",
    components=(Component("log_io", "#123456", "writing its log"),),
    io_component=lambda io, kind: "log_io" if kind == "wal" else None,
)
'''
TOY_H = '''#ifndef __WS_TOY_H
#define __WS_TOY_H
enum ws_toy_comp {
	TC_OTHER = 0,
	TC_LOG_IO = 1,
	TC_SCHED_RUNQ = 7,
	TC_NR = 8,
};
enum ws_toy_phase {
	TP_COMMIT = 60,
};
#define WS_TOY_PHASE_COMPS(X)	X(TP_COMMIT, TC_OTHER)
struct ws_toy_state {
	__u64 commits;
};
#endif
'''
TOY_BPF = '''#ifndef __WS_TOY_BPF_H
#define __WS_TOY_BPF_H
static __always_inline int toy_enter(struct pt_regs *ctx, struct thread_state *t,
				     __u32 tgid, __u32 tid, __u64 now, __u64 cookie)
{
	if ((__u8)cookie != TP_COMMIT || t->write_start || !window_admits(&now))
		return 0;
	begin_write(t, tgid, tid, now, WS_ENGINE_TOY);
	t->eng.toy.commits++;
	return 0;
}

static __always_inline int toy_exit(struct pt_regs *ctx, struct thread_state *t,
				    __u64 now, __u64 cookie)
{
	if (t->write_start)
		end_write(t, now, 0);
	return 0;
}

static __always_inline __u8 toy_sys_comp(struct thread_state *t, int cls, long nr)
{
	return cls == IOC_WRITE && t->sys_kind == FK_WAL ? TC_LOG_IO : 0xff;
}
#endif
'''
TOY_FILES = '''#ifndef __WS_TOY_FILES_H
#define __WS_TOY_FILES_H
/* *.toyl: its log */
static __always_inline int toy_file_kind(const struct ws_fk_state *s)
{
	return (s->tail & 0xffffffffff) == ((__u64)'.' << 32 | WS_P4('t', 'o', 'y', 'l'))
		? FK_WAL : -1;
}
#endif
'''


def tree_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for d in ("engines", "probes") for p in sorted((root / d).rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.skipif(not VMLINUX.exists() or not shutil.which("clang"),
                    reason="needs the build's vmlinux.h and clang (make)")
def test_a_toy_engine_touches_only_its_unit_and_the_generated_headers(tmp_path):
    for d in ("engines", "probes"):
        shutil.copytree(ROOT / d, tmp_path / d,
                        ignore=shutil.ignore_patterns("__pycache__"))
    before = tree_files(tmp_path)
    (tmp_path / "engines" / "toy").mkdir()
    (tmp_path / "engines" / "toy" / "__init__.py").write_text(TOY_UNIT)
    (tmp_path / "probes" / "toy.h").write_text(TOY_H)
    (tmp_path / "probes" / "toy.bpf.h").write_text(TOY_BPF)
    (tmp_path / "probes" / "toy.files.h").write_text(TOY_FILES)
    # the registry regenerated there, from that tree's units
    gen = subprocess.run([sys.executable, "-m", "engines.bpf_units", "probes"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert gen.returncode == 0, gen.stderr
    after = tree_files(tmp_path)
    changed = sorted(k for k in after if before.get(k) != after[k])
    # its unit, and the generated headers that list engines (the hooks'
    # declarations name none)
    assert changed == sorted([
        "engines/toy/__init__.py", "probes/toy.h", "probes/toy.bpf.h",
        "probes/toy.files.h", f"probes/{bpf_units.HEADER}",
        f"probes/{bpf_units.BPF_HEADER}", f"probes/{bpf_units.FILES_HEADER}"]), changed
    gen_bpf = (tmp_path / "probes" / bpf_units.BPF_HEADER).read_text()
    assert "case WS_ENGINE_TOY:\n\t\treturn toy_sys_comp(t, cls, nr);" in gen_bpf
    assert "toy_queue_wait" not in gen_bpf     # none defined: the default, false
    # ... and it builds into the object, its id next in the registry's order
    obj = tmp_path / "walscope.bpf.o"
    cc = subprocess.run(["clang", "-g", "-O2", "-target", "bpf", "-D__TARGET_ARCH_x86",
                         "-Wall", "-Wno-unused-function", f"-I{VMLINUX.parent}",
                         f"-I{tmp_path / 'probes'}", "-c",
                         str(tmp_path / "probes" / "walscope.bpf.c"), "-o", str(obj)],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr[-3000:]
    btf = subprocess.run(["bpftool", "-j", "btf", "dump", "file", str(obj)],
                         capture_output=True, text=True, check=True)
    enums = {t["name"]: {v["name"]: v["val"] for v in t["values"]}
             for t in json.loads(btf.stdout)["types"] if t["kind"] == "ENUM"}
    # its id: its place in the registry's order (before the engines of a
    # higher order, whose ids follow it; each run folder keeps its own)
    place = 1 + sum(e.order < 90 for e in engines.ENGINES)
    assert enums["ws_engine"]["WS_ENGINE_TOY"] == place
    assert enums["ws_toy_comp"]["TC_LOG_IO"] == 1
    assert enums["ws_toy_phase"]["TP_COMMIT"] == 60
    # the registry of that tree finds it without being told
    reg = subprocess.run([sys.executable, "-c", "import engines; print(engines.NAMES)"],
                         cwd=tmp_path, capture_output=True, text=True, check=True)
    assert "'toy'" in reg.stdout
    # its files by name, in the collector's user-space reading too
    src = tmp_path / "fk.c"
    src.write_text('#include <stdio.h>\n#include <linux/types.h>\n#include "walscope.h"\n'
                   '#include "file_kind.h"\nint main(int c,char**v){char b[WS_PATH_LEN]={0};'
                   'for(int i=1;i<c;i++){snprintf(b,sizeof b,"%s",v[i]);'
                   'printf("%d\\n",ws_file_kind(b,0));}return 0;}\n')
    subprocess.run(["cc", f"-I{tmp_path / 'probes'}", str(src), "-o", str(tmp_path / "fk")],
                   check=True)
    kinds = subprocess.run([str(tmp_path / "fk"), "/t/a.toyl", "/t/a.toyx", "/t/000001.log"],
                           capture_output=True, text=True, check=True).stdout.split()
    fk = enums["ws_file_kind"] if "ws_file_kind" in enums else None
    wal = fk["FK_WAL"] if fk else 1
    assert kinds == [str(wal), "0", str(wal)], kinds


@pytest.mark.skipif(not shutil.which("sqlite3"), reason="the sqlite3 shell")
def test_a_program_that_imports_an_engine_is_not_its_unnamed_holder():
    """The sqlite3 shell holds SQLite's messages (its mark) and calls
    libsqlite3's functions: it is no stripped SQLite, and the log-sync
    engine does not turn on for it; a program without the mark neither."""
    from engines.logsync import resolve
    shell = shutil.which("sqlite3")
    assert engines.get("sqlite").mark in Path(shell).read_bytes()
    assert any(n.startswith("sqlite3_") for n in resolve.imported(shell))
    assert resolve.marked_engine(shell) is None
    assert resolve.marked_engine(shutil.which("true")) is None


@pytest.mark.skipif(not (ROOT / ".output" / "walscope.btf.json").exists(),
                    reason="the build's layout (make)")
def test_the_grouped_engines_are_those_with_leaders_and_followers(tmp_path):
    """The collector counts followers only for engines whose rows form
    groups: RocksDB's, PostgreSQL's, InnoDB's; not SQLite's, nor the
    log-sync engine's (its rows have roles, but no group)."""
    from collectors import topology
    from runfolder.records import Layout
    from runners.command.plan import Plan, TraceOptions, collector_options
    grouped = {e.name for e in engines.ENGINES if e.grouped}
    assert grouped == {"rocksdb", "postgres", "innodb"}
    ids = Layout.build().enum_values("ws_engine")
    want = {str(ids[engines.get(n).ws_engine]) for n in grouped}
    (tmp_path / "calibration.json").write_text(json.dumps({"pair_ns": 1500}))
    plan = Plan(TraceOptions(command=["true"], mode="budget"), None, [], None,
                topology.Topology(("U",), "uniform"), tmp_path, 0, "off", "off", False)
    assert set(collector_options(plan)["grouped-engines"].split(",")) == want


@pytest.mark.skipif(not (ROOT / ".output" / "walscope-collect").exists(),
                    reason="the collector (make)")
@pytest.mark.parametrize("bad", ["1,x", "64", "", "1,"])
def test_the_collector_refuses_a_bad_engine_list(bad):
    p = subprocess.run([str(ROOT / ".output" / "walscope-collect"), "--load-only",
                        f"--grouped-engines={bad}"], capture_output=True, text=True)
    assert p.returncode != 0 and "grouped-engines: not an engine id list" in p.stderr


@pytest.mark.skipif(not (ROOT / ".output" / "walscope.btf.json").exists(),
                    reason="the build's layout (make)")
def test_a_syscall_rows_resolution_turns_its_engine_on_by_an_attach_line():
    from collectors.attach_lines import resolution_lines
    from probepoints.points import Resolution
    from runfolder.records import Layout
    res = Resolution(engine="logsync", object_path="/x", syscall_rows=True)
    ids = Layout.build().enum_values("ws_engine")
    assert resolution_lines(res) == [
        f"rows\t{ids['WS_ENGINE_LOGSYNC']}\t0\t-\tlogsync"]
    res.syscall_rows = False
    assert resolution_lines(res) == []


def test_an_engines_later_objects_come_from_its_unit():
    """What a program will load that holds an engine is the unit's to say
    (SQLite's resolver: the _sqlite3 module a Python interpreter dlopens),
    not the generic object search's; a program that is no Python has none."""
    import glob as g
    from collectors import symbols
    from collectors.symbols import candidate_objects_for_command
    from engines.sqlite import resolve
    assert not hasattr(symbols, "python_sqlite_module")
    assert resolve.candidate_objects("/bin/true") == []
    mods = resolve.candidate_objects("/usr/bin/python3")
    if not g.glob("/usr/lib/python3*/lib-dynload/_sqlite3*.so"):
        pytest.skip("this Python has no _sqlite3 module")
    assert mods and all("_sqlite3" in m for m in mods)
    objs = candidate_objects_for_command("/usr/bin/python3", [])
    assert set(mods) <= set(objs)
