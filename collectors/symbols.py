"""Finding probe points: the ELF reading every engine's resolver shares
(function symbols, demangling, USDT notes, which objects a command or a
process would run) and the collector's --attach lines.  What an engine
looks for is its own (engines/<name>/resolve.py)."""
from __future__ import annotations

import functools
import importlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
import numpy as np

import engines
from collectors import modes
from collectors.records import Layout


@dataclass(frozen=True)
class ProbeSpec:
    prefix: str          # demangled name prefix, up to and including "("
    phase: str           # its engine's phase enum member
    modes: frozenset[str]   # the probe sets that attach it (collectors/modes.py)
    ret: bool = True     # also a return probe
    alt_of: str | None = None  # a newer/older name of that probe point
    # an overload whose signature has this runs only inside another probed
    # call of the same phase: not probed when such a call was found
    nested: str | None = None
    # inside a write this only runs within a call of one of these prefixes,
    # of the same phase: not probed where one of them is (its time and
    # component are the same; only its hits would add)
    within: tuple[str, ...] = ()
    # attached for the whole run, windows or not (entry only): an engine's
    # counting probe, which the BPF side counts in CNT_ROW_MARKS
    always: bool = False


FULL = frozenset({modes.EVERY_PROBE})
BOTH = frozenset({modes.EVERY_PROBE, modes.WRITE_PROBES})


class SymbolError(RuntimeError):
    """A target cannot be probed; the message is one line for the user."""


@dataclass
class Resolved:
    spec: ProbeSpec
    name: str            # demangled
    path: str
    offset: int          # file offset
    arg: int = 0         # cookie bits 16..: PH_SQL_STEP's zSql offset
    engine: str = engines.UNNAMED   # whose phase enum spec.phase is in


@dataclass
class Resolution:
    objects_checked: list[str] = field(default_factory=list)
    object_path: str | None = None
    probes: list[Resolved] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)   # spec prefixes not found
    version: str | None = None
    engine: str = engines.UNNAMED
    notes: list[str] = field(default_factory=list)     # degraded attribution
    # components measured by sampling inside their parent instead of probes
    sampled_split: dict[str, str] = field(default_factory=dict)  # comp -> parent
    # no write-group probes: leaders and queue come from syscalls (BPF side)
    groups_unprobed: bool = False
    # its rows come from its log's syscalls alone (no probes): the collector
    # turns the engine on with an attach line of kind "rows"
    syscall_rows: bool = False


def demangle(names: list[str]) -> list[str]:
    if not names:
        return []
    tool = shutil.which("c++filt")
    if not tool:
        raise SymbolError("c++filt (binutils) is needed to read C++ symbols")
    out = subprocess.run([tool], input="\n".join(names), capture_output=True,
                         text=True, check=True).stdout.split("\n")
    return out[: len(names)]


def _vaddr_to_offset(elf: ELFFile, vaddr: int) -> int | None:
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
                off = _vaddr_to_offset(elf, vaddr)
                if off is not None:
                    out.append((name, off))
            return out
    except (ELFError, OSError, ValueError) as e:
        raise SymbolError(f"{path}: not a readable ELF object ({e})") from None


@dataclass(frozen=True)
class UsdtProbe:
    provider: str
    name: str
    offset: int          # file offset of the probe's nop
    semaphore: int       # its semaphore's address, 0 if none


_NT_STAPSDT = 3


def usdt_probes(path: str) -> list[UsdtProbe]:
    """The object's SystemTap/DTrace probes (.note.stapsdt).  A probe site
    whose code tests its semaphore first only fires while a tracer has
    raised it: callers that need one without a semaphore check
    ``semaphore_tested``."""
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            secs = {s.name: s for s in sections(elf)}
            note = secs.get(".note.stapsdt")
            if note is None:
                return []
            base_sec = secs.get(".stapsdt.base")
            out = []
            for n in note.iter_notes():
                # pyelftools names type 3 after the GNU note it shares it with
                if n["n_name"] != "stapsdt" or n["n_type"] not in (
                        _NT_STAPSDT, "NT_GNU_BUILD_ID"):
                    continue
                desc = n["n_descdata"]
                desc = desc if isinstance(desc, bytes) else desc.encode("latin-1")
                pc, base, sem = (int.from_bytes(desc[i:i + 8], "little") for i in (0, 8, 16))
                provider, name = desc[24:].split(b"\0")[:2]
                if base_sec is not None and base:   # prelinked: move with the base
                    pc += base_sec["sh_addr"] - base
                off = _vaddr_to_offset(elf, pc)
                if off is not None:
                    out.append(UsdtProbe(provider.decode(), name.decode(), off, sem))
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


def candidate_objects_for_command(exe: str, extra: list[str]) -> list[str]:
    main = interpreter_chain(exe)
    objs = [os.path.realpath(main)] + shared_libs(main)
    # what the program will load that holds an engine, by the engine's unit
    # (its resolver's optional candidate_objects: Python's _sqlite3)
    for e in engines.ENGINES:
        more = getattr(resolver_module(e), "candidate_objects", None) if e.resolver else None
        for mod in more(main) if more else []:
            objs += [mod] + shared_libs(mod)
    objs += [os.path.realpath(p) for p in extra]
    return list(dict.fromkeys(objs))


def candidate_objects_for_pid(pid: int, extra: list[str]) -> list[str]:
    objs: list[str] = []
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and "x" in parts[1] and parts[5].startswith("/"):
                    p = parts[5].strip()
                    if p.endswith(" (deleted)"):
                        continue
                    objs.append(p)
    except OSError as e:
        raise SymbolError(f"pid {pid}: cannot read its memory map ({e.strerror})") from None
    objs += [os.path.realpath(p) for p in extra]
    return list(dict.fromkeys(objs))


def is_emulated_site(path: str, offset: int) -> bool:
    """True if the uprobe at offset can emulate the first instruction
    (push of a register, with or without REX.B, or a nop): cheap (~0.6 us
    here).
    Anything else is single-stepped out of line (~10 us here)."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            b = f.read(2)
    except OSError:
        return False
    if len(b) < 1:
        return False
    # a USDT probe's nop is emulated too (Linux 6.10+: x86 uprobes emulate nop)
    if b[0] == 0x90 or b[:2] in (b"\x0f\x1f", b"\x66\x90"):
        return True
    return 0x50 <= b[0] <= 0x57 or (b[0] == 0x41 and len(b) == 2 and 0x50 <= b[1] <= 0x57)


def stepped_components(probes: list[Resolved]) -> set[str]:
    """Components with at least one probe at a single-stepped site (each
    phase read in its own engine's table of the build's layout, the loaded
    object's; markers open none)."""
    build = Layout.build()
    stepped = [p for p in probes if not is_emulated_site(p.path, p.offset)]
    return {c for c in (build.phase_component(p.spec.phase, p.engine) for p in stepped) if c}


def stepped_phases(probes: list[Resolved]) -> set[str]:
    """Phases with at least one single-stepped probe site."""
    return {p.spec.phase for p in probes if not is_emulated_site(p.path, p.offset)}


def attach_lines(probes: list[Resolved]) -> list[str]:
    """Lines of the collector's --attach file: the cookie is the phase (the
    probe's engine's phase enum), the engine (enum ws_engine) in byte 1,
    the probe's argument from bit 16; the values of the build's layout (the
    object the collector loads)."""
    build = Layout.build()
    engine_ids = build.enum_values("ws_engine")
    lines = []
    for p in probes:
        e = engines.get(p.engine)
        ph = build.enum_values(e.phase_enum)[p.spec.phase] | engine_ids[e.ws_engine] << 8 \
            | p.arg << 16
        short = p.name.split("(")[0]
        kind = "always" if p.spec.always else "enter"
        lines.append(f"{kind}\t{ph}\t{p.offset}\t{p.path}\t{short}")
        if p.spec.ret:
            lines.append(f"exit\t{ph}\t{p.offset}\t{p.path}\t{short}")
    return lines


def resolution_lines(res: Resolution) -> list[str]:
    """The collector's attach lines for what a resolution found: its
    probes, and a "rows" line (the engine's id) if its rows come from
    syscalls."""
    lines = attach_lines(res.probes)
    if res.syscall_rows:
        e = engines.get(res.engine)
        lines.append(f"rows\t{Layout.build().enum_values('ws_engine')[e.ws_engine]}"
                     f"\t0\t-\t{e.name}")
    return lines


def symbol_ranges(path: str) -> list[tuple[int, int, str]]:
    """(start vaddr, end vaddr, demangled name) of every function in path."""
    rows = sorted({(v, v + max(size, 1), n) for n, v, size in _functions(path)})
    names = demangle([r[2] for r in rows])
    return [(a, b, n) for (a, b, _), n in zip(rows, names)]


def resolver_module(engine: engines.Engine):
    """The engine's resolve.py: resolve(objects, mode, keep_stepped) ->
    Resolution (mode: a row of collectors/modes.py), and optionally
    version_of(shown_path, read_path)."""
    return importlib.import_module(engine.resolver)


def main() -> int:
    import argparse
    ap = argparse.ArgumentParser(description="list walscope probe points")
    ap.add_argument("object", help="executable or library")
    ap.add_argument("--mode", choices=tuple(modes.MODES), default=modes.DEFAULT,
                    help="the probe points this mode attaches (default: %(default)s)")
    a = ap.parse_args()
    objs = candidate_objects_for_command(a.object, [])
    for engine in engines.ENGINES:
        res = resolver_module(engine).resolve(objs, modes.MODES[a.mode])
        if not res.object_path:
            continue
        print(f"{engine.title} in {res.object_path}")
        for p in res.probes:
            print(f"{p.spec.phase:16} {p.offset:#10x} {p.name[:100]}")
        for m in res.missing:
            print(f"missing: {m}")
        return 0
    print(f"no engine walscope knows in {a.object}")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
