"""walscope's version: the package's (pyproject.toml) and the checkout's
commit, for both commands' --version and for what a run records
(summary.json environment.walscope_commit).  Standard library only, so
--version answers before anything heavy is imported."""
from __future__ import annotations

import argparse
import importlib.metadata
import subprocess
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def package_version() -> str:
    """pyproject.toml's [project] version; the installed package's where
    there is no source tree."""
    try:
        with open(ROOT / "pyproject.toml", "rb") as f:
            return str(tomllib.load(f)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        pass
    try:
        return importlib.metadata.version("walscope")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def walscope_commit() -> str:
    """The checkout's commit (what a dataset's files say wrote them).
    safe.directory: git refuses a repository someone else owns (a user's
    clone traced with sudo, root's clone asked by a user) without it."""
    try:
        p = subprocess.run(["git", "-c", f"safe.directory={ROOT}", "-C", str(ROOT),
                            "rev-parse", "--short=12", "HEAD"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return p.stdout.strip() if p.returncode == 0 else "unknown"


def version_text() -> str:
    """"walscope 0.1.0 (commit ff357515447d)"; no commit outside a checkout."""
    commit = walscope_commit()
    return f"walscope {package_version()}" + (f" (commit {commit})" if commit != "unknown"
                                               else "")


class VersionAction(argparse.Action):
    """--version: print version_text() and exit 0 (git runs only when asked)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: Any = argparse.SUPPRESS,
                 help: str = "print walscope's version and commit, and exit") -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(version_text())
        parser.exit()
