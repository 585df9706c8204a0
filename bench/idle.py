"""The guest's idle path, for benchmarks of fsync-bound workloads.

On this project's VM (a Firecracker guest, cpuidle driver and governor
haltpoll, booted with haltpoll.guest_halt_poll_ns=0) an idle vCPU halts at
once, and the host wakes it again when the disk completes.  A synced
write sleeps ~0.1 ms in fdatasync, so every write pays a halt and a
wakeup, and anything else that keeps a vCPU busy (a tracer's collector)
shortens that: untraced synced db_bench ran 25% faster with one thread,
and more with four, with the guest polling up to 0.4 ms before it halts,
and traced runs then lost what their probes cost instead of reading
faster than untraced (bench/results/NOTES.md, twelfth session).

poll_before_halt(ns) makes the guest poll up to ns before halting, for
the benchmark's duration, and puts the settings back after: on an
exception, on SIGTERM and SIGHUP, and, where the benchmark was killed
outright, at the next benchmark's start (the settings it found are kept
in STATE until they are back).  0 leaves the idle path as it is.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

PARAMS = Path("/sys/module/haltpoll/parameters")
# the settings a benchmark found, until it has put them back
STATE = Path("/run/walscope-haltpoll.json")
# the knobs set: poll up to ns, start there, and do not shrink the window
# after a poll that ended in a halt
KNOBS = ("guest_halt_poll_ns", "guest_halt_poll_grow_start", "guest_halt_poll_allow_shrink")
SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class IdleError(Exception):
    pass


def _poll_us(text: str) -> int:
    n = int(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text}")
    return n


def add_option(ap: argparse.ArgumentParser) -> None:
    """A benchmark's --idle-poll-us N: its argument to poll_before_halt,
    in microseconds."""
    ap.add_argument("--idle-poll-us", type=_poll_us, default=0, metavar="N",
                    help="the guest polls N us before it halts an idle vCPU, for the "
                         "benchmark (bench/idle.py; 0: the machine's own setting). On "
                         "this VM vCPUs halt at once, and synced workloads run faster "
                         "beside anything that keeps one busy, a tracer included")


def settings() -> dict[str, str]:
    """The guest halt-poll knobs as they are now ({} without haltpoll)."""
    if not PARAMS.is_dir():
        return {}
    return {k: (PARAMS / k).read_text().strip() for k in KNOBS if (PARAMS / k).exists()}


def _write(values: dict[str, str]) -> None:
    """Every knob, each tried even where another fails."""
    failed = []
    for k, v in values.items():
        try:
            (PARAMS / k).write_text(v)
        except OSError as e:
            failed.append(f"{k}: {e}")
    if failed:
        raise IdleError(f"{PARAMS}: " + "; ".join(failed))


def _restore_left_over() -> None:
    """A benchmark killed while the guest polled left its settings in
    STATE: put them back before reading the machine's own."""
    try:
        old = json.loads(STATE.read_text())
    except FileNotFoundError:
        return
    except (OSError, ValueError) as e:
        raise IdleError(f"{STATE}: unreadable ({e}); set {PARAMS} by hand and remove it")
    _write({k: v for k, v in old.items() if k in KNOBS})
    STATE.unlink()


@contextmanager
def poll_before_halt(ns: int) -> Iterator[dict[str, str]]:
    """Yields the settings in force (the machine's own where ns is 0)."""
    if ns <= 0:
        yield settings()
        return
    if set(settings()) != set(KNOBS):
        raise IdleError(f"{PARAMS}: no haltpoll guest idle knobs here "
                        "(the cpuidle-haltpoll driver of a KVM guest)")
    _restore_left_over()
    old = settings()
    new = {"guest_halt_poll_ns": str(ns), "guest_halt_poll_grow_start": str(ns),
           "guest_halt_poll_allow_shrink": "N"}
    previous = {s: signal.getsignal(s) for s in SIGNALS}

    def on_signal(signum: int, frame: object) -> None:
        """Put the settings back, then end as the signal would have."""
        restore()
        handler = previous[signal.Signals(signum)]
        if handler == signal.SIG_IGN:
            return
        if callable(handler):
            handler(signum, frame)
            return
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    def restore() -> None:
        if STATE.exists():
            _write(old)
            STATE.unlink()

    STATE.write_text(json.dumps(old))
    for s in SIGNALS:
        signal.signal(s, on_signal)
    try:
        _write(new)
        yield settings()
    finally:
        try:
            restore()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
