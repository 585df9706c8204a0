"""Record layouts and readers, derived from the BTF of probes/walscope.bpf.o.

probes/walscope.h is the single source of truth: the build dumps the BPF
object's BTF as JSON (.output/walscope.btf.json) and this module turns each
``struct ws_*`` into a numpy dtype and each enum into a name table.
Nothing here restates a field offset or an enum value.

The tracer copies the part of that BTF walscope's own types use into the
run folder (layout.json), and the analysis reads a folder's records with
its own layout (``layout_of``): a folder copied to a machine with another
walscope build, or none, is read as it was written.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import engines
from collectors.run_folder import RECORD_FILES, RunFolder

ROOT = Path(__file__).resolve().parent.parent
BTF_JSON = ROOT / ".output" / "walscope.btf.json"
_layout = str(BTF_JSON)    # the layout in use (use_layout, layout_of)


class LayoutError(RuntimeError):
    """The BTF dump is missing or does not hold what the reader needs."""


@dataclass(frozen=True)
class Btf:
    types: dict[int, dict[str, Any]]
    by_name: dict[tuple[str, str], dict[str, Any]]


def layout_path() -> str:
    """The layout in use (caches of derived tables key on it)."""
    return _layout


def use_layout(path: str | os.PathLike) -> None:
    """Read records with this layout from now on (a BTF JSON dump)."""
    global _layout
    _layout = str(path)


@contextlib.contextmanager
def layout_of(run_dir: str | os.PathLike) -> Iterator[None]:
    """Within: the layout the run folder was written with (its layout.json;
    the build's for a folder without one)."""
    own = RunFolder(run_dir).layout_json
    before = _layout
    use_layout(own if own.exists() else BTF_JSON)
    try:
        yield
    finally:
        use_layout(before)


def write_layout(run_dir: str | os.PathLike, src: str | os.PathLike = BTF_JSON) -> None:
    """layout.json: the BTF types walscope's own structs and enums (ws_*)
    use, ids unchanged, so load_btf reads it like the whole dump."""
    raw = json.loads(Path(src).read_text())
    types = {t["id"]: t for t in raw["types"]}
    keep: set[int] = set()
    todo = [t["id"] for t in raw["types"] if t.get("name", "").startswith("ws_")
            and t["kind"] in ("STRUCT", "ENUM")]
    while todo:
        i = todo.pop()
        if i in keep or i not in types:
            continue
        keep.add(i)
        t = types[i]
        todo += [m["type_id"] for m in t.get("members", [])]
        if "type_id" in t:
            todo.append(t["type_id"])
    out = {"types": [types[i] for i in sorted(keep)]}
    dst = RunFolder(run_dir).layout_json
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.write_text(json.dumps(out, separators=(",", ":"), sort_keys=True) + "\n")
    tmp.replace(dst)


@functools.lru_cache(maxsize=4)
def load_btf(path: str | None = None) -> Btf:
    path = path or _layout
    try:
        with open(path) as f:
            raw = json.load(f)
    except FileNotFoundError:
        raise LayoutError(f"{path} is missing: run `make` first") from None
    except json.JSONDecodeError as e:
        raise LayoutError(f"{path}: not valid JSON ({e})") from None
    types = {t["id"]: t for t in raw["types"]}
    by_name = {(t["kind"], t.get("name", "")): t for t in raw["types"]}
    return Btf(types, by_name)


def _resolve(btf: Btf, type_id: int) -> dict[str, Any]:
    t = btf.types[type_id]
    while t["kind"] in ("TYPEDEF", "CONST", "VOLATILE", "RESTRICT"):
        t = btf.types[t["type_id"]]
    return t


def _dtype_of(btf: Btf, type_id: int) -> np.dtype:
    t = _resolve(btf, type_id)
    kind = t["kind"]
    if kind == "INT":
        size = t["size"]
        if t["name"] == "char":
            return np.dtype("S1")
        signed = t.get("encoding") == "SIGNED"
        return np.dtype(f"{'i' if signed else 'u'}{size}")
    if kind == "ENUM":
        return np.dtype(f"u{t['size']}")
    if kind == "ARRAY":
        elem = _dtype_of(btf, t["type_id"])
        if elem == np.dtype("S1"):
            return np.dtype(f"S{t['nr_elems']}")
        if elem.subdtype is not None:  # array of arrays
            base, shape = elem.subdtype
            return np.dtype((base, (t["nr_elems"],) + shape))
        return np.dtype((elem, (t["nr_elems"],)))
    if kind == "STRUCT":
        return struct_dtype_from(btf, t)
    raise LayoutError(f"unsupported BTF kind {kind} in a record")


def struct_dtype_from(btf: Btf, t: dict[str, Any]) -> np.dtype:
    names, formats, offsets = [], [], []
    for m in t["members"]:
        if m["bits_offset"] % 8:
            raise LayoutError(f"{t['name']}.{m['name']}: bitfields unsupported")
        names.append(m["name"])
        formats.append(_dtype_of(btf, m["type_id"]))
        offsets.append(m["bits_offset"] // 8)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                     "itemsize": t["size"]})


def struct_dtype(name: str, path: str | None = None) -> np.dtype:
    return _struct_dtype(name, path or _layout)


@functools.lru_cache(maxsize=32)
def _struct_dtype(name: str, path: str) -> np.dtype:
    btf = load_btf(path)
    t = btf.by_name.get(("STRUCT", name))
    if t is None:
        raise LayoutError(f"struct {name} not in {path}")
    return struct_dtype_from(btf, t)


def enum_values(name: str, path: str | None = None) -> dict[str, int]:
    return _enum_values(name, path or _layout)


@functools.lru_cache(maxsize=64)
def _enum_values(name: str, path: str) -> dict[str, int]:
    t = load_btf(path).by_name.get(("ENUM", name))
    if t is None:
        raise LayoutError(f"enum {name} not in {path}")
    return {v["name"]: v["val"] for v in t["values"]}


def enum_names(name: str, prefix: str, path: str | None = None) -> dict[int, str]:
    """value -> lower-case name without prefix, skipping the *_NR sentinel."""
    out = {}
    for k, v in enum_values(name, path).items():
        if k.startswith(prefix) and not k.endswith("_NR"):
            out[v] = k[len(prefix):].lower()
    return out


def components(engine: str = "rocksdb") -> list[str]:
    """An engine's component names in slot order (slot i of comp_ns)."""
    e = engines.get(engine)
    names = enum_names(e.comp_enum, e.comp_prefix)
    return [names[i] for i in sorted(names)]


def engine_names() -> dict[int, str]:
    """The write records' engine field -> the engine's name."""
    return engines.by_ws_engine(enum_values("ws_engine"))


def phase_component(phase: str, engine: str = "rocksdb") -> str | None:
    """The component a phase (``PH_CRC``...) is charged to, from the header's
    WS_PHASE_COMPS table (enum ws_phase_comp); "other" if it has none; None
    for an entry-only marker (a phase value from WS_PH_MARKERS on)."""
    phases = enum_values(engines.get(engine).phase_enum)
    if phases[phase] >= enum_values("ws_phase")["WS_PH_MARKERS"]:
        return None
    slot = enum_values("ws_phase_comp").get("WS_PC_" + phase, 0)
    return components(engine)[slot]


def rocksdb_components() -> list[str]:
    return components("rocksdb")


def file_kinds() -> dict[int, str]:
    return enum_names("ws_file_kind", "FK_")


# RocksDB names its background threads (flush, compaction) "rocksdb:*"; the
# others issue the writes
BACKGROUND_PREFIX = "rocksdb:"


def stack_id_value(name: str) -> int:
    """A named stack id of enum ws_stack_id (negative: not a map id)."""
    v = enum_values("ws_stack_id")[name]
    return v - (1 << 64) if v >= 1 << 63 else v   # bpftool prints it unsigned


def no_stack() -> int:
    """The stack id of a stack not taken (WS_NO_STACK); lost ones differ."""
    return stack_id_value("WS_NO_STACK")


def write_flag(name: str) -> int:
    """A write record flag bit (enum ws_write_flag, WS_WF_<name>)."""
    return enum_values("ws_write_flag")["WS_WF_" + name.upper()]


# the header's syscall groups (enum ws_sys_<group>): write, sync and other
# are traced, untraced ones are only recognised
SYSCALL_GROUPS = ("write", "sync", "other", "untraced")


def syscalls(group: str | None = None) -> dict[int, str]:
    """number -> name of the syscalls the BPF side names (one group, or all)."""
    out: dict[int, str] = {}
    for g in (group,) if group else SYSCALL_GROUPS:
        for k, v in enum_values(f"ws_sys_{g}").items():
            out[v] = k[len("WS_NR_"):]
    return out


def stack_depth() -> int:
    """Frames kept per stack (WS_STACK_DEPTH)."""
    return enum_values("ws_tuning")["WS_STACK_DEPTH"]


def counter_names() -> list[str]:
    names = enum_names("ws_counter", "CNT_")
    return [names[i] for i in sorted(names)]


def read_records(run_dir: str | os.PathLike, struct: str) -> np.ndarray:
    """All complete records of one type; a torn last record is dropped."""
    dt = struct_dtype(struct)
    path = RunFolder(run_dir).records(struct)
    if not path.exists():
        return np.zeros(0, dtype=dt)
    data = path.read_bytes()
    n = len(data) // dt.itemsize
    arr = np.frombuffer(data, dtype=dt, count=n)
    # ws_write_rec -> WS_REC_WRITE, ws_io_rec -> WS_REC_IO, ...
    tag = struct[len("ws_"):-len("_rec")].upper()
    want = enum_values("ws_rec_type")["WS_REC_" + tag]
    return arr[arr["rec_type"] == want]


def iter_records(run_dir: str | os.PathLike, struct: str,
                 rows: int = 1 << 16):
    """The complete records of one type, rows at a time (plain reads, not a
    memory map, so resident memory is the chunk, whatever the file's size)."""
    dt = struct_dtype(struct)
    path = RunFolder(run_dir).records(struct)
    if not path.exists():
        return
    want = enum_values("ws_rec_type")["WS_REC_" + struct[len("ws_"):-len("_rec")].upper()]
    with open(path, "rb") as f:
        while True:
            data = f.read(rows * dt.itemsize)
            n = len(data) // dt.itemsize
            if not n:
                return
            part = np.frombuffer(data, dtype=dt, count=n)
            yield part[part["rec_type"] == want]


def torn_bytes(run_dir: str | os.PathLike) -> dict[str, int]:
    """Bytes after the last complete record, per file (non-zero: a crash)."""
    out = {}
    for struct, fname in RECORD_FILES.items():
        p = RunFolder(run_dir).records(struct)
        if p.exists():
            rest = p.stat().st_size % struct_dtype(struct).itemsize
            if rest:
                out[fname] = rest
    return out


def read_stack_map(run_dir: str | os.PathLike) -> dict[int, list[int]]:
    """stacks.bin (struct ws_stack_ent, the collector's dump of the stack
    map): id -> ips, leaf first."""
    path = RunFolder(run_dir).stacks_bin
    if not path.exists():
        return {}
    dt = struct_dtype("ws_stack_ent")
    raw = path.read_bytes()
    ents = np.frombuffer(raw, dtype=dt, count=len(raw) // dt.itemsize)
    return {int(e["id"]): [int(x) for x in e["ips"][:int(e["depth"])]] for e in ents}


def read_offcpu(run_dir: str | os.PathLike) -> np.ndarray:
    """offcpu.bin (struct ws_offcpu_ent, the collector's dump of the offcpu
    map): off-CPU time summed per key."""
    dt = struct_dtype("ws_offcpu_ent")
    path = RunFolder(run_dir).offcpu_bin
    if not path.exists():
        return np.zeros(0, dtype=dt)
    raw = path.read_bytes()
    return np.frombuffer(raw, dtype=dt, count=len(raw) // dt.itemsize)
