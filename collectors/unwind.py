"""A sample's callers, from the user stack it copied (ws_sample_rec's
stack words from its stack pointer) and the objects' call frame
information (.eh_frame), while the objects are at hand.

A leaf function an object names no symbol for (a stripped library's
static function, libc's memcpy variant) says nothing of which part of a
write it served; its callers do.  Frame pointers are not needed: Debian
builds without them, and .eh_frame is kept by strip.  The walk stops where
the copy ends, where an address lies in no mapped object or no FDE, and
where the rules need what was not saved (an expression, an unknown rbp)."""
from __future__ import annotations

import struct

from elftools.common.exceptions import ELFError

from collectors.procfs import Mapping
from probepoints.eh_frame import REG_RBP, REG_RSP, CfiError, FrameRule, FrameTable

MAX_CALLERS = 8     # callers named per sample


class Unwinder:
    """Call sites of a sample's callers, innermost first."""

    def __init__(self, locate) -> None:
        # locate(maps, ip) -> (object path, the object's vaddr) or None
        self._locate = locate
        self._tables: dict[str, FrameTable | None] = {}
        self._rules: dict[tuple[str, int], FrameRule | None] = {}

    def _rule(self, path: str, vaddr: int) -> FrameRule | None:
        key = (path, vaddr)
        if key not in self._rules:
            if path not in self._tables:
                try:
                    self._tables[path] = FrameTable(path)
                except (CfiError, OSError, ELFError, ValueError, struct.error):
                    self._tables[path] = None   # unreadable: its samples name no caller
            table = self._tables[path]
            try:
                self._rules[key] = table.rule(vaddr) if table else None
            except CfiError:
                self._rules[key] = None
        return self._rules[key]

    def callers(self, maps: list[Mapping], ip: int, sp: int, bp: int,
                stack: bytes) -> list[int]:
        """Each caller's call site (its return address less one) of the
        function at ip, from the stack bytes copied at sp."""
        def word(addr: int) -> int | None:
            i = addr - sp
            if i < 0 or i + 8 > len(stack) or i % 8:
                return None
            return struct.unpack_from("<Q", stack, i)[0]

        out: list[int] = []
        pc, rsp, rbp = ip, sp, bp
        while len(out) < MAX_CALLERS:
            where = self._locate(maps, pc)
            if where is None:
                break
            # a caller's pc is a return address: its call is the byte before
            rule = self._rule(where[0], where[1] - (1 if out else 0))
            if rule is None:
                break
            if rule.cfa_reg == REG_RSP:
                base = rsp
            elif rule.cfa_reg == REG_RBP and rbp is not None:
                base = rbp
            else:
                break
            cfa = base + rule.cfa_offset
            ra = word(cfa + rule.ra_offset)
            if not ra or cfa <= rsp:
                break
            if rule.rbp_offset is not None:
                rbp = word(cfa + rule.rbp_offset)
            rsp, pc = cfa, ra
            out.append(ra - 1)
        return out
