"""The walscope program as a user meets it: usage with no arguments, unknown
query names answered with the known ones, and every subcommand handed to
the module that does the work."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from analysis import query as Q
from runners import walscope
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
