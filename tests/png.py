"""Read the pixels of an 8-bit RGB or RGBA PNG (what Chromium's --screenshot
writes), so tests can measure what a page drew without an image library."""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {2: 3, 6: 4}     # colour type: RGB, RGBA


class PngError(ValueError):
    pass


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(kind: int, line: bytearray, prev: bytes, bpp: int) -> None:
    """Undo one scanline's filter in place (PNG spec, section 9)."""
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + a) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + b) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (a + b) // 2) & 0xFF
        elif kind == 4:
            line[i] = (line[i] + _paeth(a, b, c)) & 0xFF
        elif kind != 0:
            raise PngError(f"unknown filter {kind}")


def read_rows(path: Path) -> list[list[tuple[int, int, int]]]:
    """The image as rows of (r, g, b) pixels."""
    data = path.read_bytes()
    if not data.startswith(SIGNATURE):
        raise PngError(f"{path}: not a PNG")
    pos, idat, header = len(SIGNATURE), bytearray(), None
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + size]
        pos += 12 + size
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if header is None:
        raise PngError(f"{path}: no IHDR")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in CHANNELS or interlace:
        raise PngError(f"{path}: depth {depth}, colour type {colour}, interlace "
                       f"{interlace}: only 8-bit RGB(A), not interlaced")
    bpp = CHANNELS[colour]
    raw, stride = zlib.decompress(bytes(idat)), width * bpp
    rows, prev = [], bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = bytearray(raw[start + 1:start + 1 + stride])
        _unfilter(raw[start], line, prev, bpp)
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = bytes(line)
    return rows
