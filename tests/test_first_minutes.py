"""A storage engineer's first ten minutes (issue 44): walscope and trace_wal
on the PATH after ./setup.sh, as root, as a user and under sudo, with
--version; `walscope --help`'s examples by the bare name; output piped
into head; errors that say what to do; `walscope export runs/* DIR` past
what is no run folder; the suite naming its slowest tests."""
from __future__ import annotations

import importlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import tomllib
from pathlib import Path

import pytest

from runners.command import links, version
from tests.conftest import ROOT
from tests.test_commands import PLAIN_ENV, runnable, workspace
from tests.test_safe_runs import record_run

VENV_BIN = ROOT / ".venv" / "bin"
# what `sudo -u nobody` and sudo itself run with: no virtual environment
USER_PATH = "/usr/local/bin:/usr/bin:/bin"


def clone(d: Path) -> Path:
    """A clone as far as the links go: its .venv's console scripts."""
    (d / ".venv" / "bin").mkdir(parents=True)
    for name in links.SCRIPTS:
        (d / ".venv" / "bin" / name).write_text("#!/bin/sh\n")
    return d


def test_setup_links_both_commands_and_says_so_in_one_line(tmp_path, capsys):
    root, bin_dir = clone(tmp_path / "clone"), tmp_path / "bin"
    bin_dir.mkdir()
    line = f"setup: walscope, trace_wal on the PATH: links in {bin_dir} to {root}/.venv/bin"
    for _ in range(2):      # and again: the same links, the same line
        links.add(root, bin_dir)
        for name in links.SCRIPTS:
            assert os.readlink(bin_dir / name) == str(root / ".venv" / "bin" / name)
        out = capsys.readouterr()
        assert out.out.splitlines() == [line] and out.err == ""


def test_a_link_into_another_clone_is_replaced_and_a_file_left_alone(tmp_path, capsys):
    root, other = clone(tmp_path / "clone"), clone(tmp_path / "other")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "walscope").symlink_to(other / ".venv" / "bin" / "walscope")
    (bin_dir / "trace_wal").write_text("someone else's\n")
    links.add(root, bin_dir)
    assert os.readlink(bin_dir / "walscope") == str(root / ".venv" / "bin" / "walscope")
    assert (bin_dir / "trace_wal").read_text() == "someone else's\n"
    out = capsys.readouterr()
    assert f"pointed into another clone ({other}/.venv/bin/walscope)" in out.out
    err = out.err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"setup: warning: {bin_dir}/trace_wal is not "
                                               "a link setup.sh made: left alone")


@pytest.mark.skipif(os.geteuid() != 0, reason="setup.sh runs its links step as root (sudo)")
def test_uninstall_removes_only_this_clones_links(tmp_path):
    """./setup.sh --uninstall, before it installs anything: the link into
    this clone goes, one into another clone and a plain file stay."""
    other, bin_dir = clone(tmp_path / "other"), tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "walscope").symlink_to(VENV_BIN / "walscope")
    (bin_dir / "trace_wal").symlink_to(other / ".venv" / "bin" / "trace_wal")
    p = subprocess.run([str(ROOT / "setup.sh"), "--uninstall", "--bin", str(bin_dir)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [f"setup: removed {bin_dir}/walscope"]
    assert not (bin_dir / "walscope").is_symlink()
    assert os.readlink(bin_dir / "trace_wal") == str(other / ".venv" / "bin" / "trace_wal")
    assert "left alone" in p.stderr


def pyproject_version() -> str:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["version"]


@pytest.mark.parametrize("module", ["runners.command.walscope", "runners.command.cli"])
def test_version_names_the_package_and_the_commit(module, capsys):
    with pytest.raises(SystemExit) as e:
        importlib.import_module(module).main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"walscope {pyproject_version()}")
    if (ROOT / ".git").exists():
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        assert out == f"walscope {pyproject_version()} (commit {commit})\n"


def test_the_help_examples_run_by_the_bare_name(tmp_path):
    """`walscope --help`'s examples, exactly as written: bare `walscope`,
    found on the PATH through the link setup.sh makes, from a shell with no
    virtual environment, in a folder laid out as they expect."""
    from runners.command import cli
    from runners.command.walscope import EXAMPLES
    if not (VENV_BIN / "walscope").exists():
        pytest.skip("no .venv/bin/walscope (make venv)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    links.add(ROOT, bin_dir)
    lines = [l.strip() for l in EXAMPLES.splitlines()[1:] if l.strip()]
    assert lines
    ws = workspace(tmp_path)
    env = {**PLAIN_ENV, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    ran = 0
    for line in lines:
        words = shlex.split(line)
        assert words[0] == "walscope" or words[:2] == ["sudo", "walscope"], line
        if words[:3] == ["sudo", "walscope", "trace"]:   # trace_wal's options
            cli.build_parser().parse_args(words[3:])
            continue
        if runnable(line):
            continue
        p = subprocess.run(["sh", "-c", line], cwd=ws, env=env, capture_output=True,
                           text=True, timeout=300)
        assert p.returncode == 0 and "Traceback" not in p.stderr, f"{line}\n{p.stderr[-2000:]}"
        ran += 1
    assert ran >= 5


def to_a_closed_pipe(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """argv with stdout a pipe whose reader has gone (`... | head -1` once
    head has its line: with no race, every write fails)."""
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run(argv, stdout=w, stderr=subprocess.PIPE, text=True, cwd=cwd,
                              env=PLAIN_ENV, timeout=300)
    finally:
        os.close(w)


@pytest.mark.parametrize("args", [["query", "--list"], ["analyse", "RUN"], ["--help"],
                                  ["trace", "--version"], ["trace", "--help"]])
def test_a_reader_that_has_gone_ends_it_quietly(args, tmp_path):
    """`walscope query --list | head -1`: no BrokenPipeError, no traceback,
    exit 0 (the command's own status: it got to the end)."""
    run = record_run(tmp_path / "run")
    argv = [str(ROOT / "walscope"), *[str(run) if a == "RUN" else a for a in args]]
    p = to_a_closed_pipe(argv, tmp_path)
    assert p.returncode == 0 and p.stderr == "", p.stderr[-2000:]


def test_analyse_no_such_path_says_so(tmp_path, capsys):
    from runners.command import analyse
    assert analyse.main([str(tmp_path / "nope")]) == 1
    assert capsys.readouterr().err == f"analysis: {tmp_path}/nope: no such folder\n"
    (tmp_path / "file").write_text("")
    assert analyse.main([str(tmp_path / "file")]) == 1
    assert capsys.readouterr().err == f"analysis: {tmp_path}/file: not a folder\n"


def assert_says_what_to_do(err: str, run: Path) -> None:
    """One line: the file that could not be written, then copy or sudo."""
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert re.match(rf"analysis: {re.escape(str(run))}/\S+\.tmp: cannot write it "
                    r"\(Permission denied\): analyse a copy of the folder \(cp -r "
                    rf"{re.escape(str(run))} ~/{run.name}, then analyse ~/{run.name}\) "
                    r"or run with sudo$", err.strip()), err


def test_analyse_a_folder_not_yours_says_what_to_do(tmp_path, capsys, monkeypatch):
    """The analysis writes through analysis/run.py; a PermissionError there
    (a run folder root traced, a user analyses) is one line naming the file."""
    import analysis.__main__ as A
    from runners.command import analyse
    run = record_run(tmp_path / "run")

    def refuse(r: Path) -> None:
        raise PermissionError(13, "Permission denied", str(r / "writes.parquet.tmp"))
    monkeypatch.setattr(A, "analyse", refuse)
    assert analyse.main([str(run)]) == 1
    assert_says_what_to_do(capsys.readouterr().err, run)


def test_export_skips_what_is_no_run_folder(tmp_path, capsys):
    """`walscope export runs/* DIR` where runs/ holds a study folder and a
    file besides the runs: each said in one line and skipped, every run
    exported."""
    from runners.command import walscope
    ws = workspace(tmp_path)
    runs = ws / "runs"
    (runs / "study-001").mkdir()
    (runs / "study-001" / "README.md").write_text("# a study\n")
    (runs / "notes.txt").write_text("")
    paths = sorted(runs.iterdir())      # what runs/* gives: A, B, notes.txt, study-001
    assert walscope.main(["export", *map(str, paths), str(ws / "fleet")]) == 0
    out = capsys.readouterr()
    assert out.err.splitlines() == [
        f"walscope export: skipping {runs}/notes.txt: not a folder",
        f"walscope export: skipping {runs}/study-001: not a run folder "
        "(no records, run.json or summary.json)"]
    assert [l.split(" -> ")[0] for l in out.out.splitlines()] == [f"{runs}/A", f"{runs}/B"]
    assert walscope.main(["export", str(runs / "notes.txt"), str(ws / "fleet")]) == 1
    assert capsys.readouterr().err.endswith("walscope: no run folder to export\n")


def test_the_suite_names_its_ten_slowest_tests(tmp_path):
    """pytest.ini's addopts: every run ends with its ten slowest tests."""
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    p = subprocess.run([str(VENV_BIN / "python") if (VENV_BIN / "python").exists()
                        else "python3", "-m", "pytest", "-c", str(ROOT / "pytest.ini"),
                        "--rootdir", str(tmp_path), str(tmp_path / "test_one.py")],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stdout[-2000:]
    assert "slowest 10 durations" in p.stdout, p.stdout[-2000:]


def world_readable_copy(run: Path) -> Path:
    """run copied where nobody may read it but not write it (root's)."""
    d = Path(tempfile.mkdtemp(prefix="walscope-first-"))
    os.chmod(d, 0o755)
    shutil.copytree(run, d / "run")
    subprocess.run(["chmod", "-R", "a+rX,go-w", str(d)], check=True)
    return d / "run"


def as_nobody(cmd: list[str], cwd: Path = Path("/tmp")) -> subprocess.CompletedProcess:
    return subprocess.run(["sudo", "-u", "nobody", "env", "-i", f"PATH={USER_PATH}",
                           "HOME=/tmp", "LANG=C.UTF-8", *cmd], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.root
def test_commands_on_the_path_as_root_a_user_and_under_sudo():
    """setup.sh's links step, as setup.sh runs it, then `walscope
    --version` and `trace_wal --version` by the bare name: as root, as a
    user (nobody, whose git would refuse root's clone without
    safe.directory) and under sudo (secure_path holds /usr/local/bin)."""
    step = [l.strip() for l in (ROOT / "setup.sh").read_text().splitlines()
            if "runners.command.links add" in l]
    assert step == ["as_root python3 -m runners.command.links add"]
    p = subprocess.run(["python3", "-m", "runners.command.links", "add"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    expect = version.version_text() + "\n"
    assert "(commit " in expect
    for name in links.SCRIPTS:
        plain = {"PATH": USER_PATH, "HOME": "/tmp", "LANG": "C.UTF-8"}
        ways = {
            "root": subprocess.run([name, "--version"], env=plain, cwd="/tmp",
                                   capture_output=True, text=True, timeout=120),
            "user": as_nobody([name, "--version"]),
            "sudo": subprocess.run(["sudo", name, "--version"],
                                   env={**plain, "PATH": "/usr/bin:/bin"}, cwd="/tmp",
                                   capture_output=True, text=True, timeout=120)}
        for who, r in ways.items():
            assert (r.returncode, r.stdout) == (0, expect), f"{name} as {who}: {r.stderr}"


@pytest.mark.root
def test_a_user_analysing_roots_run_folder_is_told_what_to_do(tmp_path):
    """Really refused: root's run folder, analysed by nobody."""
    run = world_readable_copy(record_run(tmp_path / "run"))
    try:
        p = as_nobody([str(ROOT / "walscope"), "analyse", str(run)])
        assert p.returncode == 1
        assert_says_what_to_do(p.stderr, run)
    finally:
        shutil.rmtree(run.parent)


def _ns(text: str) -> float:
    """"51.8us", "51.8 us", "1.25 ms", "900ns" as nanoseconds."""
    m = re.fullmatch(r"([\d.,]+)\s*(ns|us|ms|s)", text.strip())
    assert m, text
    return float(m.group(1).replace(",", "")) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]


def _cells(report: str) -> dict[str, str]:
    """The report's headline table: its one row, by column."""
    table = report[report.index('class="headline"'):]
    table = table[:table.index("</table>")]
    heads = re.findall(r"<th>(.*?)</th>", table)
    cells = re.findall(r"<td>(.*?)</td>", table)
    import html
    return {html.unescape(h): html.unescape(c) for h, c in zip(heads, cells)}


@pytest.mark.root
def test_one_number_in_the_terminal_summary_and_report(tmp_path):
    """The plain command's probe overhead removed, p99 and window lengths:
    the same figure in the terminal, summary.json and the report's headline
    (they read 37.5 us in the terminal and 15.3 us in the report once; the
    terminal said "4 windows of 298 ms" where the windows ran 50 ms to 1 s)."""
    from analysis.table import fmt_ns, windows_said
    out = tmp_path / "o"
    p = subprocess.run([str(VENV_BIN / "trace_wal"), "-o", str(out), "--", "db_bench",
                        f"--db={tmp_path}/db", "--benchmarks=fillrandom", "--num=200000",
                        "--threads=2", "--sync=false"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    import json
    s = json.loads((out / "summary.json").read_text())
    cells = _cells((out / "report.html").read_text())
    term = p.stdout
    # probe overhead removed: one field, three views
    removed = s["writes"]["overhead_removed_ns"]
    said = re.search(r"probe overhead removed: (\S+) per", term)
    assert said and said.group(1) == fmt_ns(removed), (said, removed)
    assert abs(_ns(cells["probe overhead removed"].removesuffix(" a write")) - removed) \
        <= max(50, 0.01 * removed), (cells["probe overhead removed"], removed)
    # p99: the headline's, or "not measurable" in every view
    h = s["headline"]
    said = re.search(r"^  p99: ([^,]+)|^answer: the rows, mean \S+, p99 (\S+) a ", term, re.M)
    if h["p99_ns"] is None:
        assert not said or said.group(2) is None and "," not in said.group(0), term
        assert "not measurable" in cells["p99"]
    else:
        assert said, term
        assert (said.group(1) or said.group(2)) == fmt_ns(h["p99_ns"]), (said.group(0), h)
        assert abs(_ns(cells["p99"]) - h["p99_ns"]) <= max(50, 0.01 * h["p99_ns"])
    # the windows as they ran
    w = s["windows"]
    assert w.get("count"), "no window: the run is too short for this test"
    words = windows_said(w)
    assert words in term and words in cells["mode"], (words, cells["mode"])
    assert w["min_ms"] <= w["mean_ms"] <= w["max_ms"]
