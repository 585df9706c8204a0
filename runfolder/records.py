"""Record layouts and readers, derived from the BTF of probes/walscope.bpf.o.

probes/walscope.h is the single source of truth: the build dumps the BPF
object's BTF as JSON (.output/walscope.btf.json) and this module turns each
``struct ws_*`` into a numpy dtype and each enum into a name table.
Nothing here restates a field offset or an enum value.

A ``Layout`` is one such dump: the build's (``Layout.build()``, what the
collector writes records with now) or the part of it walscope's own types
use, which the tracer copies into the run folder (layout.json).  Readers of
a run folder read its records with its own layout (``Layout.of(folder)``):
a folder copied to a machine with another walscope build, or none, is read
as it was written.  Nothing here holds a layout in use: each caller names
the one it reads with.
"""
from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import engines
from runfolder.files import RECORD_FILES, RunFolder

ROOT = Path(__file__).resolve().parent.parent
BTF_JSON = ROOT / ".output" / "walscope.btf.json"


class LayoutError(RuntimeError):
    """The BTF dump is missing or does not hold what the reader needs."""


@dataclass(frozen=True)
class Btf:
    types: dict[int, dict[str, Any]]
    by_name: dict[tuple[str, str], dict[str, Any]]


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
def load_btf(path: str) -> Btf:
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


@functools.lru_cache(maxsize=32)
def _struct_dtype(name: str, path: str) -> np.dtype:
    btf = load_btf(path)
    t = btf.by_name.get(("STRUCT", name))
    if t is None:
        raise LayoutError(f"struct {name} not in {path}")
    return struct_dtype_from(btf, t)


@functools.lru_cache(maxsize=64)
def _enum_values(name: str, path: str) -> dict[str, int]:
    t = load_btf(path).by_name.get(("ENUM", name))
    if t is None:
        raise LayoutError(f"enum {name} not in {path}")
    return {v["name"]: v["val"] for v in t["values"]}


# the header's syscall groups (enum ws_sys_<group>): write, sync and other
# are traced, untraced ones are only recognised
SYSCALL_GROUPS = ("write", "sync", "other", "untraced")


@dataclass(frozen=True)
class Layout:
    """The record layouts and enums of one BTF dump (a path to it): the
    build's (``Layout.build()``) or a run folder's layout.json
    (``Layout.of(folder)``).  The tables derived from a dump are cached by
    its path."""
    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))

    @classmethod
    def build(cls) -> Layout:
        """The build's dump (.output/walscope.btf.json): what the collector
        writes records with now, and the layout of a folder without one."""
        return cls(BTF_JSON)

    @classmethod
    def of(cls, run_dir: str | os.PathLike | RunFolder) -> Layout:
        """The layout a run folder's records were written with: its
        layout.json, or the build's for a folder without one (traced before
        the tracer wrote it)."""
        own = _folder(run_dir).layout_json
        return cls(own) if own.exists() else cls.build()

    def struct_dtype(self, name: str) -> np.dtype:
        return _struct_dtype(name, str(self.path))

    def enum_values(self, name: str) -> dict[str, int]:
        return _enum_values(name, str(self.path))

    def enum_names(self, name: str, prefix: str) -> dict[int, str]:
        """value -> lower-case name without prefix, skipping the *_NR sentinel."""
        out = {}
        for k, v in self.enum_values(name).items():
            if k.startswith(prefix) and not k.endswith("_NR"):
                out[v] = k[len(prefix):].lower()
        return out

    def components(self, engine: str = engines.UNNAMED) -> list[str]:
        """An engine's component names in slot order (slot i of comp_ns)."""
        e = engines.get(engine)
        names = self.enum_names(e.comp_enum, e.comp_prefix)
        return [names[i] for i in sorted(names)]

    def engine_names(self) -> dict[int, str]:
        """The write records' engine field -> the engine's name."""
        return engines.by_ws_engine(self.enum_values("ws_engine"))

    def phase_component(self, phase: str, engine: str = engines.UNNAMED) -> str | None:
        """The component a phase (``PH_CRC``...) is charged to, from the
        header's WS_PHASE_COMPS table (enum ws_phase_comp); "other" if it has
        none; None for an entry-only marker (a phase value from WS_PH_MARKERS
        on)."""
        phases = self.enum_values(engines.get(engine).phase_enum)
        if phases[phase] >= self.enum_values("ws_phase")["WS_PH_MARKERS"]:
            return None
        slot = self.enum_values("ws_phase_comp").get("WS_PC_" + phase, 0)
        return self.components(engine)[slot]

    def file_kinds(self) -> dict[int, str]:
        return self.enum_names("ws_file_kind", "FK_")

    def stack_id_value(self, name: str) -> int:
        """A named stack id of enum ws_stack_id (negative: not a map id)."""
        v = self.enum_values("ws_stack_id")[name]
        return v - (1 << 64) if v >= 1 << 63 else v   # bpftool prints it unsigned

    def no_stack(self) -> int:
        """The stack id of a stack not taken (WS_NO_STACK); lost ones differ."""
        return self.stack_id_value("WS_NO_STACK")

    def write_flag(self, name: str) -> int:
        """A write record flag bit (enum ws_write_flag, WS_WF_<name>)."""
        return self.enum_values("ws_write_flag")["WS_WF_" + name.upper()]

    def syscalls(self, group: str | None = None) -> dict[int, str]:
        """number -> name of the syscalls the BPF side names (one group, or
        all)."""
        out: dict[int, str] = {}
        for g in (group,) if group else SYSCALL_GROUPS:
            for k, v in self.enum_values(f"ws_sys_{g}").items():
                out[v] = k[len("WS_NR_"):]
        return out

    def stack_depth(self) -> int:
        """Frames kept per stack (WS_STACK_DEPTH)."""
        return self.enum_values("ws_tuning")["WS_STACK_DEPTH"]

    def counter_names(self) -> list[str]:
        names = self.enum_names("ws_counter", "CNT_")
        return [names[i] for i in sorted(names)]


def _folder(run_dir: str | os.PathLike | RunFolder) -> RunFolder:
    return run_dir if isinstance(run_dir, RunFolder) else RunFolder(run_dir)


def _rec_type(layout: Layout, struct: str) -> int:
    """ws_write_rec -> WS_REC_WRITE's value, ws_io_rec -> WS_REC_IO's, ..."""
    tag = struct[len("ws_"):-len("_rec")].upper()
    return layout.enum_values("ws_rec_type")["WS_REC_" + tag]


def read_records(run_dir: str | os.PathLike | RunFolder, struct: str) -> np.ndarray:
    """All complete records of one type, with the folder's own layout; a
    torn last record is dropped."""
    folder = _folder(run_dir)
    layout = Layout.of(folder)
    dt = layout.struct_dtype(struct)
    path = folder.records(struct)
    if not path.exists():
        return np.zeros(0, dtype=dt)
    data = path.read_bytes()
    n = len(data) // dt.itemsize
    arr = np.frombuffer(data, dtype=dt, count=n)
    return arr[arr["rec_type"] == _rec_type(layout, struct)]


def zero_field(run_dir: str | os.PathLike | RunFolder, struct: str, field: str) -> int:
    """Zeroes one field of every complete record in the struct's file, in
    place (what served its purpose and should not stay: a sample's copy of
    a process's stack); returns how many records.  No file or no such
    field (an older layout): 0."""
    folder = _folder(run_dir)
    dt = Layout.of(folder).struct_dtype(struct)
    path = folder.records(struct)
    if field not in (dt.names or ()) or not path.exists():
        return 0
    n = path.stat().st_size // dt.itemsize
    if not n:
        return 0
    recs = np.memmap(path, dtype=dt, mode="r+", shape=(n,))
    recs[field] = 0
    recs.flush()
    del recs
    return n


def iter_records(run_dir: str | os.PathLike | RunFolder, struct: str,
                 rows: int = 1 << 16):
    """The complete records of one type, rows at a time (plain reads, not a
    memory map, so resident memory is the chunk, whatever the file's size),
    with the folder's own layout."""
    folder = _folder(run_dir)
    layout = Layout.of(folder)
    dt = layout.struct_dtype(struct)
    path = folder.records(struct)
    if not path.exists():
        return
    want = _rec_type(layout, struct)
    with open(path, "rb") as f:
        while True:
            data = f.read(rows * dt.itemsize)
            n = len(data) // dt.itemsize
            if not n:
                return
            part = np.frombuffer(data, dtype=dt, count=n)
            yield part[part["rec_type"] == want]


def read_new(run_dir: str | os.PathLike | RunFolder, struct: str, offset: int,
             layout: Layout, rows: int = 1 << 16) -> tuple[np.ndarray, int]:
    """The complete records of one type written since offset (a file the
    collector is still appending to: a record it has half written waits
    for the next read), and the offset after them."""
    folder = _folder(run_dir)
    dt = layout.struct_dtype(struct)
    path = folder.records(struct)
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read(rows * dt.itemsize)
    except FileNotFoundError:
        return np.zeros(0, dtype=dt), offset
    n = len(data) // dt.itemsize
    part = np.frombuffer(data, dtype=dt, count=n)
    return part[part["rec_type"] == _rec_type(layout, struct)], offset + n * dt.itemsize


def torn_bytes(run_dir: str | os.PathLike | RunFolder) -> dict[str, int]:
    """Bytes after the last complete record, per file (non-zero: a crash)."""
    folder = _folder(run_dir)
    out = {}
    for struct, fname in RECORD_FILES.items():
        p = folder.records(struct)
        if p.exists():
            rest = p.stat().st_size % Layout.of(folder).struct_dtype(struct).itemsize
            if rest:
                out[fname] = rest
    return out


def read_stack_map(run_dir: str | os.PathLike | RunFolder) -> dict[int, list[int]]:
    """stacks.bin (struct ws_stack_ent, the collector's dump of the stack
    map): id -> ips, leaf first."""
    folder = _folder(run_dir)
    path = folder.stacks_bin
    if not path.exists():
        return {}
    dt = Layout.of(folder).struct_dtype("ws_stack_ent")
    raw = path.read_bytes()
    ents = np.frombuffer(raw, dtype=dt, count=len(raw) // dt.itemsize)
    return {int(e["id"]): [int(x) for x in e["ips"][:int(e["depth"])]] for e in ents}


def read_offcpu(run_dir: str | os.PathLike | RunFolder) -> np.ndarray:
    """offcpu.bin (struct ws_offcpu_ent, the collector's dump of the offcpu
    map): off-CPU time summed per key."""
    folder = _folder(run_dir)
    dt = Layout.of(folder).struct_dtype("ws_offcpu_ent")
    path = folder.offcpu_bin
    if not path.exists():
        return np.zeros(0, dtype=dt)
    raw = path.read_bytes()
    return np.frombuffer(raw, dtype=dt, count=len(raw) // dt.itemsize)
