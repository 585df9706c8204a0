"""SQLite's probe points in an object: C names, sqlite3_step
(transaction boundaries and statement time) and, where the library
exports it (Debian's does), sqlite3WalCheckpoint, else the API's
sqlite3_wal_checkpoint_v2."""
from __future__ import annotations

import glob
import os
import re

from engines.sqlite import ENGINE
from probepoints.elf import embedded, first_defining
from probepoints.modes import Mode
from probepoints.points import BOTH, ProbeSpec, Resolution, Resolved

PROBES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("sqlite3_step", "PH_SQL_STEP", ()),
    ("sqlite3WalCheckpoint", "PH_CHECKPOINT", ("sqlite3_wal_checkpoint_v2",)),
)
_TOKENS = re.compile(r"^sqlite3(_step|WalCheckpoint|_wal_checkpoint_v2|_sql"
                            r"|_libversion|_get_autocommit|_db_handle)$")


def code_at(path: str, offset: int, n: int = 24) -> bytes:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read(n)
    except OSError:
        return b""


def decode_sql_offset(path: str, offset: int) -> int:
    """Offset of zSql in a Vdbe, read from sqlite3_sql's code, which is
    ``[test %rdi,%rdi; je ...;] mov disp(%rdi),%rax; ret``.  0 if not found."""
    code = code_at(path, offset)
    for i in range(len(code) - 3):
        if code[i:i + 3] == b"\x48\x8b\x87" and i + 7 <= len(code):
            return int.from_bytes(code[i + 3:i + 7], "little", signed=True)
        if code[i:i + 3] == b"\x48\x8b\x47":
            return code[i + 3]
    return 0


def decode_autocommit_offset(path: str, offset: int) -> int:
    """Offset of autoCommit (a byte) in a sqlite3 connection, read from
    sqlite3_get_autocommit's code, ``movzbl disp(%rdi),%eax; ret``.  0
    if not found (it is never 0: a connection begins with pointers)."""
    code = code_at(path, offset, 8)
    if code[:3] == b"\x0f\xb6\x47" and len(code) >= 4:
        return code[3]
    if code[:3] == b"\x0f\xb6\x87" and len(code) >= 7:
        v = int.from_bytes(code[3:7], "little", signed=True)
        return v if 0 < v < 0x10000 else 0
    return 0


def decode_db_offset(path: str, offset: int) -> int | None:
    """Offset of the connection in a Vdbe, read from sqlite3_db_handle's
    code, ``[test %rdi,%rdi; je ...;] mov disp(%rdi),%rax; ret``; None if
    not found."""
    code = code_at(path, offset)
    for i in range(len(code) - 2):
        if code[i:i + 3] == b"\x48\x8b\x07":
            return 0
        if code[i:i + 3] == b"\x48\x8b\x47" and i + 4 <= len(code):
            return code[i + 3]
    return None


def in_txn_arg(path: str, syms: dict[str, int]) -> int:
    """PH_SQL_STEP's cookie bits 16.. above zSql's offset: autoCommit's
    offset (bits 16..31 of the argument) and the connection's in a Vdbe
    (bits 32..39), with which the probe tells a statement inside a
    transaction begun before its window (probes/sqlite.bpf.h
    sql_in_txn); 0 where either is not decodable."""
    ac = decode_autocommit_offset(path, syms["sqlite3_get_autocommit"]) \
        if "sqlite3_get_autocommit" in syms else 0
    db = decode_db_offset(path, syms["sqlite3_db_handle"]) \
        if "sqlite3_db_handle" in syms else None
    return ac << 16 | db << 32 if ac and db is not None and db < 0x100 else 0


_VERSION = re.compile(rb"\x00(3\.\d+\.\d+)\x00")


def sqlite_version(path: str) -> str | None:
    """The version string the library embeds (sqlite3_libversion's)."""
    m = embedded(path, _VERSION)
    return m.group(1).decode() if m else None


def resolve(objects: list[str], mode: Mode, keep_stepped: bool = True) -> Resolution:
    """Probe points of mode's probe set in the first object that defines
    sqlite3_step."""
    res = Resolution(engine=ENGINE.name)
    found = first_defining(objects, _TOKENS, "sqlite3_step", res)
    if found is None:
        return res
    obj, syms = found
    res.object_path = obj
    res.version = sqlite_version(obj)
    sql_off = decode_sql_offset(obj, syms["sqlite3_sql"]) if "sqlite3_sql" in syms else 0
    if not sql_off:
        res.notes.append("cannot read statement text (sqlite3_sql not "
                         "decodable): every statement is its own transaction")
    in_txn = in_txn_arg(obj, syms)
    if sql_off and not in_txn:
        res.notes.append("cannot read a connection's transaction state "
                         "(sqlite3_get_autocommit not decodable): a transaction "
                         "open at a window's open is recorded from its statements "
                         "inside it, each a row")
    if mode.probe_set is None:
        return res
    for name, phase, fallbacks in PROBES:
        use = next((n for n in (name,) + fallbacks if n in syms), None)
        if use is None:
            res.missing.append(name)
            continue
        spec = ProbeSpec(use, phase, BOTH)
        res.probes.append(Resolved(spec, use, obj, syms[use],
                                   sql_off | in_txn if phase == "PH_SQL_STEP" else 0,
                                   engine=ENGINE.name))
    return res


def candidate_objects(interp: str) -> list[str]:
    """What a program will load that holds SQLite: the _sqlite3 extension a
    Python interpreter would dlopen, if it is one (else none)."""
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
