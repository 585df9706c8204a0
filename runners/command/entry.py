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
TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing's Callable costs ~5 ms here, before Ctrl-C is held)
    from typing import Callable


def hold_interrupts() -> None:
    """From here on SIGINT raises KeyboardInterrupt, once released: it is
    held (blocked, kept pending) until release_interrupts().

    A background job of a non-interactive shell (`trace_wal ... &` in a
    script) and nohup start with SIGINT ignored, and Python then leaves it
    ignored: an interrupt before the tracer installed its own handler
    (~0.6 s of imports) was lost and the run went on to exit 0.  It is
    held rather than taken at once because one that lands inside an
    extension module's import becomes an ImportError (numpy's: "could not
    import module datetime", 1 in 20 at 0.1 s), and because a held signal
    stays pending across in_venv's exec.  ./trace_wal.py and ./walscope
    hold it on their first line; what no Python code can hold is the
    interpreter's own start (~20-40 ms on this VM: an interrupt then is
    ignored, as the shell asked; bench/results/interrupts.md)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def release_interrupts() -> None:
    """Deliver a held interrupt now (KeyboardInterrupt), and any later one
    as it comes; the command's imports are done.  Never left held: the
    workloads it starts would inherit the mask."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def in_venv(top: str, script: str | None = None) -> None:
    """Re-execute script (default: top, a file at the repository's top)
    with .venv's Python unless already running it (a signal the caller
    holds stays pending through the exec)."""
    here = os.path.dirname(os.path.realpath(top))
    venv = os.path.join(here, ".venv")
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python) and os.path.realpath(sys.prefix) != os.path.realpath(venv):
        os.execv(python, [python, os.path.realpath(script or top)] + sys.argv[1:])


def guarded(module: str, said: str) -> int:
    """module's main() with Ctrl-C honoured from the first line: an
    interrupt before main() handles its own exits 130 with one line (said),
    not a traceback.  The interrupt is held through the module's imports;
    main() releases it once its own imports are done (cli.main), else it
    is released as main() starts.  The console scripts (pyproject.toml)
    start here, and ./trace_wal.py and ./walscope."""
    import importlib
    try:
        hold_interrupts()
        main = importlib.import_module(module).main
        if not getattr(main, "releases_interrupts", False):
            release_interrupts()
        return int(main() or 0)
    except KeyboardInterrupt:
        flush_quietly()
        print(f"walscope: {said}", file=sys.stderr)
        return 130


TRACE_WAL = ("runners.command.cli", "interrupted before tracing began")
WALSCOPE = ("runners.command.walscope", "interrupted")


def trace_wal() -> int:
    """The trace_wal console script."""
    return guarded(*TRACE_WAL)


def walscope() -> int:
    """The walscope console script."""
    return guarded(*WALSCOPE)


Main = "Callable[[list[str] | None], int]"


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
