"""Where the log-sync engine turns on: an object that holds a named
engine's marks (its strings) but none of whose functions any engine's
resolver found.  It attaches no probe; its Resolution says that rows
come from the log's syscalls (syscall_rows), which the collector turns
on with an attach line of kind "rows"."""
from __future__ import annotations

from pathlib import Path

import engines
from collectors.modes import Mode
from collectors.symbols import Resolution
from engines.logsync import ENGINE


def marked_engine(path: str) -> engines.Engine | None:
    """The named engine whose marks the object holds, if any."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    return next((e for e in engines.ENGINES if e.mark and e.mark in data), None)


def resolve(objects: list[str], mode: Mode, keep_stepped: bool = True) -> Resolution:
    """The first object that holds an engine's marks: the registry tries
    this unit last, so no named engine's resolver took it."""
    res = Resolution(engine=ENGINE.name)
    for obj in objects:
        res.objects_checked.append(obj)
        found = marked_engine(obj)
        if found is None:
            continue
        res.object_path = obj
        res.syscall_rows = mode.syscalls
        res.notes.append(
            f"holds {found.title} but none of its functions are named (stripped): "
            + ("its commits come from its log's syscalls alone, no CPU split"
               if mode.syscalls else "this mode traces no syscall, so nothing of it"))
        return res
    return res
