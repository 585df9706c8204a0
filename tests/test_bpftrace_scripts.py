"""probes/*.bt: each one loads, and one agrees with trace_wal.py on a real run."""
from __future__ import annotations

import re
import subprocess

import pytest

from tests.conftest import ROOT, TRACE, ensure_tracefs, start_bpftrace

SCRIPTS = sorted((ROOT / "probes").glob("*.bt"))


def test_every_script_has_a_header():
    assert len(SCRIPTS) >= 3
    for s in SCRIPTS:
        head = s.read_text()[:1500]
        for field in ("USAGE:", "MEASURES:", "OVERHEAD:"):
            assert field in head, f"{s.name} lacks {field}"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_compiles(script):
    ensure_tracefs()
    p = subprocess.run(["bpftrace", "-d", str(script), "1"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-1500:]


def test_write_groups_matches_trace_wal(tmp_path):
    bt = start_bpftrace([str(ROOT / "probes" / "write_groups.bt")])
    p = subprocess.run(TRACE + ["-q", "-o", str(tmp_path / "o"), "--", "db_bench",
                                f"--db={tmp_path}/db", "--benchmarks=fillrandom",
                                "--num=701", "--threads=3", "--sync=true"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    bt.send_signal(2)
    out = bt.communicate(timeout=30)[0]
    counts = {k: int(v) for k, v in re.findall(r"@(\w+): (\d+)", out)}
    s = __import__("json").loads((tmp_path / "o" / "summary.json").read_text())
    assert counts["writes"] == s["writes"]["count"] == 2103
    assert counts["leaders"] == s["groups"]["leaders"]
