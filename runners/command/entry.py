"""What the top-level commands (trace_wal.py, walscope) do before anything
else: run in the project's .venv (made by setup.sh), whoever starts them."""
from __future__ import annotations

import os
import sys


def in_venv(top: str, script: str | None = None) -> None:
    """Re-execute script (default: top, a file at the repository's top)
    with .venv's Python unless already running it."""
    here = os.path.dirname(os.path.realpath(top))
    venv = os.path.join(here, ".venv")
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python) and os.path.realpath(sys.prefix) != os.path.realpath(venv):
        os.execv(python, [python, os.path.realpath(script or top)] + sys.argv[1:])
