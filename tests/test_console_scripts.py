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
