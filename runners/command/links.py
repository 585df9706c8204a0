"""The commands on the PATH: links in /usr/local/bin (on a user's PATH, and
in sudo's secure_path) to this clone's console scripts, .venv/bin/walscope
and .venv/bin/trace_wal (pyproject.toml's [project.scripts]).

    python3 -m runners.command.links add|remove [--bin DIR]

setup.sh adds them, `./setup.sh --uninstall` removes them.  A link into
another clone is replaced (and said so); a file that is no link is left
alone, with a warning; remove takes only links into this clone.  Standard
library only: it runs with the system's Python, .venv or not.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path("/usr/local/bin")
SCRIPTS = ("walscope", "trace_wal")


def target(root: Path, name: str) -> Path:
    """The console script a link points at: root/.venv/bin/name."""
    return root / ".venv" / "bin" / name


def points_into(link: Path, root: Path) -> bool:
    """link is a symbolic link to a file under root."""
    if not link.is_symlink():
        return False
    dest = os.path.realpath(link.parent / os.readlink(link))
    return dest.startswith(os.path.realpath(root) + os.sep)


def a_clones(link: Path, name: str) -> bool:
    """link points at some clone's console script (.../.venv/bin/name)."""
    return link.is_symlink() and Path(os.readlink(link)).parts[-3:] == (".venv", "bin", name)


def add(root: Path = ROOT, bin_dir: Path = BIN) -> list[Path]:
    """Link each script from bin_dir; returns the links in place."""
    made = []
    for name in SCRIPTS:
        link, dest = bin_dir / name, target(root, name)
        if a_clones(link, name):
            if os.path.realpath(link) == os.path.realpath(dest):
                made.append(link)
                continue
            print(f"setup: {link} pointed into another clone ({os.readlink(link)}): "
                  "now into this one")
        elif link.exists() or link.is_symlink():
            print(f"setup: warning: {link} is not a link setup.sh made: left alone "
                  f"(remove it and run ./setup.sh again for this clone's {name})",
                  file=sys.stderr)
            continue
        tmp = link.with_name(f".{name}.walscope-tmp")
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(dest)
        tmp.replace(link)
        made.append(link)
    if made:
        print(f"setup: {', '.join(l.name for l in made)} on the PATH: links in {bin_dir} "
              f"to {target(root, '')}")
    return made


def remove(root: Path = ROOT, bin_dir: Path = BIN) -> list[Path]:
    """Remove the links into this clone; returns them."""
    gone = []
    for name in SCRIPTS:
        link = bin_dir / name
        if points_into(link, root):
            link.unlink()
            gone.append(link)
        elif link.is_symlink():
            print(f"setup: {link} left alone: it points to {os.readlink(link)}, "
                  "not into this clone", file=sys.stderr)
    print(f"setup: removed {', '.join(map(str, gone))}" if gone
          else f"setup: no link into this clone in {bin_dir}")
    return gone


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="runners.command.links", description=__doc__)
    ap.add_argument("action", choices=("add", "remove"))
    ap.add_argument("--bin", type=Path, default=BIN, help=f"where (default {BIN})")
    a = ap.parse_args(argv)
    try:
        (add if a.action == "add" else remove)(ROOT, a.bin)
    except OSError as e:
        print(f"setup: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
