"""Bad input: one clear line on stderr, non-zero exit, never a traceback."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import engines
from tests.conftest import ROOT, TRACE, run_trace

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

BAD = [
    (["--", "no-such-command-xyz"], "command not found"),
    (["-p", "999999999"], "no such process"),
    (["-p", "abc"], "not an integer"),
    (["--mode", "bogus", "--", "db_bench"], "invalid choice"),
    (["--cpu-types", "X:0", "--", "db_bench"], "core type must be P or E"),
    (["--cpu-types", "P:0-999", "--", "db_bench"], "does not exist"),
    (["--ringbuf-mb", "3", "--", "db_bench"], "power of two"),
    (["--no-sched", "--offcpu-stacks", "--", "db_bench"], "needs the scheduler hooks"),
    (["--duration", "5", "--", "db_bench"], "applies to -p"),
    ([], "nothing to trace"),
    (["--user", "no-such-user-xyz", "--", "db_bench"], "no such user"),
    (["--lib", "/nonexistent.so", "--", "db_bench"], "--lib /nonexistent.so: no such file"),
    (["--lib", "/etc/hostname", "--", "db_bench"], "--lib /etc/hostname: not an ELF object"),
]


@pytest.mark.parametrize("args,message", BAD)
def test_bad_input_one_line(args, message, tmp_path):
    p = run_trace(["-o", str(tmp_path / "o")] + args, timeout=60)
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, p.stderr
    assert message in lines[0]


def test_not_root_is_refused(tmp_path):
    p = subprocess.run(["sudo", "-u", "nobody", str(ROOT / "trace_wal.py"), "--",
                        "db_bench"], capture_output=True, text=True, cwd="/tmp")
    assert p.returncode == 1
    assert "Traceback" not in p.stderr
    assert p.stderr.strip() == ("walscope: needs root (or CAP_BPF and "
                                "CAP_PERFMON): run it with sudo")


def test_stripped_library_is_reported(tmp_path):
    lib = tmp_path / "librocksdb.so.7.8"
    real = Path("/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8")
    subprocess.run(["strip", "--strip-all", "-R", ".dynsym", "-o", str(lib), str(real)],
                   capture_output=True)
    if not lib.exists():
        shutil.copy(real, lib)
        subprocess.run(["strip", "--strip-all", str(lib)], check=True)
    p = run_trace(["-o", str(tmp_path / "o"), "--lib", str(lib), "--", "/bin/true"])
    assert p.returncode == 3 and "Traceback" not in p.stderr
    assert f"no {engines.titles()} write or transaction seen" in p.stderr
    inspected = p.stderr.splitlines()[-1]
    assert f"{lib.name}: " in inspected and "stripped" in inspected, p.stderr
    kept = run_trace(["-q", "--allow-empty", "-o", str(tmp_path / "o2"), "--lib", str(lib),
                      "--", "/bin/true"])
    s = json.loads((tmp_path / "o2" / "summary.json").read_text())
    why = {o["path"]: o["why"] for o in s["objects"]}
    assert kept.returncode == 0 and "stripped" in why[str(lib)], why


def test_exit_code_is_the_workloads(tmp_path):
    """A command that fails before any write: its exit status, one line
    with its last line of output, no table, no folder (issue 44)."""
    p = run_trace(["-o", str(tmp_path / "o"), "--", "db_bench",
                   "--benchmarks=nosuchbenchmark", f"--db={tmp_path}/db"])
    assert p.returncode == 1  # db_bench's own exit code for an unknown benchmark
    assert p.stdout == "" and "Traceback" not in p.stderr, (p.stdout, p.stderr)
    said = [ln for ln in p.stderr.splitlines() if "before any write" in ln]
    assert len(said) == 1 and "exited 1" in said[0], p.stderr
    assert "nosuchbenchmark" in said[0], said      # db_bench's "unknown benchmark" line
    assert not (tmp_path / "o").exists()
    kept = run_trace(["-q", "--allow-empty", "-o", str(tmp_path / "o2"), "--", "db_bench",
                      "--benchmarks=nosuchbenchmark", f"--db={tmp_path}/db"])
    s = json.loads((tmp_path / "o2" / "summary.json").read_text())
    assert kept.returncode == 1 and s["exit_code"] == 1 and s["command_exit_code"] == 1


def test_workload_runs_as_sudo_user_and_owns_the_run(tmp_path):
    import pwd
    import tempfile
    nobody = pwd.getpwnam("nobody")
    tmp_path = Path(tempfile.mkdtemp(prefix="walscope-user-"))  # reachable by nobody
    tmp_path.chmod(0o777)
    lib = "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8"
    env = {**os.environ, "SUDO_USER": "nobody", "LD_PRELOAD": "", "SECRET_TOKEN": "x"}
    p = subprocess.run(TRACE + ["-q", "--mode", "full", "-o", str(tmp_path / "o"), "--lib", lib, "--",
                                "/bin/sh", "-c",
                                f"id -u; env; db_bench --db={tmp_path}/db "
                                "--benchmarks=fillrandom --num=50"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    log = (tmp_path / "o" / "command.log").read_text()
    assert log.splitlines()[0] == str(nobody.pw_uid)
    assert "SECRET_TOKEN" not in log and "LD_PRELOAD" not in log  # sanitised
    assert (tmp_path / "o" / "summary.json").stat().st_uid == nobody.pw_uid
    assert (tmp_path / "o" / "writes.parquet").stat().st_uid == nobody.pw_uid
    shutil.rmtree(tmp_path)
