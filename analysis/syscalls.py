"""Syscall names, from the header's enums (probes/walscope.h: ws_sys_write,
ws_sys_sync, ws_sys_other, ws_sys_untraced) and, for any other number,
the system's x86_64 unistd header (samples and off-CPU periods read every
syscall from saved registers in --mode sample).  The header's are those of
the layout the caller reads records with."""
from __future__ import annotations

import functools
import re
from pathlib import Path

from runfolder import records as R

UNISTD = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")


@functools.lru_cache(maxsize=1)
def _unistd() -> dict[int, str]:
    if not UNISTD.exists():
        return {}
    return {int(m.group(2)): m.group(1)
            for m in re.finditer(r"#define __NR_(\w+) (\d+)", UNISTD.read_text())}


@functools.lru_cache(maxsize=8)
def _tables(layout: R.Layout) -> tuple[dict[int, str], dict[int, str], frozenset[str],
                                       frozenset[str]]:
    """(all named, traced, write names, sync names) in one layout."""
    w, s = layout.syscalls("write"), layout.syscalls("sync")
    return (layout.syscalls(), {**w, **s, **layout.syscalls("other")},
            frozenset(w.values()), frozenset(s.values()))


def traced(layout: R.Layout) -> dict[int, str]:
    """number -> name of the syscalls walscope traces (an io record each)."""
    return _tables(layout)[1]


def name(nr: int, layout: R.Layout) -> str:
    """Any x86_64 syscall's name."""
    return _tables(layout)[0].get(nr) or _unistd().get(nr) or f"syscall_{nr}"


def writes(layout: R.Layout) -> frozenset[str]:
    """Names of the syscalls that write data (*_write_io)."""
    return _tables(layout)[2]


def syncs(layout: R.Layout) -> frozenset[str]:
    """Names of the syscalls that sync data (*_sync_io)."""
    return _tables(layout)[3]


def io_class(syscall: str, layout: R.Layout) -> str | None:
    """"sync" or "write" for a syscall that syncs or writes data, else None
    (components.io_component's io)."""
    return "sync" if syscall in syncs(layout) else "write" if syscall in writes(layout) \
        else None


def number(syscall: str, layout: R.Layout) -> int:
    """The number of a syscall the header names."""
    return {n: nr for nr, n in _tables(layout)[0].items()}[syscall]
