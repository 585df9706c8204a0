"""The walscope program as a user meets it: usage with no arguments, unknown
query names answered with the known ones, and every subcommand handed to
the module that does the work."""
from __future__ import annotations

import importlib.util
import json
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from analysis import query as Q
from runners.command import walscope
from tests.test_dataset import synthetic_run

ROOT = Path(__file__).resolve().parent.parent
# what a new user's shell has: no virtual environment, the system's PATH
PLAIN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}


def plain(argv: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=PLAIN_ENV, capture_output=True, text=True,
                          timeout=300)


def test_no_arguments_prints_the_usage():
    p = plain([str(ROOT / "walscope")])
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith("usage: walscope")
    for cmd in ("trace", "analyse", "report", "flamegraph", "study", "export", "query"):
        assert f"\n    {cmd}" in p.stderr, cmd


def test_an_unknown_query_name_lists_the_known_ones(tmp_path, capsys):
    ds = tmp_path / "ds"
    from analysis import dataset as D
    D.export(synthetic_run(tmp_path / "run", seed=3), ds, host="h", run="r")
    assert walscope.main(["query", "nosuchquery", str(ds)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"walscope: no query named 'nosuchquery' (choose from "
                   f"{', '.join(Q.names())})"]
    # before the dataset is looked at, and on either engine
    for engine in ("duckdb", "spark"):
        assert walscope.main(["query", "no_such", str(tmp_path / "none"),
                              "--engine", engine]) == 1
        assert "choose from components_per_run" in capsys.readouterr().err
    # SQL is still SQL
    assert walscope.main(["query", "SELECT count(*) AS n FROM writes", str(ds)]) == 0
    assert capsys.readouterr().out.split() == ["n", "400"]


@pytest.mark.parametrize("cmd,usage", [
    ("analyse", "usage: walscope analyse"), ("report", "usage: walscope report"),
    ("flamegraph", "usage: walscope flamegraph"), ("trace", "usage: trace_wal.py"),
    ("study", "usage:")])
def test_subcommands_reach_their_module(cmd, usage):
    p = plain([str(ROOT / "walscope"), cmd, "--help"])
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(usage), p.stdout[:200]


def documented_walscope_commands() -> list[tuple[str, str]]:
    """(file, line) of every ./walscope command the README and docs show."""
    from tests.test_layers import documented_lines
    return [(where, line) for where, line in documented_lines()
            if line.startswith("./walscope ")]


def workspace(tmp: Path) -> Path:
    """A folder laid out as the docs' commands expect: runs/A and runs/B
    (synthetic run folders, one with a flame graph) to report and export."""
    from viz import flamegraph
    ws = tmp / "ws"
    for i, name in enumerate(("A", "B")):
        run = synthetic_run(ws / "runs" / name, seed=i)
        s = json.loads((run / "summary.json").read_text())
        s["components"]["queue"]["mean_ns"] = 5.0
        s["probe_hits"] = {"per_write": 4.0}
        (run / "summary.json").write_text(json.dumps(s))
        for kind in ("phase", "offcpu"):   # what walscope diff -o compares
            (run / f"{kind}.folded").write_text(f"db_bench;WriteToWAL;fdatasync {90 + 20 * i}\n")
    (ws / "runs" / "A" / "flame-phase.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>')
    assert flamegraph.TITLES
    return ws


def runnable(line: str) -> str | None:
    """Why a documented command cannot run here, or None."""
    if "analyse" in line:
        return "needs a traced run's records (the root tier runs it)"
    if "://" in line:
        return "a remote dataset"
    if "spark" in line and importlib.util.find_spec("pyspark") is None:
        return "Spark is an extra (walscope[spark])"
    return None


def test_documented_walscope_commands_run_from_a_plain_shell(tmp_path):
    """Each documented ./walscope command, in the docs' order, exactly as
    written (only ./walscope points at this clone), from a shell with no
    virtual environment: none may fail for a user who has run set-up."""
    cmds = documented_walscope_commands()
    assert len(cmds) >= 8 and any("report runs/A runs/B" in c for _, c in cmds)
    ws = workspace(tmp_path)
    ran = 0
    for where, line in cmds:
        if runnable(line):
            continue
        p = plain(["sh", "-c", line.replace("./walscope", shlex.quote(str(ROOT / "walscope")), 1)],
                  cwd=ws)
        assert p.returncode == 0 and "Traceback" not in p.stderr, \
            f"{where}: {line}\n{p.stderr[-2000:]}"
        ran += 1
    assert ran >= 7
    assert (ws / "report.html").exists() and (ws / "fleet.html").exists()
    assert (ws / "tail.csv").read_text().startswith("host,run")


@pytest.mark.root
def test_documented_analyse_runs_as_a_user(traced, tmp_path):
    """`./walscope analyse runs/<run>` as written, as an unprivileged user
    with a plain shell, on a copy of a traced run."""
    run = traced("--benchmarks=fillrandom", "--num=1500", "--threads=2", "--sync=true",
                 "--enable_pipelined_write=false")
    ws = Path(tempfile.mkdtemp(prefix="walscope-doc-"))
    try:
        shutil.copytree(run.dir, ws / "runs" / "demo")
        subprocess.run(["chmod", "-R", "a+rwX", str(ws)], check=True)
        lines = [line for _, line in documented_walscope_commands() if " analyse " in line]
        assert lines
        for line in lines:
            cmd = line.replace("<run>", "demo").replace(
                "./walscope", shlex.quote(str(ROOT / "walscope")), 1)
            p = subprocess.run(["sudo", "-u", "nobody", "env", "-i", *[f"{k}={v}" for k, v in
                                PLAIN_ENV.items()], "sh", "-c", cmd], cwd=ws,
                               capture_output=True, text=True, timeout=300)
            assert p.returncode == 0 and "write (total)" in p.stdout, f"{line}\n{p.stderr}"
    finally:
        shutil.rmtree(ws)
