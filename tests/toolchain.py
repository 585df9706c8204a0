"""What a test needs from the machine beyond the build: a program found, a
build step run; a toolchain or package this machine cannot provide makes
the test skip (Unavailable), anything else that fails is a failure."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest


class Unavailable(Exception):
    """A toolchain or package this machine cannot provide: the test skips."""


def tool(name: str, *fallbacks: str) -> str:
    """A program on PATH, or at one of the usual places sudo's PATH leaves
    out (/usr/local/go/bin, /usr/sbin)."""
    found = shutil.which(name) or next((f for f in fallbacks if os.access(f, os.X_OK)), None)
    if not found:
        raise Unavailable(f"{name} not found")
    return found


def step(cmd: list[str], what: str, fetch: bool = False, **kw) -> None:
    """One build step; a fetch that fails means the package cannot be had
    here (skip), anything else that fails is a failure."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    if p.returncode:
        msg = f"{what} failed ({' '.join(cmd[:3])} ...): {(p.stdout + p.stderr)[-1500:]}"
        if fetch:
            raise Unavailable(msg)
        pytest.fail(msg)
