"""runfolder/files.py's table of files is the run folder: the C
loader writes exactly its collector rows, the Python layers spell no file
name of their own, and a real run folder holds nothing the table lacks."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from runfolder import files as RF

ROOT = Path(__file__).resolve().parent.parent
# the Python layers that read and write run folders through the table; the
# workloads (runners/workloads/postgres, runners/workloads/sqlite_tpcc) are stdlib-only
# programs of their own, listed in the table as "workload"
PY_LAYERS = ["collectors", "analysis", "viz", "runners"]
WORKLOADS = ["runners/workloads/postgres", "runners/workloads/sqlite_tpcc"]
FILE_NAME = re.compile(r"[\w.-]+\.[a-z]+")


def collector_units() -> list[Path]:
    """The C units walscope-collect is built from (the Makefile's list)."""
    m = re.search(r"^COLLECT_UNITS := ((?:.*\\\n)*.*)$",
                  (ROOT / "Makefile").read_text(), re.M)
    assert m, "Makefile: no COLLECT_UNITS"
    return [ROOT / "collectors" / f"{u}.c" for u in m.group(1).replace("\\\n", " ").split()]


def c_file_names(source: str) -> set[str]:
    """The file names a C unit spells: its string literals that are a bare
    file name (the loader writes only into the run folder, by name)."""
    code = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    code = re.sub(r"//[^\n]*|^#\s*include[^\n]*", "", code, flags=re.M)
    return {lit for lit in re.findall(r'"((?:[^"\\\n]|\\.)*)"', code)
            if FILE_NAME.fullmatch(lit)}


def c_record_files(source: str) -> dict[str, str]:
    """WS_REC_X -> file, from the loader's table of record files."""
    return dict(re.findall(r'\[(WS_REC_\w+)\]\s*=\s*\{\s*"([^"]+)"', source))


def test_the_collector_writes_the_tables_collector_files():
    units = collector_units()
    assert len(units) >= 5 and all(u.exists() for u in units)
    spelled = set().union(*(c_file_names(u.read_text()) for u in units))
    listed = set(RF.written_by(RF.COLLECTOR))
    assert spelled == listed, (
        f"only in the C loader: {sorted(spelled - listed)}; only in "
        f"runfolder/files.py: {sorted(listed - spelled)}")


def test_the_records_are_read_from_the_files_they_are_written_to():
    """Each record type's file in the loader's table is the one the Python
    readers open for its struct."""
    written = c_record_files((ROOT / "collectors" / "collect_outputs.c").read_text())
    assert len(written) >= 7
    for struct, name in RF.RECORD_FILES.items():
        assert written["WS_REC_" + struct[len("ws_"):-len("_rec")].upper()] == name, struct
    assert set(written.values()) <= set(RF.written_by(RF.COLLECTOR))


def test_the_c_checks_can_fail():
    src = ('#include "walscope.h"\n/* "old.bin" */\n'
           'static struct out_file outs[] = { [WS_REC_WRITE] = { "w.bin", 8 } };\n'
           'f = open_out("new.bin"); fprintf(stderr, "%s/%s: %s", a, b, c);\n')
    assert c_file_names(src) == {"w.bin", "new.bin"}
    assert c_record_files(src) == {"WS_REC_WRITE": "w.bin"}
    assert not {"w.bin", "new.bin"} <= set(RF.written_by(RF.COLLECTOR))


def py_file_names(path: Path) -> list[tuple[int, str]]:
    """(line, name) of every string constant that is a run-folder file's
    name (an f-string's constant parts too)."""
    names = {f.name for f in RF.FILES if "*" not in f.name}
    return [(n.lineno, n.value) for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and n.value in names]


def test_no_python_module_spells_a_run_folder_file():
    """One source for each name: the layers say RunFolder(d).writes_parquet,
    never "writes.parquet" (the workloads excepted: they are programs of
    their own, and the table lists what they write)."""
    mine = ROOT / "collectors" / "run_folder.py"
    bad = [f"{p.relative_to(ROOT)}:{line}: {name}"
           for layer in PY_LAYERS for p in sorted((ROOT / layer).rglob("*.py"))
           if p != mine and not any(p.is_relative_to(ROOT / w) for w in WORKLOADS)
           for line, name in py_file_names(p)]
    assert not bad, "use runfolder.files:\n" + "\n".join(bad)


def test_the_python_check_can_fail(tmp_path):
    f = tmp_path / "x.py"
    f.write_text('p = d / "summary.json"\nq = "summary"\n')
    assert py_file_names(f) == [(1, "summary.json")]


def test_the_workloads_files_are_in_the_table():
    from runners.workloads.postgres import run as pg_run
    assert RF.file_of(pg_run.RESULT_NAME).writer == RF.WORKLOAD
    assert RF.file_of("pgbench-k3j2x1").writer == RF.WORKLOAD   # tempfile's folder
    tpcc = (ROOT / "runners" / "workloads" / "sqlite_tpcc" / "__main__.py").read_text()
    assert f'/ "{RF.TXLOG_CSV}"' in tpcc and RF.file_of(RF.TXLOG_CSV).writer == RF.WORKLOAD
    assert RF.file_of(Path(RF.TXLOG_CSV).with_suffix(".json").name).writer == RF.WORKLOAD


def test_the_table_and_the_accessors_agree(tmp_path):
    names = [f.name for f in RF.FILES]
    assert len(names) == len(set(names)) and {f.writer for f in RF.FILES} <= set(RF.WRITERS)
    folder = RF.RunFolder(tmp_path)
    attrs = [a for a, v in vars(RF.RunFolder).items() if isinstance(v, RF._File)]
    assert len(attrs) >= 20
    for a in attrs:   # each says what it holds: the name, its dots as underscores
        path = getattr(folder, a)
        assert path.parent == tmp_path and RF.file_of(path.name) is not None
        assert a == re.sub(r"[.-]", "_", path.name), a
    for kind in RF.FOLDED:
        assert RF.file_of(folder.folded(kind).name).writer == RF.ANALYSIS
        assert RF.file_of(folder.flame_svg(kind).name).writer == RF.VIZ
    assert RF.file_of(folder.attach_found(3).name).writer == RF.TRACER
    assert RF.file_of("attach-x.tsv") is RF.file_of("attach-3.tsv")   # a glob, loosely
    with pytest.raises(KeyError):
        folder.folded("nonsense")
    with pytest.raises(KeyError):
        RF._File("nonsense.bin")


def test_the_readers(tmp_path):
    folder = RF.RunFolder(tmp_path)
    assert folder.run_info() == {} and folder.calibration() is None
    assert folder.collector_report() == {} and folder.open_files() == {}
    with pytest.raises(FileNotFoundError):
        folder.summary()
    folder.run_json.write_text('{"mode": "full"')
    with pytest.raises(RF.RunFolderError, match=r"run\.json: unreadable"):
        folder.run_info()
    folder.collector_json.write_text('{"counters": [1')      # cut short: the collector died
    assert folder.collector_report() == {}
    folder.calibration_json.write_text('{"uprobe_ns": 900}')
    assert folder.calibration() == {"uprobe_ns": 900}


def test_the_table_is_pure():
    """Stdlib only, so every layer may read folders through it."""
    tree = ast.parse((ROOT / "runfolder" / "files.py").read_text())
    mods = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
            for a in n.names}
    mods |= {n.module.split(".")[0] for n in ast.walk(tree)
             if isinstance(n, ast.ImportFrom) and n.module}
    assert mods and mods <= set(sys.stdlib_module_names) | {"__future__"}, mods


def unlisted(folder: Path) -> list[str]:
    """What a folder holds that the table does not list."""
    return sorted(p.name for p in folder.iterdir() if RF.file_of(p.name) is None)


def test_the_listing_check_can_fail(tmp_path):
    (tmp_path / "writes.bin").touch()
    (tmp_path / "attach-2.tsv").touch()
    assert unlisted(tmp_path) == []
    (tmp_path / "surprise.json").touch()
    assert unlisted(tmp_path) == ["surprise.json"]


@pytest.mark.root
def test_a_full_run_folder_holds_only_the_tables_files(traced):
    """Every file of a real full-mode run is in the table, and the table's
    files for such a run are there (so the check looked at a real folder)."""
    r = traced("--benchmarks=fillrandom", "--num=1500", "--threads=2", "--sync=true",
               "--enable_pipelined_write=false")
    assert unlisted(r.dir) == [], "add them to runfolder/files.py"
    folder = RF.RunFolder(r.dir)
    want = [folder.records(s) for s in RF.RECORD_FILES] + [
        folder.collector_json, folder.collector_log, folder.attach_tsv, folder.layout_json,
        folder.run_json, folder.calibration_json, folder.command_log,
        folder.writes_parquet, folder.io_parquet, folder.sched_parquet,
        folder.threads_parquet, folder.summary_json, folder.folded("phase"),
        folder.report_html]
    assert [p.name for p in want if not p.exists()] == []
    assert folder.summary() == r.summary and folder.run_info()["summary"]["mode"] == "full"
    assert set(folder.collector_report()["records"]) <= set(RF.written_by(RF.COLLECTOR))
