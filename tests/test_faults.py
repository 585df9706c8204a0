"""Faults injected into real traced runs: what survives, what is lost, what
stays attached.  Each test adds a row to tests/results/faults.json, which
`make readme` turns into the README's fault table."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd

from tests.conftest import TRACE, record_fault, run_trace

LONG_RUN = ["--benchmarks=fillrandom", "--num=100000000", "--sync=true", "--threads=2"]


def ours_attached() -> int:
    """walscope BPF programs still loaded (all are named ws_*)."""
    out = subprocess.run(["bpftool", "-j", "prog", "list"], capture_output=True,
                         text=True).stdout
    return sum(1 for p in json.loads(out or "[]") if p.get("name", "").startswith("ws_"))


def _pids_of(pattern: str) -> list[int]:
    out = subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def _wait_gone(pattern: str, seconds: float = 10) -> None:
    for _ in range(int(seconds * 10)):
        if not _pids_of(pattern):
            return
        time.sleep(0.1)


def _lost(out: Path) -> int:
    s = json.loads((out / "summary.json").read_text())
    return sum(s["lost_events"].values())


def _fresh_run_works(tmp_path: Path) -> bool:
    p = run_trace(["-q", "-o", str(tmp_path / "fresh"), "--", "db_bench",
                   f"--db={tmp_path}/fresh-db", "--benchmarks=fillrandom", "--num=200"],
                  timeout=300)
    return p.returncode == 0 and \
        json.loads((tmp_path / "fresh" / "summary.json").read_text())["writes"]["count"] == 200


def _settle(fault: str, tmp_path: Path, lost: int) -> None:
    """Record the fault's row after a fresh run, then require the outcome."""
    left = ours_attached()
    fresh = _fresh_run_works(tmp_path)
    record_fault(fault, survived=fresh, lost=lost, left=left)
    assert left == 0 and fresh


def _start(tmp_path: Path, out: Path, ignore_sigint: bool = False) -> subprocess.Popen:
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    return subprocess.Popen(TRACE + ["-q", "-o", str(out), "--", "db_bench",
                                     f"--db={tmp_path}/db", *LONG_RUN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ignore)


def _sigterm_after(tmp_path: Path, out: Path, ignore_sigint: bool = False) -> int:
    """Starts a traced run, SIGTERMs it after 6 s, checks what it kept;
    returns how many of walscope's programs are left attached."""
    proc = _start(tmp_path, out, ignore_sigint)
    time.sleep(6)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err
    s = json.loads((out / "summary.json").read_text())
    assert s["interrupted"] and s["writes"]["count"] > 100
    assert not _pids_of(f"--db={tmp_path}/db")
    return ours_attached()


def test_ctrl_c_keeps_everything(tmp_path):
    out = tmp_path / "o"
    proc = _start(tmp_path, out)
    time.sleep(6)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err
    w = pd.read_parquet(out / "writes.parquet")
    assert len(w) > 100 and (out / "summary.json").exists()
    left = ours_attached()
    record_fault("Ctrl-C (SIGINT) to trace_wal.py", survived=len(w) > 100,
                 lost=_lost(out), left=left)
    assert left == 0 and not _pids_of(f"--db={tmp_path}/db")


def test_sigterm_from_a_background_job(tmp_path):
    """Started with SIGINT ignored (what `cmd &` in a script or nohup does),
    SIGTERM still stops the workload cleanly: it does not inherit the ignore."""
    assert _sigterm_after(tmp_path, tmp_path / "o", ignore_sigint=True) == 0


def test_sigterm_keeps_everything(tmp_path):
    out = tmp_path / "o"
    left = _sigterm_after(tmp_path, out)
    record_fault("SIGTERM to trace_wal.py", survived=True, lost=_lost(out), left=left)
    assert left == 0


def test_workload_killed_mid_run(tmp_path):
    """kill -9 of db_bench: the run ends normally with what was gathered."""
    out = tmp_path / "o"
    proc = _start(tmp_path, out)
    time.sleep(6)
    victims = _pids_of(f"--db={tmp_path}/db")
    victims = [p for p in victims if "db_bench" in Path(f"/proc/{p}/exe").resolve().name]
    assert victims
    for v in victims:
        os.kill(v, signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and "Traceback" not in err   # the workload's fate
    s = json.loads((out / "summary.json").read_text())
    assert s["writes"]["count"] > 100 and not s["partial_run"]
    _settle("workload killed (kill -9 db_bench)", tmp_path, _lost(out))


def test_killed_tracer_leaves_a_readable_partial_run(tmp_path):
    """kill -9 of trace_wal.py: the collector sees EOF, flushes, detaches."""
    from analysis.__main__ import main as analyse
    from viz import report
    out = tmp_path / "o"
    proc = _start(tmp_path, out)
    time.sleep(6)
    collectors = _pids_of(f"walscope-collect -o {out}")
    proc.kill()
    proc.wait()
    subprocess.run(["pkill", "-9", "-f", "--", f"--db={tmp_path}/db"])
    assert collectors
    _wait_gone(f"walscope-collect -o {out}")
    assert not _pids_of(f"walscope-collect -o {out}")
    assert (out / "writes.bin").stat().st_size > 0
    html = tmp_path / "r.html"
    assert report.main([str(out), "-o", str(html)]) == 1   # not analysed: said so
    assert analyse(["-q", str(out)]) == 0
    assert report.main([str(out), "-o", str(html)]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["partial_run"] and s["writes"]["count"] > 100
    assert "PARTIAL" in html.read_text()
    _settle("trace_wal.py killed (kill -9)", tmp_path, _lost(out))


def test_killed_collector_detaches_and_workload_goes_on(tmp_path):
    out = tmp_path / "o"
    proc = _start(tmp_path, out)
    time.sleep(4)
    collectors = _pids_of(f"walscope-collect -o {out}")
    assert collectors
    os.kill(collectors[0], signal.SIGKILL)
    time.sleep(2)
    goes_on = proc.poll() is None and bool(_pids_of(f"--db={tmp_path}/db"))
    left = ours_attached()
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=300)
    finally:
        subprocess.run(["pkill", "-9", "-f", "--", f"--db={tmp_path}/db"])
    assert "Traceback" not in err
    s = json.loads((out / "summary.json").read_text())
    assert s["partial_run"]  # the collector's report is missing: said so
    assert s["writes"]["count"] > 100  # what it had written is kept
    record_fault("collector killed (kill -9 walscope-collect)", survived=goes_on,
                 lost=sum(s["lost_events"].values()), left=left)
    assert goes_on and left == 0


def test_pid_exits_during_attach(tmp_path):
    """-p on a process that exits at once: one line or a clean empty run."""
    victim = subprocess.Popen(["sleep", "0.3"])
    p = run_trace(["-q", "-o", str(tmp_path / "o"), "--lib",
                   "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8", "-p", str(victim.pid)],
                  timeout=120)
    victim.wait()
    assert "Traceback" not in p.stderr
    assert p.returncode == 0 or len([l for l in p.stderr.splitlines() if l.strip()]) == 1
    left = ours_attached()
    record_fault("traced pid exits during attach", survived=True, lost=0, left=left)
    assert left == 0
