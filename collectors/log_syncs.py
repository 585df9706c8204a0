"""Every sync of a log, counted windows or not: libc's fdatasync and fsync.

Syscalls are traced inside windows only (a tracepoint on every syscall of
the machine costs every process); the count of a log's syncs over the
whole run comes from a uprobe on libc's own fdatasync() and fsync(), kept
attached in every process that maps libc (an entry hit, 1-2 us, at each
sync of any file: a sync takes tens of us or more).  Its BPF side
(probes/uprobes.bpf.h, the cookie WS_COOKIE_LOG_SYNC) reads the fd's file
and counts the syncs of a WAL or journal (file_kind.h's rules) in
CNT_WAL_SYNC_MARKS: RocksDB's WAL syncs (its statistics' wal_synced),
PostgreSQL's (pg_stat_wal's wal_sync with wal_sync_method=fdatasync, its
default on Linux), SQLite's journal or WAL syncs.  A program that makes
the syscall itself (Go, a static binary without libc's symbols) is not
counted.
"""
from __future__ import annotations

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from collectors.loader import vaddr_to_offset
from probepoints.elf import code_at, is_emulated_site
from runfolder.files import LOG_SYNC_FUNCTIONS as SYNCS
from runfolder.records import Layout

ENDBR64 = bytes.fromhex("f30f1efa")


def cheap_site(path: str, offset: int) -> int | None:
    """Where at or just after a function's entry a uprobe emulates the
    instruction with the arguments untouched: the entry itself, or past a
    leading `cmp byte [rip+d32], imm8` the `jcc rel8` that follows it, each
    also after an `endbr64` (a glibc built with CET); None for neither."""
    if is_emulated_site(path, offset):
        return offset
    code = code_at(path, offset, 13)
    if code[:4] == ENDBR64:
        return cheap_site(path, offset + 4)
    if len(code) >= 9 and code[0] == 0x80 and code[1] == 0x3d and 0x70 <= code[7] <= 0x7f:
        return offset + 7
    return None


def sync_lines(read_path: str) -> list[str]:
    """The collector's attach lines for libc's sync functions in this
    object (attached through read_path), or none when it defines neither."""
    try:
        with open(read_path, "rb") as f:
            elf = ELFFile(f)
            dynsym = elf.get_section_by_name(".dynsym")
            if dynsym is None or not hasattr(dynsym, "get_symbol_by_name"):
                return []
            offsets = {}
            for name in SYNCS:
                got = dynsym.get_symbol_by_name(name)
                sym = next((s for s in got or [] if s["st_shndx"] != "SHN_UNDEF"
                            and s["st_info"]["type"] == "STT_FUNC"
                            and s["st_value"]), None)
                off = vaddr_to_offset(elf, sym["st_value"]) if sym else None
                site = cheap_site(read_path, off) if off is not None else None
                if site is not None:
                    offsets[name] = site
    except (OSError, ELFError, ValueError):
        return []
    cookie = Layout.build().enum_values("ws_cookie")["WS_COOKIE_LOG_SYNC"]
    return [f"always\t{cookie}\t{off}\t{read_path}\t{name}" for name, off in offsets.items()]
