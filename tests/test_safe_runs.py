"""Nothing silently mixed or lost: a run folder is new or emptied, a
partial record file is reported as such (and `walscope analyse` exits
non-zero and renders the views again), and what the docs and --help say
about exit status, sampling and overhead is what the code does."""
from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import GOLDEN, ROOT, golden_folder

N = 10   # records in the synthetic run


def record_run(d: Path, cut: int | None = None, written: int = N) -> Path:
    """A run folder of N write records as the collector leaves them, with
    its report saying it wrote `written`; writes.bin cut to `cut` bytes."""
    golden_folder(d)
    a = np.zeros(N, dtype=GOLDEN.struct_dtype("ws_write_rec"))
    a["rec_type"] = GOLDEN.enum_values("ws_rec_type")["WS_REC_WRITE"]
    a["engine"] = GOLDEN.enum_values("ws_engine")["WS_ENGINE_ROCKSDB"]
    a["start_ns"] = np.arange(N) * 10_000
    a["dur_ns"] = 1_000
    raw = a.tobytes()
    (d / "writes.bin").write_bytes(raw if cut is None else raw[:cut])
    (d / "collector.json").write_text(json.dumps(
        {"counters": [], "records": {"writes.bin": written}, "bad_records": 0,
         "write_error": 0, "poll_error": 0}))
    (d / "run.json").write_text(json.dumps({"end": "2026-11-24T00:00:00",
                                            "summary": {"mode": "full", "command": ["x"]}}))
    return d


def rec_size() -> int:
    return GOLDEN.struct_dtype("ws_write_rec").itemsize


@pytest.mark.parametrize("cut,expect", [
    (None, []),
    ("half", ["PARTIAL: writes.bin: 5 of 10 records written, 5 lost (cut short)"]),
    ("mid", ["PARTIAL: writes.bin: 7 of 10 records written, 3 lost (cut short)",
             "PARTIAL: writes.bin: a torn last record (100 B dropped)"]),
])
def test_a_cut_record_file_is_partial(tmp_path, capsys, cut, expect):
    """writes.bin cut in half (at a record's edge: no torn bytes to see) or
    mid-record: the table's first lines say PARTIAL and what was lost, the
    lost line does not say none, walscope analyse exits 4; whole: 0."""
    from runners.command import analyse
    size = {"half": 5 * rec_size(), "mid": 7 * rec_size() + 100, None: None}[cut]
    run = record_run(tmp_path / "run", size)
    # views from an earlier analysis: never left stale
    (run / "report.html").write_text("<html>old report</html>")
    (run / "flame-phase.svg").write_text("<svg>old</svg>")
    code = analyse.main([str(run)])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{run}:"
    assert out[1:1 + len(expect)] == expect
    assert out[1 + len(expect)].startswith("component")
    lost = next(l for l in out if l.startswith("lost:"))
    assert code == (4 if expect else 0)
    assert ("none" in lost) == (not expect), lost
    s = json.loads((run / "summary.json").read_text())
    assert s["partial_run"] == bool(expect)
    assert s["partial_why"] == [e.removeprefix("PARTIAL: ") for e in expect]
    html = (run / "report.html").read_text()
    assert "old report" not in html
    assert ("PARTIAL: not every record" in html) == bool(expect)
    for e in expect:
        assert e.removeprefix("PARTIAL: ").replace("'", "&#x27;") in html
    # no phase stacks in this run: the old flame graph is gone, not kept
    assert not (run / "flame-phase.svg").exists()


def test_more_records_than_written_or_no_report_is_partial(tmp_path, capsys):
    from analysis.__main__ import main as analyse
    run = record_run(tmp_path / "more", written=8)
    assert analyse(["-q", str(run)]) == 4
    assert "writes.bin: 10 records, 8 written (not this run's alone)" in capsys.readouterr().err
    run = record_run(tmp_path / "died")
    (run / "collector.json").unlink()
    assert analyse(["-q", str(run)]) == 4
    assert "no collector.json: the collector died" in capsys.readouterr().err


def test_claim_run_dir(tmp_path, monkeypatch):
    """A non-empty folder is refused; --force empties it (never the current
    folder, one above it, or the checkout); the default name never collides."""
    from runners.command.plan import TraceError, claim_run_dir, unused_run_dir
    new = tmp_path / "a" / "b"
    claim_run_dir(new, force=False)
    assert new.is_dir()
    claim_run_dir(new, force=False)            # empty: fine
    (new / "summary.json").write_text("{}")
    (new / "sub").mkdir()
    (new / "sub" / "x").write_text("x")
    with pytest.raises(TraceError, match=r"is not empty \(it holds sub and 1 more\): "
                       "give a new folder, or --force to empty it first"):
        claim_run_dir(new, force=False)
    assert (new / "summary.json").exists()
    claim_run_dir(new, force=True)
    assert list(new.iterdir()) == []
    monkeypatch.chdir(new)
    (new / "keep").write_text("x")
    for d in (new, tmp_path / "a", ROOT):
        with pytest.raises(TraceError, match="--force would empty"):
            claim_run_dir(d, force=True)
    assert (new / "keep").exists()
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(TraceError, match="is not a folder"):
        claim_run_dir(f, force=True)
    assert unused_run_dir(new) == new.with_name("b-2")
    assert unused_run_dir(tmp_path / "none") == tmp_path / "none"


def test_root_without_a_name_says_why():
    """Under sudo from root (SUDO_USER=root) the line does not claim there
    was no SUDO_USER."""
    from collectors.session import RunAs
    from runners.command.plan import run_as_note
    root = RunAs("root", 0, 0, (0,), "/root")
    assert run_as_note(root, None, "root") == \
        "running the workload as root (SUDO_USER is root; choose with --user)"
    assert "no SUDO_USER: not started through sudo" in run_as_note(root, None, None)
    assert run_as_note(root, 42, None) is None                   # -p: not ours to run
    assert run_as_note(RunAs("root", 0, 0, (0,), "/root", True), None, None) is None
    assert run_as_note(RunAs("u", 1000, 1000, (1000,), "/home/u"), None, "u") is None


def test_exit_status_is_the_codes():
    """--help's and the man page's EXIT STATUS name the numbers the tracer
    returns (runners/command/record.py), and the man page's table is generated."""
    from runners import docs
    from runners.command import cli, record
    codes = [c for c, _ in cli.EXIT_STATUS]
    assert codes == ["0", "N", "1", "2", "3", "130", "143"]
    assert str(record.EMPTY_RUN) in codes and str(record.INTERRUPTED) in codes
    assert str(128 + 15) in codes
    assert "exit status:\n  0    the command exited 0" in cli.build_parser().format_help()
    man = (ROOT / "docs" / "trace_wal.8.md").read_text()
    assert "## EXIT STATUS\n\n<!-- gen:exit_status -->\n" + docs.exit_status() in man


def test_help_names_every_engine_of_the_registry():
    """--help's description lists each engine's components, and exit
    status 3 and --allow-empty name each engine's row (engines.ENGINES:
    none is left out, as PostgreSQL was)."""
    import engines
    from runners.command import cli
    text = " ".join(cli.build_parser().format_help().split())
    desc = " ".join(cli.description().split())
    for e in engines.ENGINES:
        assert f"{e.title}: {', '.join(c.name for c in e.components)};" in desc
    seen = ", ".join(f"{e.title} {e.row}" for e in engines.ENGINES[:-1])
    last = engines.ENGINES[-1]
    assert f"no {seen} or {last.title} {last.row} exits 0" in text
    assert f"3 no {seen} or {last.title} {last.row} seen" in text


def test_man_page_overhead_is_the_overhead_docs_table():
    """No hand-kept throughput figures: the man page's overhead table is
    docs/overhead.md's block, both generated from bench/results/overhead.json."""
    block = re.compile(r"<!-- gen:overhead -->\n(.*?)\n<!-- /gen:overhead -->", re.S)
    man = (ROOT / "docs" / "trace_wal.8.md").read_text()
    readme = (ROOT / "docs" / "overhead.md").read_text()
    assert block.search(man) and block.search(man).group(1) == block.search(readme).group(1)
    overhead = man[man.index("## OVERHEAD"):man.index("## EXIT STATUS")]
    outside = block.sub("", overhead)
    assert not re.search(r"\b[01]\.\d\d\b", outside), "a throughput figure kept by hand"


def test_sample_hz_help_is_what_prepare_does():
    """--sample-hz's help names the modes that sample by default at the
    rate prepare() gives them (their rows' sample_hz)."""
    import inspect

    from probepoints import modes
    from runners.command import cli, plan
    text = " ".join(cli.build_parser().format_help().split())
    m = re.search(r"--sample-hz HZ (.*?)\)", text)
    assert m and f"{modes.SAMPLE_MODE_HZ} in the sample, budget, window modes" in m.group(1)
    assert "in full and writes, " in m.group(1)
    assert {n for n, r in modes.MODES.items() if r.sample_hz == modes.SAMPLE_MODE_HZ} \
        == {"sample", "budget", "window"}
    src = inspect.getsource(plan._decide)   # (prepare()'s second half)
    assert "sample_hz = mode.sample_hz if mode.sample_hz is not None else" in src


@pytest.mark.parametrize("cmd", ["runners/study.py", "-m runners.experiments.study",
                                 "-m runners.experiments.run_matrix",
                                 "-m runners.experiments.durability", "-m viz.report",
                                 "-m viz.flamegraph", "-m analysis", "-m runners.command.analyse",
                                 "trace_wal.py", "walscope"])
def test_help_descriptions_are_whole_sentences(cmd):
    """No --help stops mid-sentence (study.py's stopped at "write its")."""
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), *cmd.split(), "--help"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr[-500:]
    desc = p.stdout.split("\n\n")[1]
    assert not desc.startswith(("positional", "options")), p.stdout[:300]
    assert desc.rstrip().endswith((".", ")", ":")), desc


def test_demo_does_not_echo_the_statistics():
    """./setup.sh --demo traces quietly (-q): db_bench's --statistics dump
    goes to command.log, not before the table; --force: a second demo
    replaces the first."""
    text = (ROOT / "setup.sh").read_text()
    demo = re.search(r"--demo\)\n(.*?);;", text, re.S).group(1)
    cmd = " ".join(l.strip().rstrip("\\") for l in demo.splitlines()
                   if not l.strip().startswith("#"))
    trace = cmd[cmd.index("./trace_wal.py"):cmd.index(" -- ")].split()
    assert "-q" in trace and "--force" in trace and "-o" in trace


# -- end to end (root): real runs ------------------------------------------

SHORT = ["db_bench", "--benchmarks=fillrandom", "--num=300", "--sync=true"]


@pytest.mark.root
def test_a_non_empty_output_is_refused_and_force_never_mixes(tmp_path):
    """-o on a folder holding a full-mode run: refused in one line, nothing
    touched; --force empties it first, so a sample-mode run there has none
    of the old run's files (the old phase and off-CPU flame graphs were
    left in the new run's report)."""
    from tests.conftest import run_trace
    out = tmp_path / "o"
    p = run_trace(["-q", "--mode", "full", "-o", str(out), "--", *SHORT,
                   f"--db={tmp_path}/db"])
    assert p.returncode == 0, p.stderr[-2000:]
    full = {f.name for f in out.iterdir()}
    assert {"flame-phase.svg", "phase.folded"} <= full
    before = {f.name: f.stat().st_mtime_ns for f in out.iterdir()}
    p = run_trace(["-q", "--mode", "sample", "-o", str(out), "--", *SHORT,
                   f"--db={tmp_path}/db"])
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert p.returncode == 1 and lines == [
        f"walscope: {out} is not empty (it holds attach.tsv and {len(full) - 1} more): "
        "give a new folder, or --force to empty it first"], p.stderr
    assert {f.name: f.stat().st_mtime_ns for f in out.iterdir()} == before
    t0 = time.time_ns()
    p = run_trace(["-q", "--mode", "sample", "--force", "-o", str(out), "--", *SHORT,
                   f"--db={tmp_path}/db"])
    assert p.returncode == 0, p.stderr[-2000:]
    old = [f.name for f in out.rglob("*") if f.stat().st_mtime_ns < t0]
    assert not old, f"left from the full-mode run: {old}"
    assert not (out / "flame-phase.svg").exists() and not (out / "phase.folded").exists()
    assert json.loads((out / "summary.json").read_text())["mode"] == "sample"


@pytest.mark.root
@pytest.mark.parametrize("cut", ["half", "mid"])
def test_a_traced_run_cut_short_analyses_as_partial(traced, tmp_path, cut):
    """A real run's writes.bin cut in half or mid-record: `./walscope
    analyse` says PARTIAL and how many records were lost, exits 4, and the
    report it renders again says so on its first screen."""
    import shutil
    run = traced("--benchmarks=fillrandom", "--num=1500", "--threads=2", "--sync=true",
                 "--enable_pipelined_write=false")
    copy = tmp_path / "copy"
    shutil.copytree(run.dir, copy)
    f = copy / "writes.bin"
    n = f.stat().st_size // rec_size()
    keep = n // 2 * rec_size() + (0 if cut == "half" else 37)
    with open(f, "r+b") as fh:
        fh.truncate(keep)
    p = subprocess.run([str(ROOT / "walscope"), "analyse", str(copy)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 4, p.stderr[-2000:]
    lines = p.stdout.splitlines()
    assert lines[1] == (f"PARTIAL: writes.bin: {n // 2} of {n} records written, "
                        f"{n - n // 2} lost (cut short)")
    if cut == "mid":
        assert lines[2] == "PARTIAL: writes.bin: a torn last record (37 B dropped)"
    # first on its line, whatever else the run lost (a stack-id collision, say)
    assert [ln for ln in lines if ln.startswith("lost: ")] == \
        [ln for ln in lines if ln.startswith("lost: records (PARTIAL above)")] != []
    html = (copy / "report.html").read_text()
    assert html.index("PARTIAL: not every record") < html.index("<h2>")
    s = json.loads((copy / "summary.json").read_text())
    assert s["partial_run"] and s["writes"]["count"] == n // 2


def test_the_report_picture_is_taken_by_a_command(tmp_path):
    """docs/img/report.png comes from `make report-png` (viz/screenshot.py,
    headless Chromium), which the README names: a report's first screen,
    its figures drawn."""
    import shutil as sh

    from tests.png import read_rows as read_png_rows
    from viz import report, screenshot
    if not sh.which("chromium"):
        pytest.skip("chromium is not installed (setup.sh installs it)")
    assert re.search(r"^report-png: .*\n\t.*viz\.screenshot runs/demo/report\.html "
                     r"docs/img/report\.png$", (ROOT / "Makefile").read_text(), re.M)
    assert "`make report-png`" in (ROOT / "README.md").read_text()
    from tests.test_commands import workspace
    html = tmp_path / "report.html"
    report.build(report.find_runs([workspace(tmp_path) / "runs" / "B"]), html)
    png = screenshot.screenshot(html, tmp_path / "shot.png", 800, 600)
    rows = read_png_rows(png)
    assert len(rows) == 600 and len(rows[0]) == 800
    colours = {px for row in rows[::10] for px in row[::10]}
    assert len(colours) > 20, "a blank page: no figure drawn"


def test_the_loss_line_names_the_partial_records_before_what_counters_saw():
    """A partial run's `lost:` line starts with the records the PARTIAL lines
    name, then each counted loss (CI once lost 216 stacks to collisions in
    the same run, and the records went to the end of the line)."""
    from analysis.table import losses_line
    s = {"partial_run": True, "lost_events": {"stack": 216, "write": 0},
         "tracking_gaps": {"fd": 2}}
    assert losses_line(s) == ("lost: records (PARTIAL above), 216 stacks lost, 2 fd "
                              "(summary.json lost_events, tracking_gaps)")
    assert losses_line({**s, "lost_events": {}, "tracking_gaps": {}}) == \
        "lost: records (PARTIAL above)"
    assert losses_line({"lost_events": {"stack": 0}}).startswith("lost: none")
