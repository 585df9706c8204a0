"""What the top-level commands (trace_wal.py, walscope) do before anything
else: run in the project's .venv (made by setup.sh), whoever starts them;
and what both do last: leave quietly when their reader has gone."""
from __future__ import annotations

import functools
import os
import select
import sys
from typing import Callable


def in_venv(top: str, script: str | None = None) -> None:
    """Re-execute script (default: top, a file at the repository's top)
    with .venv's Python unless already running it."""
    here = os.path.dirname(os.path.realpath(top))
    venv = os.path.join(here, ".venv")
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python) and os.path.realpath(sys.prefix) != os.path.realpath(venv):
        os.execv(python, [python, os.path.realpath(script or top)] + sys.argv[1:])


Main = Callable[[list[str] | None], int]


def reader_gone() -> bool:
    """stdout is a pipe its reader has closed (poll says POLLERR)."""
    try:
        p = select.poll()
        p.register(sys.stdout.fileno(), 0)
        return any(ev & select.POLLERR for _, ev in p.poll(0))
    except (OSError, ValueError):   # no file descriptor (a test's capture)
        return False


def flush_quietly() -> None:
    """Flush stdout; when its reader has gone, point it at /dev/null, so
    that the flush at exit fails no more (the recipe of Python's signal
    module documentation)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def quiet_broken_pipe(main: Main) -> Main:
    """main, without a traceback when stdout's reader has gone (`walscope
    query --list | head -1`, `walscope --help | head -1`): main's exit
    status if it got to the end, else 0.  A broken pipe that is not
    stdout's (a child's) is raised as before."""
    @functools.wraps(main)
    def run(argv: list[str] | None = None) -> int:
        code = 0
        try:
            code = main(argv)
        except BrokenPipeError:
            if not reader_gone():
                raise
        finally:    # SystemExit too (--help, --version, a usage error)
            flush_quietly()
        return code
    return run
