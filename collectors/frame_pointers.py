"""Do the traced objects keep frame pointers?  (Chooses how stacks are
walked: by the BPF side's frame-pointer walk, or by perf's DWARF unwinding.)"""
from __future__ import annotations

from elftools.common.exceptions import ELFError

from probepoints.elf import vaddr_to_offset

FP_PROLOGUES = (b"\x55\x48\x89\xe5", b"\xf3\x0f\x1e\xfa\x55\x48\x89\xe5")


def frame_pointer_share(path: str, limit: int = 400) -> float:
    """Share of sizeable functions whose code starts with push %rbp; mov %rsp,%rbp."""
    from elftools.elf.elffile import ELFFile
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            funcs = []
            for name in (".symtab", ".dynsym"):
                sec = elf.get_section_by_name(name)
                if sec is None:
                    continue
                for s in sec.iter_symbols():
                    if s["st_info"]["type"] == "STT_FUNC" and s["st_size"] >= 64 \
                            and s["st_shndx"] != "SHN_UNDEF":
                        funcs.append(s["st_value"])
            funcs = sorted(set(funcs))[:: max(1, len(set(funcs)) // limit)][:limit]
            hits = 0
            for vaddr in funcs:
                off = vaddr_to_offset(elf, vaddr)
                if off is None:
                    continue
                f.seek(off)
                code = f.read(8)
                hits += any(code.startswith(p) for p in FP_PROLOGUES)
            return hits / len(funcs) if funcs else 0.0
    except (OSError, ELFError):   # an unreadable object keeps none
        return 0.0


def choose(method: str, objects: list[str]) -> str:
    """The method to use for these probed objects (exe, database library)."""
    if method != "auto":
        return method
    ok = objects and all(frame_pointer_share(o) >= 0.8 for o in objects)
    return "bpf" if ok else "dwarf"
