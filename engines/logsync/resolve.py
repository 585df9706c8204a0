"""Where the log-sync engine turns on: an object that holds a named
engine's marks (its strings) but none of whose functions any engine's
resolver found.  It attaches no probe; its Resolution says that rows
come from the log's syscalls (syscall_rows), which the collector turns
on with an attach line of kind "rows"."""
from __future__ import annotations

from pathlib import Path

import engines
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from engines.logsync import ENGINE
from probepoints.elf import sections
from probepoints.modes import Mode
from probepoints.points import Resolution


def imported(path: str) -> set[str]:
    """The names of the dynamic symbols the object imports (undefined)."""
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            dyn = next((s for s in sections(elf) if s.name == ".dynsym"), None)
            if dyn is None:
                return set()
            return {s.name for s in dyn.iter_symbols()
                    if s["st_shndx"] == "SHN_UNDEF" and s.name}
    except (OSError, ELFError):
        return set()


def marked_engine(path: str) -> engines.Engine | None:
    """The named engine whose marks the object holds and whose API it does
    not import from another object (the sqlite3 shell holds SQLite's
    messages and calls libsqlite3's functions), if any."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    marked = [e for e in engines.ENGINES if e.mark and e.mark in data]
    names = imported(path) if marked else set()
    # a mark that is a function's name is held only where it is not the
    # name of a symbol the object imports (an extension calling it)
    return next((e for e in marked
                 if e.mark.decode(errors="replace") not in names
                 and not (e.imports and any(n.startswith(e.imports) for n in names))),
                None)


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
