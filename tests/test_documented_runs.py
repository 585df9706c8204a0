"""Every command README.md and docs/*.md show, run as written: only the path
to this clone, the database folder and the workload's size are changed
(shortened: the same flags, fewer writes), in a fresh folder laid out as
the docs expect.  The tracer's commands run with sudo as written (root
tier); the ./walscope commands that need no root run as an unprivileged
user too.  A command that is not run says why (NOT_RUN), and a command
the docs gain that no rule here covers fails the test."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.conftest import ROOT
from tests.test_commands import PLAIN_ENV, documented_walscope_commands, runnable, workspace
from tests.test_layers import documented_lines


class NotRun(NamedTuple):
    """Documented commands (those pattern finds) this file does not run,
    and why: each is run elsewhere or is not a command to run."""
    pattern: str
    why: str


NOT_RUN = [
    NotRun(r"^make test$", "it runs this test suite"),
    NotRun(r"^make studies$|runners/study\.py (\d+|all)( --render-only)?$",
           "a study from scratch takes minutes to an hour: tests/test_studies.py runs "
           "`study.py all --quick`, the same code on small cells"),
    NotRun(r"runners/study\.py \S+ --quick$",
           "tests/test_studies.py runs `study.py all --quick`"),
    NotRun(r"runners/experiments/run_matrix\.py",
           "a matrix takes minutes: tests/test_matrix.py runs a small one"),
    NotRun(r"runners/experiments/durability\.py", "tests/test_durability.py runs it"),
    NotRun(r"^python3 -m runners\.workloads\.postgres ",
           "tests/test_pg_runner.py runs each against a real cluster (tests/test_postgres.py "
           "traces run and -p)"),
    NotRun(r"bench/", "a benchmark (minutes), run to produce bench/results"),
    NotRun(r"-- \./my_app$", "./my_app stands for the user's program"),
    NotRun(r"walscope serve |curl -s http://127\.0\.0\.1:9464/metrics",
           "it serves until stopped: tests/test_serve.py serves a running server and "
           "scrapes it"),
    NotRun(r"^\./walscope ",
           "tests/test_commands.py runs each from a plain shell, and below as nobody"),
]


def not_run(line: str) -> str | None:
    """Why this documented command is not run here, or None."""
    return next((e.why for e in NOT_RUN if re.search(e.pattern, line)), None)


def shortened(argv: list[str], ws: Path, i: int) -> list[str]:
    """The same command, on a short workload: db_bench's last --num wins
    (500 writes, its own database folder); SQLite and the timed writer run
    for a second."""
    out = list(argv)
    if "db_bench" in out:
        out += ["--num=500", f"--db={ws}/db{i}"]
    if "runners.workloads.sqlite_tpcc" in out:
        for flag, short in (("--duration", "1"), ("--transactions", "200")):
            if flag in out:
                out[out.index(flag) + 1] = short
    out = [re.sub(r"^--seconds=\d+$", "--seconds=1", a) for a in out]
    return [re.sub(r"^--db=/tmp/tw$", f"--db={ws}/tw", a) for a in out]


def clone_view(base: Path) -> Path:
    """A folder that is this clone to the docs' commands (its files linked)
    but with no runs/ or fleet/ of its own: `./trace_wal.py` and
    `python3 -m runners...` work as written from it, and what they write
    stays there."""
    ws = base / "clone"
    ws.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in ("runs", "fleet", ".git"):
            (ws / entry.name).symlink_to(entry)
    return ws


def test_every_documented_command_has_a_rule():
    """Each documented command is run here, by tests/test_commands.py, or
    named in NOT_RUN with the reason."""
    lines = [line for _, line in documented_lines()]
    assert any(l.startswith("sudo ./trace_wal.py") for l in lines)
    for line in lines:
        assert not_run(line) or line.startswith(("sudo ./trace_wal.py", "./setup.sh --demo")), \
            f"no rule runs or skips: {line}"


def test_each_command_not_run_says_why():
    """Every NOT_RUN entry gives its reason, covers some documented command
    (none is left from a command the docs dropped), and a test file its
    reason names exists."""
    lines = [line for _, line in documented_lines()]
    for entry in NOT_RUN:
        assert entry.why.strip(), f"NOT_RUN {entry.pattern!r}: no reason given"
        assert any(re.search(entry.pattern, line) for line in lines), \
            f"NOT_RUN {entry.pattern!r} matches no documented command"
        for test in re.findall(r"tests/\S+\.py", entry.why):
            assert (ROOT / test).is_file(), f"NOT_RUN {entry.pattern!r}: {test} does not exist"


@pytest.mark.root
def test_documented_trace_commands_run_as_written(tmp_path):
    """Each `sudo ./trace_wal.py ...` of the docs, with sudo, from a view
    of the clone (clone_view); -p PID gets a running db_bench."""
    base = Path(tempfile.mkdtemp(prefix="walscope-docs-"))
    ws = clone_view(base)
    bg = None
    ran = []
    try:
        for i, (where, line) in enumerate(documented_lines()):
            if not line.startswith("sudo ./trace_wal.py") or not_run(line):
                continue
            argv = shortened(shlex.split(line), ws, i)
            if "-p" in argv:
                bg = subprocess.Popen(["db_bench", f"--db={ws}/bg{i}", "--benchmarks=fillrandom",
                                       "--num=100000000", "--sync=true"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                argv[argv.index("-p") + 1] = str(bg.pid)
                argv[argv.index("--duration") + 1] = "2"
            p = subprocess.run(argv, cwd=ws, capture_output=True, text=True, timeout=600)
            if bg is not None:
                bg.send_signal(signal.SIGKILL)
                bg.wait()
                bg = None
            assert p.returncode == 0 and "Traceback" not in p.stderr, \
                f"{where}: {line}\n{shlex.join(argv)}\n{p.stderr[-2000:]}"
            assert re.search(r"^(component|on-CPU \(sampled\))", p.stdout, re.M), p.stdout[-2000:]
            ran.append(line)
        assert len(ran) >= 10, ran
        assert (ws / "fleet").is_dir() and (ws / "runs" / "A" / "summary.json").exists()
    finally:
        if bg is not None:
            bg.kill()
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.root
def test_the_demo_prints_the_table_not_the_statistics():
    """`./setup.sh --demo` as written (500 writes: db_bench's last --num
    wins): the table comes first, db_bench's --statistics dump only in
    the run folder's command.log; a second demo replaces the first."""
    for _ in range(2):
        p = subprocess.run([str(ROOT / "setup.sh"), "--demo", "--num=500"], cwd=ROOT,
                           capture_output=True, text=True, timeout=900)
        assert p.returncode == 0, p.stderr[-2000:]
        assert "rocksdb." not in p.stdout and "STATISTICS" not in p.stdout
        # after the set-up's own lines (setup: ...), the table (or its answer)
        first = next(line for line in p.stdout.splitlines() if not line.startswith("setup:"))
        assert first.startswith(("component", "answer:")), p.stdout[:1000]
        assert "rocksdb.wal.synced COUNT" in (ROOT / "runs" / "demo" / "command.log").read_text()


@pytest.mark.root
def test_documented_walscope_commands_run_as_nobody(tmp_path):
    """The ./walscope commands that need no root, as an unprivileged user
    with a plain shell (tests/test_commands.py runs them as the suite's
    user), in a folder laid out as the docs expect."""
    base = Path(tempfile.mkdtemp(prefix="walscope-nobody-"))
    try:
        ws = workspace(base)
        subprocess.run(["chmod", "-R", "a+rwX", str(base)], check=True)
        ran = 0
        for where, line in documented_walscope_commands():
            if runnable(line):
                continue
            cmd = line.replace("./walscope", shlex.quote(str(ROOT / "walscope")), 1)
            p = subprocess.run(["sudo", "-u", "nobody", "env", "-i",
                                *[f"{k}={v}" for k, v in PLAIN_ENV.items()], "sh", "-c", cmd],
                               cwd=ws, capture_output=True, text=True, timeout=300)
            assert p.returncode == 0 and "Traceback" not in p.stderr, \
                f"{where}: {line}\n{p.stderr[-2000:]}"
            ran += 1
        assert ran >= 7
        assert (ws / "report.html").exists() and (ws / "fleet.html").exists()
        assert os.stat(ws / "report.html").st_uid != 0
    finally:
        shutil.rmtree(base, ignore_errors=True)
