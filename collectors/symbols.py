"""Find the probe points of a RocksDB or SQLite build: which object, where.

Symbols are matched by demangled-name prefix, so renamed or re-signed
overloads across RocksDB 7.x-10.x (WriteToWAL vs WriteGroupToWAL, AddRecord
with WriteOptions, ...) are all found; every overload present is attached.
Offsets are file offsets, as uprobes want them.  SQLite's are C names:
sqlite3_step (transaction boundaries and statement time) and, where the
library exports it (Debian's does), sqlite3WalCheckpoint, else the API's
sqlite3_wal_checkpoint_v2.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
import numpy as np

from collectors.records import enum_values


@dataclass(frozen=True)
class ProbeSpec:
    prefix: str          # demangled name prefix, up to and including "("
    phase: str           # enum ws_phase name
    modes: frozenset[str]
    ret: bool = True     # also a return probe
    alt_of: str | None = None  # a newer/older name of that probe point
    # an overload whose signature has this runs only inside another probed
    # call of the same phase: not probed when such a call was found
    nested: str | None = None
    # inside a write this only runs within a call of one of these prefixes,
    # of the same phase: not probed where one of them is (its time and
    # component are the same; only its hits would add)
    within: tuple[str, ...] = ()


FULL = frozenset({"full"})
BOTH = frozenset({"full", "writes"})

ROCKSDB_PROBES: tuple[ProbeSpec, ...] = (
    ProbeSpec("rocksdb::DBImpl::WriteImpl(", "PH_WRITE", BOTH),
    # --mode writes: the write's boundaries and the WAL calls only (4 hits
    # a leader's write); its group role and queue come from syscalls, the
    # memtable's and the spin's shares of the rest from samples
    ProbeSpec("rocksdb::WriteThread::JoinBatchGroup(", "PH_QUEUE", FULL),
    ProbeSpec("rocksdb::WriteThread::AwaitState(", "PH_QUEUE", FULL),
    # WriteToWAL(const WriteBatch&, ...) is called by the group-level
    # WriteToWAL(const WriteGroup&, ...) (WriteGroupToWAL in newer releases)
    # and ConcurrentWriteToWAL: 2 hits a write saved (81050 calls, none
    # outside them, in 7.8 under fillrandom/overwrite, sync, pipelined writes)
    ProbeSpec("rocksdb::DBImpl::WriteToWAL(", "PH_WAL", BOTH,
              nested="(rocksdb::WriteBatch const&"),
    ProbeSpec("rocksdb::DBImpl::WriteGroupToWAL(", "PH_WAL", BOTH,
              alt_of="rocksdb::DBImpl::WriteToWAL("),
    ProbeSpec("rocksdb::DBImpl::ConcurrentWriteToWAL(", "PH_WAL", BOTH),
    ProbeSpec("rocksdb::DBImpl::SyncWAL(", "PH_WAL", BOTH),
    ProbeSpec("rocksdb::DBImpl::FlushWAL(", "PH_WAL", BOTH),
    # inside a write, AddRecord only runs in the group-level WriteToWAL (or
    # ConcurrentWriteToWAL): 807638 calls, none elsewhere, in 7.8 under
    # fillrandom/overwrite with memtable switches, sync on and off, pipelined
    # writes on and off (tests/test_bpftrace_scripts.py checks it); outside
    # writes it writes the MANIFEST, which is not a write's WAL time
    ProbeSpec("rocksdb::log::Writer::AddRecord(", "PH_WAL", FULL,
              within=("rocksdb::DBImpl::WriteToWAL(rocksdb::WriteThread::WriteGroup",
                      "rocksdb::DBImpl::WriteGroupToWAL(")),
    ProbeSpec("rocksdb::crc32c::Extend(", "PH_CRC", FULL),
    ProbeSpec("rocksdb::crc32c::Crc32cCombine(", "PH_CRC", FULL),
    ProbeSpec("rocksdb::WriteBatchInternal::InsertInto(", "PH_MEMTABLE", FULL),
    ProbeSpec("rocksdb::WriteThread::EnterAsBatchGroupLeader(", "PH_LEADER",
              FULL, ret=False),
)

# (name, phase, fallbacks tried in order when name is not exported)
SQLITE_PROBES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("sqlite3_step", "PH_SQL_STEP", ()),
    ("sqlite3WalCheckpoint", "PH_CHECKPOINT", ("sqlite3_wal_checkpoint_v2",)),
)
_SQLITE_TOKENS = re.compile(r"^sqlite3(_step|WalCheckpoint|_wal_checkpoint_v2|_sql"
                            r"|_libversion)$")

# mangled-name fragments worth demangling (keeps c++filt input small)
_TOKENS = re.compile(
    r"WriteImpl|JoinBatchGroup|AwaitState|WriteToWAL|WriteGroupToWAL|SyncWAL|"
    r"FlushWAL|AddRecord|crc32c|InsertInto|EnterAsBatchGroupLeader")

MODES = ("budget", "full", "writes", "sample", "window")
# the probe set each mode attaches (window: full's, while a window is open)
PROBE_SET = {"full": "full", "writes": "writes", "sample": "sample", "window": "full",
             "budget": "full"}


class SymbolError(RuntimeError):
    """A target cannot be probed; the message is one line for the user."""


@dataclass
class Resolved:
    spec: ProbeSpec
    name: str            # demangled
    path: str
    offset: int          # file offset
    arg: int = 0         # cookie bits 16..: PH_SQL_STEP's zSql offset


@dataclass
class Resolution:
    objects_checked: list[str] = field(default_factory=list)
    object_path: str | None = None
    probes: list[Resolved] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)   # spec prefixes not found
    version: str | None = None
    engine: str = "rocksdb"
    notes: list[str] = field(default_factory=list)     # degraded attribution
    # components measured by sampling inside their parent instead of probes
    sampled_split: dict[str, str] = field(default_factory=dict)  # comp -> parent
    # no write-group probes: leaders and queue come from syscalls (BPF side)
    groups_unprobed: bool = False


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
    (a name in both once, .symtab's)."""
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


def function_symbols(path: str, token: re.Pattern[str] | None = _TOKENS
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


def python_sqlite_module(interp: str) -> list[str]:
    """The _sqlite3 extension a Python interpreter would dlopen, if any."""
    name = os.path.basename(interp)
    if not name.startswith("python"):
        return []
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(interp)))
    pats = [os.path.join(prefix, "lib", "python3*", "lib-dynload", "_sqlite3*.so")]
    if prefix == "/usr":
        pats.append("/usr/lib/python3*/lib-dynload/_sqlite3*.so")
    m = re.match(r"python(\d+\.\d+)", os.path.basename(os.path.realpath(interp)))
    found = sorted({p for pat in pats for p in glob.glob(pat)})
    if m:  # prefer the interpreter's own version
        own = [p for p in found if f"python{m.group(1)}/" in p]
        found = own or found
    return found


def candidate_objects_for_command(exe: str, extra: list[str]) -> list[str]:
    main = interpreter_chain(exe)
    objs = [os.path.realpath(main)] + shared_libs(main)
    for mod in python_sqlite_module(main):
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


def rocksdb_version(path: str) -> str | None:
    m = re.search(r"librocksdb\.so\.(\d+(?:\.\d+)*)", os.path.realpath(path))
    return m.group(1) if m else None


def resolve_rocksdb(objects: list[str], mode: str, keep_stepped: bool = True
                    ) -> Resolution:
    """Probe points in the first object that defines DBImpl::WriteImpl.
    keep_stepped=False: if a CRC site must be single-stepped (~10 us a hit),
    CRC gets no probes and is split out of wal_append by sampling."""
    res = Resolution()
    mode = PROBE_SET.get(mode, mode)
    if mode == "sample":
        specs: tuple[ProbeSpec, ...] = ()
    else:
        specs = tuple(s for s in ROCKSDB_PROBES if mode in s.modes)
    for obj in objects:
        res.objects_checked.append(obj)
        try:
            syms = function_symbols(obj)
        except SymbolError:
            continue
        if not syms:
            continue
        names = demangle([s for s, _ in syms])
        found = [(d, off) for d, (_, off) in zip(names, syms)
                 if "[clone" not in d]
        if not any(d.startswith("rocksdb::DBImpl::WriteImpl(") for d, _ in found):
            continue
        res.object_path = obj
        res.version = rocksdb_version(obj)
        for spec in specs:
            hits = [(d, off) for d, off in found if d.startswith(spec.prefix)]
            alt_found = spec.alt_of and any(d.startswith(spec.alt_of)
                                            for d, _ in found)
            if not hits and not alt_found:
                res.missing.append(spec.prefix.rstrip("("))
            if spec.within and any(d.startswith(w) for d, _ in found for w in spec.within):
                continue
            if spec.nested and (alt_found or any(spec.nested not in d for d, _ in hits)):
                hits = [(d, off) for d, off in hits if spec.nested not in d]
            for d, off in sorted(set(hits), key=lambda x: x[1]):
                res.probes.append(Resolved(spec, d, obj, off))
        crc = [p for p in res.probes if p.spec.phase == "PH_CRC"]
        if crc and not keep_stepped and "PH_CRC" in stepped_phases(crc):
            res.probes = [p for p in res.probes if p.spec.phase != "PH_CRC"]
            res.notes.append("crc32c probe sites are single-stepped (~10 us a hit): "
                             "crc is split out of wal_append by sampling instead")
        if mode != "sample" and not any(p.spec.phase == "PH_CRC" for p in res.probes):
            res.sampled_split["crc"] = "wal_append"
        res.groups_unprobed = mode == "writes"
        if mode != "sample" and not any(p.spec.phase == "PH_MEMTABLE" for p in res.probes):
            res.sampled_split["memtable"] = "other"
        if res.groups_unprobed:   # the spin before a follower yields
            res.sampled_split["queue"] = "other"
        return res
    return res


def decode_sql_offset(path: str, offset: int) -> int:
    """Offset of zSql in a Vdbe, read from sqlite3_sql's code, which is
    ``[test %rdi,%rdi; je ...;] mov disp(%rdi),%rax; ret``.  0 if not found."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            code = f.read(24)
    except OSError:
        return 0
    for i in range(len(code) - 3):
        if code[i:i + 3] == b"\x48\x8b\x87" and i + 7 <= len(code):
            return int.from_bytes(code[i + 3:i + 7], "little", signed=True)
        if code[i:i + 3] == b"\x48\x8b\x47":
            return code[i + 3]
    return 0


def sqlite_version(path: str) -> str | None:
    """The version string the library embeds (sqlite3_libversion's)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    m = re.search(rb"\x00(3\.\d+\.\d+)\x00", data)
    return m.group(1).decode() if m else None


def resolve_sqlite(objects: list[str], mode: str) -> Resolution:
    """Probe points in the first object that defines sqlite3_step."""
    res = Resolution(engine="sqlite")
    for obj in objects:
        res.objects_checked.append(obj)
        try:
            syms = dict(function_symbols(obj, _SQLITE_TOKENS))
        except SymbolError:
            continue
        if "sqlite3_step" not in syms:
            continue
        res.object_path = obj
        res.version = sqlite_version(obj)
        sql_off = decode_sql_offset(obj, syms["sqlite3_sql"]) \
            if "sqlite3_sql" in syms else 0
        if not sql_off:
            res.notes.append("cannot read statement text (sqlite3_sql not "
                             "decodable): every statement is its own transaction")
        if mode == "sample":
            return res
        for name, phase, fallbacks in SQLITE_PROBES:
            use = next((n for n in (name,) + fallbacks if n in syms), None)
            if use is None:
                res.missing.append(name)
                continue
            spec = ProbeSpec(use, phase, BOTH)
            res.probes.append(Resolved(spec, use, obj, syms[use],
                                       sql_off if phase == "PH_SQL_STEP" else 0))
        return res
    return res


def is_emulated_site(path: str, offset: int) -> bool:
    """True if the uprobe at offset can emulate the first instruction
    (push of a register, with or without REX.B): cheap (~0.6 us here).
    Anything else is single-stepped out of line (~10 us here)."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            b = f.read(2)
    except OSError:
        return False
    if len(b) < 1:
        return False
    return 0x50 <= b[0] <= 0x57 or (b[0] == 0x41 and len(b) == 2 and 0x50 <= b[1] <= 0x57)


def stepped_phases(probes: list[Resolved]) -> set[str]:
    """Phases with at least one single-stepped probe site."""
    return {p.spec.phase for p in probes if not is_emulated_site(p.path, p.offset)}


def attach_lines(probes: list[Resolved]) -> list[str]:
    """Lines of the collector's --attach file."""
    phases = enum_values("ws_phase")
    lines = []
    for p in probes:
        ph = phases[p.spec.phase] | p.arg << 16
        short = p.name.split("(")[0]
        lines.append(f"enter\t{ph}\t{p.offset}\t{p.path}\t{short}")
        if p.spec.ret:
            lines.append(f"exit\t{ph}\t{p.offset}\t{p.path}\t{short}")
    return lines


def symbol_ranges(path: str) -> list[tuple[int, int, str]]:
    """(start vaddr, end vaddr, demangled name) of every function in path."""
    rows = sorted({(v, v + max(size, 1), n) for n, v, size in _functions(path)})
    names = demangle([r[2] for r in rows])
    return [(a, b, n) for (a, b, _), n in zip(rows, names)]


def main() -> int:
    import argparse
    ap = argparse.ArgumentParser(description="list walscope probe points")
    ap.add_argument("object", help="executable or library")
    ap.add_argument("--mode", choices=MODES, default="full")
    a = ap.parse_args()
    res = resolve_rocksdb(candidate_objects_for_command(a.object, []), a.mode)
    if not res.object_path:
        print(f"no RocksDB in {a.object}")
        return 1
    for p in res.probes:
        print(f"{p.spec.phase:12} {p.offset:#10x} {p.name[:100]}")
    for m in res.missing:
        print(f"missing: {m}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
