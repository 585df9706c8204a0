"""The console scripts `make venv` installs (pyproject.toml) start: each
package they import is part of the install.  `engines` was left out of the
package list when it was added, and .venv/bin/walscope failed on its first
import while ./walscope, which runs from the tree, worked."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


@pytest.mark.parametrize("script", ["walscope", "trace_wal"])
def test_the_installed_script_starts(script, tmp_path):
    exe = BIN / script
    if not exe.exists():
        pytest.skip(f"{exe} not installed (make venv)")
    # from elsewhere: the tree is not on the path, only the install
    p = subprocess.run([str(exe), "--help"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "usage:" in p.stdout


ROOT = Path(__file__).resolve().parent.parent
BENCH = sorted(p for p in (ROOT / "bench").glob("*.py")
               if '__name__ == "__main__"' in p.read_text())


@pytest.mark.parametrize("script", BENCH, ids=lambda p: p.name)
def test_a_benchmark_starts_as_its_docs_say(script, tmp_path):
    """`sudo bench/x.py` runs the system's Python, which has none of the
    packages setup.sh put in .venv: each benchmark is executable and moves
    itself into .venv before importing them (bench/overhead.py failed on
    numpy, bench/window_cost.py was not executable).  -S keeps the system
    Python's own site-packages out, wherever they hold numpy.  Every
    benchmark: each file of bench/ that runs as a program."""
    assert script.read_text().startswith("#!/usr/bin/env python3\n"), script.name
    import os
    assert os.access(script, os.X_OK), f"{script.name} is not executable"
    p = subprocess.run(["/usr/bin/python3", "-S", str(script), "--help"], capture_output=True,
                       text=True, cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "usage:" in p.stdout
