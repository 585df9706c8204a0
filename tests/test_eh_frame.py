"""probepoints.eh_frame against binutils' own reading of the same call
frame information (readelf --debug-dump=frames-interp): the CFA and the
saved rbp at the first and the last address of every row."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from probepoints.eh_frame import REG_RBP, REG_RSP, CfiError, FrameTable

OBJECTS = ["/lib/x86_64-linux-gnu/libc.so.6",
           "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8"]
_FDE = re.compile(r"^\S+ \S+ \S+ FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)$")
_REGS = {n: i for i, n in enumerate(
    "rax rdx rcx rbx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15".split())}
assert _REGS["rsp"] == REG_RSP and _REGS["rbp"] == REG_RBP


def readelf_rows(path: str, every: int):
    """(address, cfa (reg, offset) or None for an expression, the rbp
    and ra columns) at each row's first and last address, of every every-th FDE."""
    out = subprocess.run(["readelf", "--debug-dump=frames-interp", "-W", path],
                         capture_output=True, text=True).stdout   # rc 1: no debuglink file
    fde_no, cols, rows, end, in_fde = -1, [], [], 0, False
    lines = out.split("\n")
    for i, line in enumerate(lines + [""]):
        m = _FDE.match(line.strip())
        if m or not line.strip() or " CIE " in line:
            for j, (loc, cfa, rbp, ra) in enumerate(rows):
                last = rows[j + 1][0] - 1 if j + 1 < len(rows) else end - 1
                yield loc, cfa, rbp, ra
                yield last, cfa, rbp, ra
            rows = []
            cols = []
            if m:
                fde_no += 1
                end = int(m.group(2), 16)
            in_fde = bool(m) or (in_fde and not line.strip())
            continue
        if not in_fde:
            continue
        if fde_no % every:
            continue
        f = re.sub(r"(r\d+) \((\w+)\)", r"\1(\2)", line).split()
        if f[0] == "LOC":
            cols = f
            continue
        if not cols or len(f) != len(cols):
            continue
        cfa_txt = f[1]
        cm = re.fullmatch(r"(r[a-z0-9]+)([+-]\d+)", cfa_txt)
        cfa = (_REGS.get(cm.group(1), -2), int(cm.group(2))) if cm else None
        rbp = f[cols.index("rbp")] if "rbp" in cols else "u"
        rows.append((int(f[0], 16), cfa, rbp, f[cols.index("ra")]))


@pytest.mark.parametrize("path", OBJECTS)
def test_rules_match_readelf(path: str):
    if not os.path.exists(path):
        pytest.skip(f"{path} not installed")
    if not shutil.which("readelf"):
        pytest.skip("readelf (binutils) is the reference")
    every = 1 if os.path.getsize(path) < 4 << 20 else 7
    table = FrameTable(path)
    checked = 0
    for vaddr, cfa, rbp, ra in readelf_rows(path, every):
        if cfa is None or not ra.startswith("c") or \
                rbp not in ("u", "s") and not rbp.startswith("c"):
            with pytest.raises(CfiError):
                table.rule(vaddr)
            continue
        rule = table.rule(vaddr)
        assert rule is not None, f"{vaddr:#x}: no FDE found"
        assert (rule.cfa_reg, rule.cfa_offset) == cfa, f"{vaddr:#x}"
        assert rule.ra_offset == int(ra[1:]), f"{vaddr:#x}"
        want = None if rbp in ("u", "s") else int(rbp[1:])
        assert rule.rbp_offset == want, f"{vaddr:#x}: rbp {rbp}"
        checked += 1
    assert checked > 1000


def test_no_rule_outside_every_fde():
    if not os.path.exists(OBJECTS[0]):
        pytest.skip(f"{OBJECTS[0]} not installed")
    table = FrameTable(OBJECTS[0])
    assert table.rule(0) is None
