"""Reading an object: its function symbols (demangled on demand), its
bytes, the libraries it loads, the interpreter a script runs, and whether
a probe at an offset is emulated or single-stepped.  Every engine's
resolver reads objects with these; imports nothing of walscope's."""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
import numpy as np

from probepoints.points import Resolution, Resolved, SymbolError


def demangle(names: list[str]) -> list[str]:
    if not names:
        return []
    tool = shutil.which("c++filt")
    if not tool:
        raise SymbolError("c++filt (binutils) is needed to read C++ symbols")
    out = subprocess.run([tool], input="\n".join(names), capture_output=True,
                         text=True, check=True).stdout.split("\n")
    return out[: len(names)]


def vaddr_to_offset(elf: ELFFile, vaddr: int) -> int | None:
    for seg in elf.iter_segments():
        if seg["p_type"] != "PT_LOAD":
            continue
        start = seg["p_vaddr"]
        if start <= vaddr < start + seg["p_filesz"]:
            return vaddr - start + seg["p_offset"]
    return None


# Elf64_Sym, read a table at a time (pyelftools builds an object a symbol:
# half a second for librocksdb, which a process stopped at dlopen waits for)
_ELF64_SYM = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"),
                       ("shndx", "<u2"), ("value", "<u8"), ("size", "<u8")])


_STT_FUNC = 2


def sections(elf: ELFFile):
    """The object's sections, leaving out any a stripper left dangling (a
    version table whose symbol table was removed): the rest still read."""
    for i in range(elf.num_sections()):
        try:
            yield elf.get_section(i)
        except ELFError:
            continue


def _functions(path: str) -> list[tuple[str, int, int]]:
    """(name, vaddr, size) of every defined function in .symtab and .dynsym
    (a name in both once, .symtab's).  Each engine's resolver asks in turn:
    the table is read once per file version."""
    st = os.stat(path)
    return _functions_of(path, st.st_ino, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _functions_of(path: str, ino: int, size: int, mtime_ns: int
                  ) -> list[tuple[str, int, int]]:
    with open(path, "rb") as f:
        elf = ELFFile(f)
        if elf.elfclass != 64 or not elf.little_endian:
            raise SymbolError(f"{path}: not a 64-bit little-endian ELF object")
        out: dict[str, tuple[int, int]] = {}
        tables = {s.name: s for s in sections(elf) if s.name in (".symtab", ".dynsym")}
        for secname in (".symtab", ".dynsym"):
            sec = tables.get(secname)
            if sec is None or sec["sh_entsize"] != _ELF64_SYM.itemsize:
                continue
            strtab = elf.get_section(sec["sh_link"]).data()
            syms = np.frombuffer(sec.data(), dtype=_ELF64_SYM)
            keep = syms[((syms["info"] & 0xf) == _STT_FUNC) & (syms["shndx"] != 0)
                        & (syms["value"] != 0)]
            for name_off, value, size in zip(keep["name"].tolist(), keep["value"].tolist(),
                                             keep["size"].tolist()):
                end = strtab.find(b"\0", name_off)
                name = strtab[name_off:end].decode(errors="replace")
                out.setdefault(name, (value, size))
        return [(n, v, s) for n, (v, s) in out.items()]


def symbols_read(path: str) -> bool:
    """Whether the object's symbol tables read whole: a rejection that
    rests on a failed read (EMFILE, EIO) is no verdict on the object."""
    try:
        _functions(path)
    except (SymbolError, ELFError, OSError, ValueError):
        return False
    return True


def function_symbols(path: str, token: re.Pattern[str] | None = None
                     ) -> list[tuple[str, int]]:
    """(mangled name, file offset) of defined functions matching token."""
    try:
        funcs = _functions(path)
        with open(path, "rb") as f:
            elf = ELFFile(f)
            out = []
            for name, vaddr, _ in funcs:
                if token is not None and not token.search(name):
                    continue
                off = vaddr_to_offset(elf, vaddr)
                if off is not None:
                    out.append((name, off))
            return out
    except (ELFError, OSError, ValueError) as e:
        raise SymbolError(f"{path}: not a readable ELF object ({e})") from None


def first_defining(objects: list[str], token: re.Pattern[str], name: str,
                   res: Resolution) -> tuple[str, dict[str, int]] | None:
    """The first object that defines function name, with {function: file
    offset} of its functions matching token; every object looked at is
    recorded in res.objects_checked (an unreadable one is passed over)."""
    for obj in objects:
        res.objects_checked.append(obj)
        try:
            syms = dict(function_symbols(obj, token))
        except SymbolError:
            continue
        if name in syms:
            return obj, syms
    return None


def embedded(path: str, pattern: re.Pattern[bytes]) -> re.Match[bytes] | None:
    """The first match of pattern in the object's bytes (the version string
    a build embeds), None if none or the file cannot be read."""
    try:
        with open(path, "rb") as f:
            return pattern.search(f.read())
    except OSError:
        return None


def is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def shared_libs(path: str) -> list[str]:
    """Libraries the dynamic loader would map for path (via ldd)."""
    try:
        out = subprocess.run(["ldd", path], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    libs = []
    for line in out.splitlines():
        m = re.search(r"=>\s+(/\S+)", line) or re.match(r"\s*(/\S+)", line)
        if m and os.path.exists(m.group(1)):
            libs.append(os.path.realpath(m.group(1)))
    return libs


def interpreter_chain(exe: str) -> str:
    """The ELF that actually runs for exe (follows one #! line)."""
    if is_elf(exe):
        return exe
    try:
        with open(exe, "rb") as f:
            first = f.readline(512)
    except OSError as e:
        raise SymbolError(f"{exe}: {e.strerror}") from None
    if first.startswith(b"#!"):
        parts = first[2:].decode(errors="replace").split()
        if parts:
            interp = parts[0]
            if os.path.basename(interp) == "env" and len(parts) > 1:
                interp = shutil.which(parts[1]) or parts[1]
            if is_elf(interp):
                return os.path.realpath(interp)
    raise SymbolError(f"{exe}: not an ELF executable or #! script")


def code_at(path: str, offset: int, n: int) -> bytes:
    """Up to n bytes of path at a file offset (b"" where it cannot be read)."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read(n)
    except OSError:
        return b""


def is_emulated_site(path: str, offset: int) -> bool:
    """True if the uprobe at offset can emulate the first instruction
    (push of a register, with or without REX.B, or a nop): cheap (~0.6 us
    here).
    Anything else is single-stepped out of line (~10 us here)."""
    b = code_at(path, offset, 2)
    if len(b) < 1:
        return False
    # a USDT probe's nop is emulated too (Linux 6.10+: x86 uprobes emulate nop)
    if b[0] == 0x90 or b[:2] in (b"\x0f\x1f", b"\x66\x90"):
        return True
    return 0x50 <= b[0] <= 0x57 or (b[0] == 0x41 and len(b) == 2 and 0x50 <= b[1] <= 0x57)


def symbol_ranges(path: str) -> list[tuple[int, int, str]]:
    """(start vaddr, end vaddr, demangled name) of every function in path."""
    rows = sorted({(v, v + max(size, 1), n) for n, v, size in _functions(path)})
    names = demangle([r[2] for r in rows])
    return [(a, b, n) for (a, b, _), n in zip(rows, names)]


def stepped_phases(probes: list[Resolved]) -> set[str]:
    """Phases with at least one single-stepped probe site."""
    return {p.spec.phase for p in probes if not is_emulated_site(p.path, p.offset)}
