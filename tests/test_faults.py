"""Faults injected into real traced runs: what survives, what is lost, what
stays attached.  Each test records its row (.output/faults.json, which
`make docs` turns into docs/faults.md's table) from what it observed,
before it asserts: a failure shows in the table as NO.  The tests wait for
events (records on disk, processes gone), never for a fixed time."""
from __future__ import annotations

import pytest
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd

from runfolder import records as R
from tests.conftest import TRACE, record_fault, records_lost, run_trace

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

LONG_RUN = ["--benchmarks=fillrandom", "--num=100000000", "--sync=true", "--threads=2"]


def _loaded() -> int:
    out = subprocess.run(["bpftool", "-j", "prog", "list"], capture_output=True,
                         text=True).stdout
    return sum(1 for p in json.loads(out or "[]") if p.get("name", "").startswith("ws_"))


def ours_attached(seconds: float = 10) -> int:
    """walscope BPF programs still loaded (all are named ws_*) once the
    kernel has released what a dead collector held (it frees links and
    programs a moment after the process is gone), or after that long."""
    end = time.monotonic() + seconds
    while (n := _loaded()) and time.monotonic() < end:
        time.sleep(0.1)
    return n


def _pids_of(pattern: str) -> list[int]:
    out = subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def _wait_gone(pattern: str, seconds: float = 60) -> bool:
    """True once no process matches (False if one still does after that)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _pids_of(pattern):
            return True
        time.sleep(0.1)
    return False


def _wait_writes(out: Path, proc: subprocess.Popen, n: int = 300,
                 seconds: float = 300) -> None:
    """Until the collector has written n write records (the workload is
    running and traced), whatever the machine's start-up takes."""
    size = R.Layout.build().struct_dtype("ws_write_rec").itemsize
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        f = out / "writes.bin"
        if f.exists() and f.stat().st_size >= n * size:
            return
        assert proc.poll() is None, f"the traced run ended early: {proc.returncode}"
        time.sleep(0.1)
    raise AssertionError(f"no {n} writes recorded after {seconds} s")


def _fresh_run_works(tmp_path: Path) -> bool:
    p = run_trace(["-q", "--mode", "full", "-o", str(tmp_path / "fresh"), "--", "db_bench",
                   f"--db={tmp_path}/fresh-db", "--benchmarks=fillrandom", "--num=200"],
                  timeout=300)
    return p.returncode == 0 and \
        json.loads((tmp_path / "fresh" / "summary.json").read_text())["writes"]["count"] == 200


def _check_and_record(fault: str, tmp_path: Path, lost: int, ok: bool = True) -> None:
    """Record the fault's row (survived: the run did what it should, ok,
    and a fresh run after it works), then require the outcome."""
    left = ours_attached()
    fresh = _fresh_run_works(tmp_path)
    record_fault(fault, survived=ok and fresh, lost=lost, left=left)
    assert ok and left == 0 and fresh


def _start(tmp_path: Path, out: Path, ignore_sigint: bool = False) -> subprocess.Popen:
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    return subprocess.Popen(TRACE + ["-q", "--mode", "full", "-o", str(out), "--", "db_bench",
                                     f"--db={tmp_path}/db", *LONG_RUN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ignore)


def _summary(out: Path) -> dict:
    try:
        return json.loads((out / "summary.json").read_text())
    except (OSError, ValueError):
        return {}


def _sigterm_after(tmp_path: Path, out: Path, ignore_sigint: bool = False) -> bool:
    """Starts a traced run, SIGTERMs it once writes are recorded; True if it
    stopped cleanly and kept what it had."""
    proc = _start(tmp_path, out, ignore_sigint)
    _wait_writes(out, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    s = _summary(out)
    return ("Traceback" not in err and bool(s.get("interrupted"))
            and s.get("writes", {}).get("count", 0) > 100
            and _wait_gone(f"--db={tmp_path}/db", 30))


def test_ctrl_c_keeps_everything(tmp_path):
    out = tmp_path / "o"
    proc = _start(tmp_path, out)
    _wait_writes(out, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    s = _summary(out)
    ok = ("Traceback" not in err and (out / "writes.parquet").exists()
          and len(pd.read_parquet(out / "writes.parquet")) > 100
          and s.get("interrupted") is True and _wait_gone(f"--db={tmp_path}/db", 30))
    _check_and_record("Ctrl-C (SIGINT) to trace_wal.py", tmp_path,
            records_lost(s), ok)


def test_ctrl_c_exits_130_every_time(tmp_path):
    """Ctrl-C as a terminal sends it (SIGINT to trace_wal.py's whole process
    group, the workload's too), 10 times at moments spread over start-up,
    the first writes and later: 130 each time, with one line that says the
    run was interrupted and names the folder kept.  (It exited 0 in 2 of 6
    when the interrupt landed between waitpid() and Popen keeping the
    status.)"""
    import random
    rng = random.Random(26)
    seen = []
    for i in range(10):
        out, db = tmp_path / f"o{i}", f"--db={tmp_path}/db{i}"
        proc = subprocess.Popen(TRACE + ["-q", "-o", str(out), "--", "db_bench", db,
                                         *LONG_RUN],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        if i % 2:
            try:
                _wait_writes(out, proc, n=1)
            except AssertionError:
                raise AssertionError(proc.communicate()[1][-2000:]) from None
            time.sleep(rng.uniform(0, 0.3))
        else:
            time.sleep(rng.uniform(0.2, 3.0))
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        said = [l for l in err.splitlines() if "interrupted" in l]
        kept = (out / "summary.json").exists()
        seen.append((proc.returncode, len(said), kept))
        assert "Traceback" not in err, err
        assert _wait_gone(db, 30)
        assert proc.returncode == 130 and len(said) == 1, (i, proc.returncode, err)
        assert (str(out) in said[0]) == kept, said
    assert [c for c, _, _ in seen] == [130] * 10
    assert sum(k for _, _, k in seen) >= 5, seen    # most were kept: tracing had begun
    assert ours_attached() == 0


# the ways trace_wal starts: the system's Python on the file (which moves
# into .venv by exec), the file under .venv's Python, the console script
STARTS = [["/usr/bin/python3", str(Path(TRACE[1]))], TRACE,
          [str(Path(TRACE[0]).parent / "trace_wal")]]


@pytest.mark.parametrize("delay", [0.1, 0.3, 0.6, 1, 2, 4])
def test_sigint_from_a_script_at_any_moment(tmp_path, delay):
    """A script's `trace_wal ... &` then `kill -INT $!`: the job starts with
    SIGINT ignored, the interrupt goes to trace_wal alone.  At every moment
    from its first line: exit 130, no traceback, summary.json's exit_code
    130 or no folder at all, and no workload left running (it exited 0 at
    0.3 and 0.6 s: the interrupt came before the tracer's handler and was
    ignored).  One try a moment here; bench/interrupts.py tries ten."""
    out, db = tmp_path / "o", f"--db={tmp_path}/db"
    start = STARTS[[0.1, 0.3, 0.6, 1, 2, 4].index(delay) % len(STARTS)]
    proc = subprocess.Popen(start + ["-o", str(out), "--", "db_bench", db, *LONG_RUN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    time.sleep(delay)   # the moment is what is tested: any outcome must hold
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=180)
    assert "Traceback" not in err, err
    assert proc.returncode == 130, (start, delay, proc.returncode, err[-2000:])
    s = _summary(out)
    assert s.get("exit_code") == 130 or not out.exists(), (s.get("exit_code"), err)
    assert sum("interrupted" in ln for ln in err.splitlines()) == 1, err
    assert _wait_gone(db, 30)


def test_sigterm_from_a_background_job(tmp_path):
    """Started with SIGINT ignored (what `cmd &` in a script or nohup does),
    SIGTERM still stops the workload cleanly: it does not inherit the ignore."""
    assert _sigterm_after(tmp_path, tmp_path / "o", ignore_sigint=True)
    assert ours_attached() == 0


def test_sigterm_keeps_everything(tmp_path):
    out = tmp_path / "o"
    ok = _sigterm_after(tmp_path, out)
    _check_and_record("SIGTERM to trace_wal.py", tmp_path,
            records_lost(_summary(out)), ok)


def test_workload_killed_mid_run(tmp_path):
    """kill -9 of db_bench: the run ends normally with what was gathered."""
    out = tmp_path / "o"
    proc = _start(tmp_path, out)
    _wait_writes(out, proc)
    victims = _pids_of(f"--db={tmp_path}/db")
    victims = [p for p in victims if "db_bench" in Path(f"/proc/{p}/exe").resolve().name]
    assert victims
    for v in victims:
        os.kill(v, signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    s = _summary(out)
    ok = (proc.returncode != 0 and "Traceback" not in err    # the workload's fate
          and s.get("writes", {}).get("count", 0) > 100 and s.get("partial_run") is False)
    _check_and_record("workload killed (kill -9 db_bench)", tmp_path,
            records_lost(s), ok)


def test_killed_tracer_leaves_a_readable_partial_run(tmp_path):
    """kill -9 of trace_wal.py: the collector sees EOF, flushes, detaches;
    the folder is analysed afterwards (walscope analyse) as partial: it
    says so, exits 4 and renders the report, which says PARTIAL."""
    from analysis.__main__ import PARTIAL
    from runners.command.analyse import main as analyse
    from viz import report
    out = tmp_path / "o"
    proc = _start(tmp_path, out)
    _wait_writes(out, proc)
    collectors = _pids_of(f"walscope-collect -o {out}")
    proc.kill()
    proc.wait()
    subprocess.run(["pkill", "-9", "-f", "--", f"--db={tmp_path}/db"])
    assert collectors
    gone = _wait_gone(f"walscope-collect -o {out}")
    html = tmp_path / "r.html"
    refused = report.main([str(out), "-o", str(html)]) == 1   # not analysed: said so
    analysed = analyse(["-q", str(out)]) == PARTIAL
    s = _summary(out)
    ok = (gone and (out / "writes.bin").stat().st_size > 0 and refused and analysed
          and bool(s.get("partial_run")) and s.get("writes", {}).get("count", 0) > 100
          and any("the tracer died" in w for w in s.get("partial_why", []))
          and "PARTIAL" in (out / "report.html").read_text())
    _check_and_record("trace_wal.py killed (kill -9)", tmp_path,
            records_lost(s), ok)


def test_killed_collector_detaches_and_workload_goes_on(tmp_path):
    out = tmp_path / "o"
    proc = _start(tmp_path, out)
    _wait_writes(out, proc)
    collectors = _pids_of(f"walscope-collect -o {out}")
    assert collectors
    os.kill(collectors[0], signal.SIGKILL)
    gone = _wait_gone(f"walscope-collect -o {out}")
    # the workload outlives its collector, and nothing of ours stays loaded
    goes_on = gone and proc.poll() is None and bool(_pids_of(f"--db={tmp_path}/db"))
    left = ours_attached()
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=300)
    finally:
        subprocess.run(["pkill", "-9", "-f", "--", f"--db={tmp_path}/db"])
    s = _summary(out)
    ok = ("Traceback" not in err
          and bool(s.get("partial_run"))       # the collector's report is missing: said so
          and s.get("writes", {}).get("count", 0) > 100)   # what it had written is kept
    record_fault("collector killed (kill -9 walscope-collect)", survived=goes_on and ok,
                 lost=records_lost(s), left=left)
    assert goes_on and ok and left == 0


def test_pid_exits_during_attach(tmp_path):
    """-p on a process that exits at once: one line or a clean empty run."""
    victim = subprocess.Popen(["sleep", "0.3"])
    p = run_trace(["-q", "-o", str(tmp_path / "o"), "--allow-empty", "--lib",
                   "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8", "-p", str(victim.pid)],
                  timeout=120)
    victim.wait()
    ok = "Traceback" not in p.stderr and (
        p.returncode == 0 or len([l for l in p.stderr.splitlines() if l.strip()]) == 1)
    _check_and_record("traced pid exits during attach", tmp_path, 0, ok)
