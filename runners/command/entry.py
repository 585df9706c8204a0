"""What the top-level commands (trace_wal.py, walscope) do before anything
else: honour Ctrl-C from their first line, however they were started, and
run in the project's .venv (made by setup.sh), whoever starts them; and
what both do last: leave quietly when their reader has gone.

Standard library only, and nothing heavy: this module is imported before
anything else, while an interrupt may already be on its way."""
from __future__ import annotations

import functools
import os
import select
import signal
import sys
from typing import Callable


def honour_interrupts() -> None:
    """SIGINT raises KeyboardInterrupt from here on, and one that came
    while it was blocked (across in_venv's exec) is delivered now.

    A background job of a non-interactive shell (`trace_wal ... &` in a
    script) and nohup start with SIGINT ignored, and Python then leaves it
    ignored: an interrupt before the tracer installed its own handler
    (~0.6 s of imports) was lost and the run went on to exit 0."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def in_venv(top: str, script: str | None = None) -> None:
    """Re-execute script (default: top, a file at the repository's top)
    with .venv's Python unless already running it.  SIGINT is blocked
    across the exec (a blocked signal stays pending through it); the new
    process's honour_interrupts() takes it, or, where the script calls
    none, this function's unblocking in the new process (never left
    blocked: the workloads it starts would inherit the mask)."""
    here = os.path.dirname(os.path.realpath(top))
    venv = os.path.join(here, ".venv")
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python) and os.path.realpath(sys.prefix) != os.path.realpath(venv):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        os.execv(python, [python, os.path.realpath(script or top)] + sys.argv[1:])
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def guarded(module: str, said: str) -> int:
    """module's main() with Ctrl-C honoured from the first line: an
    interrupt before main() handles its own exits 130 with one line (said),
    not a traceback.  The console scripts (pyproject.toml) start here."""
    import importlib
    try:
        honour_interrupts()
        return int(importlib.import_module(module).main() or 0)
    except KeyboardInterrupt:
        flush_quietly()
        print(f"walscope: {said}", file=sys.stderr)
        return 130


def trace_wal() -> int:
    """The trace_wal console script."""
    return guarded("runners.command.cli", "interrupted before tracing began")


def walscope() -> int:
    """The walscope console script."""
    return guarded("runners.command.walscope", "interrupted")


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
