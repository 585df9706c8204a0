"""An object's call frame information (.eh_frame, found through
.eh_frame_hdr's sorted table): at an address, where the caller's frame
starts (the CFA, a register plus an offset) and where the return address
and the frame pointer were saved.  A stripped object keeps it (C++
exceptions unwind with it), so the caller of a function the object names
no symbol for can still be found.  Read an FDE at a time, when an address
in it is asked for; imports nothing of walscope's.

The format: the LSB's "Exception Frames" and DWARF 5 section 6.4."""
from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass

from elftools.elf.elffile import ELFFile

# x86-64 DWARF register numbers
REG_RBP = 6
REG_RSP = 7
REG_RA = 16

# DW_EH_PE_*: a pointer's format (low nibble) and what it is relative to
_PE_OMIT = 0xff
_PE_FORMATS = {0x00: "<Q", 0x02: "<H", 0x03: "<I", 0x04: "<Q",
               0x0a: "<h", 0x0b: "<i", 0x0c: "<q"}
_PE_ULEB, _PE_SLEB = 0x01, 0x09
_PE_PCREL, _PE_DATAREL = 0x10, 0x30


class CfiError(Exception):
    """Call frame information this reader does not follow (an expression
    for the CFA, an encoding it does not know)."""


@dataclass(frozen=True)
class FrameRule:
    """At one address: CFA = cfa_reg + cfa_offset; the return address and
    the caller's rbp saved at CFA + their offsets (rbp_offset None: rbp
    still holds the caller's)."""
    cfa_reg: int
    cfa_offset: int
    ra_offset: int
    rbp_offset: int | None


class _Reader:
    """Little-endian reads from bytes that sit at vaddr base."""

    def __init__(self, data: bytes, base: int, pos: int = 0):
        self.data, self.base, self.pos = data, base, pos

    def fixed(self, fmt: str) -> int:
        v = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def _leb(self) -> tuple[int, int, int]:
        """A LEB128's value, its bit count and its last byte."""
        v = shift = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            v |= (b & 0x7f) << shift
            shift += 7
            if b < 0x80:
                return v, shift, b

    def uleb(self) -> int:
        return self._leb()[0]

    def sleb(self) -> int:
        v, shift, last = self._leb()
        return v - (1 << shift) if last & 0x40 else v

    def cstr(self) -> bytes:
        end = self.data.index(b"\0", self.pos)
        s = self.data[self.pos:end]
        self.pos = end + 1
        return s

    def pointer(self, enc: int, datarel: int = 0, absolute: bool = False) -> int:
        """An encoded pointer; absolute: its format only (an FDE's range)."""
        at = self.base + self.pos
        fmt = enc & 0x0f
        if fmt == _PE_ULEB:
            v = self.uleb()
        elif fmt == _PE_SLEB:
            v = self.sleb()
        elif fmt in _PE_FORMATS:
            v = self.fixed(_PE_FORMATS[fmt])
        else:
            raise CfiError(f"pointer encoding {enc:#x}")
        if absolute:
            return v
        app = enc & 0x70
        if app == _PE_PCREL:
            v += at
        elif app == _PE_DATAREL:
            v += datarel
        elif app:
            raise CfiError(f"pointer application {enc:#x}")
        return v & 0xffffffffffffffff


@dataclass
class _Cie:
    code_align: int
    data_align: int
    ra_reg: int
    fde_enc: int
    has_aug_data: bool
    initial: bytes


class FrameTable:
    """One object's .eh_frame, by vaddr (the object's own addresses)."""

    def __init__(self, path: str):
        with open(path, "rb") as f:
            elf = ELFFile(f)
            hdr = elf.get_section_by_name(".eh_frame_hdr")
            frame = elf.get_section_by_name(".eh_frame")
            if hdr is None or frame is None:
                raise CfiError(f"{path}: no .eh_frame_hdr")
            self._hdr = (hdr.data(), hdr["sh_addr"])
            self._frame = (frame.data(), frame["sh_addr"])
        try:
            self._starts, self._fdes = self._table()
        except (struct.error, IndexError, ValueError) as e:
            raise CfiError(f"{path}: .eh_frame_hdr: {e}") from e
        self._cies: dict[int, _Cie] = {}

    def _table(self) -> tuple[list[int], list[int]]:
        data, base = self._hdr
        r = _Reader(data, base)
        version, ptr_enc, count_enc, table_enc = r.fixed("B"), r.fixed("B"), \
            r.fixed("B"), r.fixed("B")
        if version != 1 or count_enc == _PE_OMIT or table_enc == _PE_OMIT:
            raise CfiError("no .eh_frame_hdr search table")
        r.pointer(ptr_enc, base)
        count = r.pointer(count_enc, base)
        starts, fdes = [], []
        for _ in range(count):
            starts.append(r.pointer(table_enc, base))
            fdes.append(r.pointer(table_enc, base))
        return starts, fdes

    def _cie(self, at: int) -> _Cie:
        if at in self._cies:
            return self._cies[at]
        data, base = self._frame
        if not 0 <= at - base < len(data):
            raise CfiError(f"CIE at {at:#x} outside .eh_frame")
        r = _Reader(data, base, at - base)
        length = r.fixed("<I")
        if length == 0xffffffff:
            raise CfiError("64-bit .eh_frame entry")
        end = r.pos + length
        if r.fixed("<I") != 0:
            raise CfiError(f"no CIE at {at:#x}")
        version = r.fixed("B")
        aug = r.cstr()
        if b"eh" in aug:
            raise CfiError("CIE augmentation 'eh'")
        code_align, data_align = r.uleb(), r.sleb()
        ra_reg = r.fixed("B") if version == 1 else r.uleb()
        fde_enc = 0
        if aug.startswith(b"z"):
            n = r.uleb()
            aug_end = r.pos + n
            for c in aug[1:]:
                if c == ord("R"):
                    fde_enc = r.fixed("B")
                elif c == ord("P"):
                    r.pointer(r.fixed("B") & 0x7f, absolute=True)
                elif c == ord("L"):
                    r.fixed("B")
            r.pos = aug_end
        cie = _Cie(code_align, data_align, ra_reg, fde_enc, aug.startswith(b"z"),
                   data[r.pos:end])
        self._cies[at] = cie
        return cie

    def rule(self, vaddr: int) -> FrameRule | None:
        """The rule at vaddr; None where no FDE covers it."""
        try:
            return self._rule(vaddr)
        except (struct.error, IndexError, ValueError) as e:   # a torn or odd entry
            raise CfiError(f"{vaddr:#x}: {e}") from e

    def _rule(self, vaddr: int) -> FrameRule | None:
        i = bisect.bisect_right(self._starts, vaddr) - 1
        if i < 0:
            return None
        data, base = self._frame
        fde_at = self._fdes[i]
        if not 0 <= fde_at - base < len(data):
            raise CfiError(f"FDE at {fde_at:#x} outside .eh_frame")
        r = _Reader(data, base, fde_at - base)
        length = r.fixed("<I")
        if length == 0xffffffff:
            raise CfiError("64-bit .eh_frame entry")
        end = r.pos + length
        id_at = base + r.pos
        cie_ptr = r.fixed("<I")
        cie = self._cie(id_at - cie_ptr)
        pc_begin = r.pointer(cie.fde_enc)
        pc_range = r.pointer(cie.fde_enc, absolute=True)
        if not pc_begin <= vaddr < pc_begin + pc_range:
            return None
        if cie.has_aug_data:
            r.pos += r.uleb()
        return _run(cie, data[r.pos:end], pc_begin, vaddr)


def _run(cie: _Cie, fde_ops: bytes, pc_begin: int, target: int) -> FrameRule:
    """Runs the CIE's initial instructions, then the FDE's until the row
    that covers target."""
    state = {"cfa": (REG_RSP, 8), "regs": {}}
    _execute(cie, cie.initial, state, None, 0)
    initial = dict(state["regs"])
    _execute(cie, fde_ops, state, initial, pc_begin, target)
    cfa_reg, cfa_off = state["cfa"]
    if cfa_reg < 0:
        raise CfiError("CFA by expression")
    regs = state["regs"]
    ra = regs.get(cie.ra_reg)
    if ra is None or ra[0] != "offset":
        raise CfiError("return address not saved at an offset")
    rbp = regs.get(REG_RBP)
    if rbp is not None and rbp[0] != "offset":
        if rbp[0] != "same":
            raise CfiError(f"rbp rule {rbp[0]}")
        rbp = None
    return FrameRule(cfa_reg, cfa_off, ra[1], rbp[1] if rbp else None)


def _execute(cie: _Cie, ops: bytes, state: dict, initial: dict | None, loc: int,
             target: int | None = None) -> None:
    r = _Reader(ops, 0)
    stack: list[tuple] = []
    regs = state["regs"]

    def advance(delta: int) -> bool:
        nonlocal loc
        loc += delta * cie.code_align
        return target is not None and loc > target

    while r.pos < len(ops):
        op = r.fixed("B")
        hi, lo = op & 0xc0, op & 0x3f
        if hi == 0x40:
            if advance(lo):
                return
        elif hi == 0x80:
            regs[lo] = ("offset", r.uleb() * cie.data_align)
        elif hi == 0xc0:
            _restore(regs, initial, lo)
        elif op == 0x00:
            pass
        elif op == 0x01:
            raise CfiError("DW_CFA_set_loc")
        elif op in (0x02, 0x03, 0x04):
            if advance(r.fixed({0x02: "B", 0x03: "<H", 0x04: "<I"}[op])):
                return
        elif op == 0x05:
            reg = r.uleb()
            regs[reg] = ("offset", r.uleb() * cie.data_align)
        elif op == 0x06:
            _restore(regs, initial, r.uleb())
        elif op == 0x07:
            regs[r.uleb()] = ("undefined", 0)
        elif op == 0x08:
            regs[r.uleb()] = ("same", 0)
        elif op == 0x09:
            reg = r.uleb()
            regs[reg] = ("register", r.uleb())
        elif op == 0x0a:
            stack.append((state["cfa"], dict(regs)))
        elif op == 0x0b:
            cfa, saved = stack.pop()
            state["cfa"] = cfa
            regs.clear()
            regs.update(saved)
        elif op == 0x0c:
            reg = r.uleb()
            state["cfa"] = (reg, r.uleb())
        elif op == 0x0d:
            state["cfa"] = (r.uleb(), state["cfa"][1])
        elif op == 0x0e:
            state["cfa"] = (state["cfa"][0], r.uleb())
        elif op == 0x0f:
            r.pos += r.uleb()
            state["cfa"] = (-1, 0)     # an expression: not followed
        elif op in (0x10, 0x16):
            reg = r.uleb()
            r.pos += r.uleb()
            regs[reg] = ("expression", 0)
        elif op == 0x11:
            reg = r.uleb()
            regs[reg] = ("offset", r.sleb() * cie.data_align)
        elif op == 0x12:
            reg = r.uleb()
            state["cfa"] = (reg, r.sleb() * cie.data_align)
        elif op == 0x13:
            state["cfa"] = (state["cfa"][0], r.sleb() * cie.data_align)
        elif op in (0x14, 0x15):
            reg = r.uleb()
            off = r.uleb() if op == 0x14 else r.sleb()
            regs[reg] = ("val_offset", off * cie.data_align)
        elif op == 0x2e:
            r.uleb()
        elif op == 0x2f:
            reg = r.uleb()
            regs[reg] = ("offset", -r.uleb() * cie.data_align)
        else:
            raise CfiError(f"DW_CFA op {op:#x}")


def _restore(regs: dict, initial: dict | None, reg: int) -> None:
    if initial is not None and reg in initial:
        regs[reg] = initial[reg]
    else:
        regs.pop(reg, None)
