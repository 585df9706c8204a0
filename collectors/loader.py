"""The dynamic loader's debugger hook: where libraries loaded later are met.

glibc's and musl's loaders call ``_dl_debug_state()`` before dlopen() maps
objects and again once they are mapped, before any of their code has run,
with ``_r_debug.r_state`` saying which (RT_ADD, then RT_CONSISTENT).  A
uprobe on it (BPF ``ws_loader``) costs nothing between dlopen() calls, so
walscope keeps it attached for the whole run in every mode that follows
objects: a library loaded between two windows is found as surely as one
loaded inside one.  The probe's cookie is the distance from the hook to
``r_state``, so the BPF side stops the process only at RT_CONSISTENT.

This module reads a loader's two symbols and the process maps that say
what a stopped process has mapped since.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

HOOK = "_dl_debug_state"
R_DEBUG = "_r_debug"
# struct r_debug { int r_version; struct link_map *r_map; ElfW(Addr) r_brk;
#                  enum { RT_CONSISTENT, RT_ADD, RT_DELETE } r_state; ... }
R_STATE_OFFSET = 24


@dataclass(frozen=True)
class Mapping:
    """An executable file mapping of a process (a /proc/PID/maps line)."""
    range: str       # "lo-hi", as /proc/PID/map_files names it
    dev: int         # the kernel's dev_t (what the BPF side keys on)
    ino: int
    path: str        # as the process shows it

    def read_path(self, pid: int) -> str:
        return f"/proc/{pid}/map_files/{self.range}"


def vaddr_to_offset(elf: ELFFile, vaddr: int) -> int | None:
    for seg in elf.iter_segments():
        if seg["p_type"] == "PT_LOAD" and \
                seg["p_vaddr"] <= vaddr < seg["p_vaddr"] + seg["p_filesz"]:
            return vaddr - seg["p_vaddr"] + seg["p_offset"]
    return None


def hook_line(read_path: str) -> str | None:
    """The collector's attach line for the loader hook in this object (read
    and attached through read_path), or None when it is no dynamic loader
    (no _dl_debug_state)."""
    try:
        with open(read_path, "rb") as f:
            elf = ELFFile(f)
            found: dict[str, int] = {}
            for name in (".dynsym", ".symtab"):
                sec = elf.get_section_by_name(name)
                if sec is None or not hasattr(sec, "get_symbol_by_name"):
                    continue
                for sym in (HOOK, R_DEBUG):
                    got = sec.get_symbol_by_name(sym)
                    if got and sym not in found and got[0]["st_value"]:
                        found[sym] = got[0]["st_value"]
            if HOOK not in found:
                return None
            offset = vaddr_to_offset(elf, found[HOOK])
    except (OSError, ELFError, ValueError):
        return None
    if offset is None:
        return None
    # 0: no _r_debug to read, the process stops at every call
    cookie = found[R_DEBUG] + R_STATE_OFFSET - found[HOOK] if R_DEBUG in found else 0
    return f"loader\t{cookie}\t{offset}\t{read_path}\t{HOOK}"


def exec_mappings(pid: int) -> list[Mapping]:
    """The process's executable file mappings, one per object."""
    out: dict[tuple[int, int], Mapping] = {}
    try:
        lines = Path(f"/proc/{pid}/maps").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 6 or "x" not in parts[1] or not parts[5].startswith("/"):
            continue
        try:
            major, minor = (int(x, 16) for x in parts[3].split(":"))
            ino = int(parts[4])
        except ValueError:
            continue
        if not ino:
            continue
        key = (major << 20 | minor, ino)
        out.setdefault(key, Mapping(parts[0], key[0], ino,
                                    parts[5].strip().removesuffix(" (deleted)")))
    return list(out.values())


def kernel_dev(st_dev: int) -> int:
    """A stat() st_dev as the kernel's dev_t (what the BPF side keys on)."""
    return os.major(st_dev) << 20 | os.minor(st_dev)


def lasting_path(read: str, shown: str, key: tuple[int, int]) -> str:
    """Where to read an object and attach its probes: its own path where
    that is the same file here (device and inode), so that the windows'
    probes, attached again at each window, outlive the process it was met
    in (PostgreSQL's set-up postgres exits before pgbench's backends run:
    /proc/PID/exe was gone by the next window, and no window had a
    transaction); else the process's view (/proc/PID/exe, map_files: a
    file in another mount namespace, or deleted since)."""
    try:
        st = os.stat(shown)
    except OSError:
        return read
    return shown if (kernel_dev(st.st_dev), st.st_ino) == key else read
