"""An object's SystemTap/DTrace probes (USDT notes); imports nothing of
walscope's."""
from __future__ import annotations

from dataclasses import dataclass

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from probepoints.elf import vaddr_to_offset, sections
from probepoints.points import SymbolError


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
                off = vaddr_to_offset(elf, pc)
                if off is not None:
                    out.append(UsdtProbe(provider.decode(), name.decode(), off, sem))
            return out
    except (ELFError, OSError, ValueError) as e:
        raise SymbolError(f"{path}: not a readable ELF object ({e})") from None
