"""The guest's idle path, for benchmarks of fsync-bound workloads.

On this project's VM (a Firecracker guest, cpuidle driver and governor
haltpoll, booted with haltpoll.guest_halt_poll_ns=0) an idle vCPU halts at
once, and the host wakes it again when the disk completes.  A synced
write sleeps ~0.1 ms in fdatasync, so every write pays a halt and a
wakeup, and anything else that keeps a vCPU busy (a tracer's collector)
shortens that: untraced synced db_bench ran 25% faster with the guest
polling up to 0.4 ms before it halts, and traced runs then lost what
their probes cost instead of reading faster than untraced
(bench/results/NOTES.md, twelfth session).

poll_before_halt(ns) makes the guest poll up to ns before halting, for
the benchmark's duration, and puts the settings back after (also on
SIGTERM).  0 leaves the idle path as it is.
"""
from __future__ import annotations

import atexit
import signal
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

PARAMS = Path("/sys/module/haltpoll/parameters")
# the knobs set, and what they are set to: poll up to ns, start there, and
# do not shrink the window after a poll that ended in a halt
KNOBS = ("guest_halt_poll_ns", "guest_halt_poll_grow_start", "guest_halt_poll_allow_shrink")


class IdleError(Exception):
    pass


def settings() -> dict[str, str]:
    """The guest halt-poll knobs as they are now ({} without haltpoll)."""
    if not PARAMS.is_dir():
        return {}
    return {k: (PARAMS / k).read_text().strip() for k in KNOBS if (PARAMS / k).exists()}


def _write(values: dict[str, str]) -> None:
    for k, v in values.items():
        (PARAMS / k).write_text(v)


@contextmanager
def poll_before_halt(ns: int) -> Iterator[dict[str, str]]:
    """Yields the settings in force (the machine's own where ns is 0)."""
    if ns <= 0:
        yield settings()
        return
    old = settings()
    if set(old) != set(KNOBS):
        raise IdleError(f"{PARAMS}: no haltpoll guest idle knobs here "
                        "(the cpuidle-haltpoll driver of a KVM guest)")
    new = {"guest_halt_poll_ns": str(ns), "guest_halt_poll_grow_start": str(ns),
           "guest_halt_poll_allow_shrink": "N"}

    def restore() -> None:
        _write(old)

    previous = signal.getsignal(signal.SIGTERM)
    atexit.register(restore)
    signal.signal(signal.SIGTERM, lambda *_: (restore(), sys.exit(143)))
    try:
        _write(new)
        yield settings()
    finally:
        restore()
        atexit.unregister(restore)
        signal.signal(signal.SIGTERM, previous)
