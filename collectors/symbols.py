"""Which objects a command or a process would run (the engines' units add
what a program loads later), each engine's resolver, and a command that
lists an object's probe points:

    python3 -m collectors.symbols OBJECT [--mode MODE]

What an engine looks for is its own (engines/<name>/resolve.py); the
readers it uses are probepoints/'s."""
from __future__ import annotations

import importlib
import os

import engines
from collectors.loader import exec_mappings, lasting_path
from probepoints import modes
from probepoints.elf import interpreter_chain, shared_libs
from probepoints.points import SymbolError


def candidate_objects_for_command(exe: str, extra: list[str]) -> list[str]:
    main = interpreter_chain(exe)
    objs = [os.path.realpath(main)] + shared_libs(main)
    # what the program will load that holds an engine, by the engine's unit
    # (its resolver's optional candidate_objects: Python's _sqlite3)
    for e in engines.ENGINES:
        more = getattr(resolver_module(e), "candidate_objects", None) if e.resolver else None
        for mod in more(main) if more else []:
            objs += [mod] + shared_libs(mod)
    objs += [os.path.realpath(p) for p in extra]
    return list(dict.fromkeys(objs))


def candidate_objects_for_pid(pid: int, extra: list[str]) -> list[str]:
    """The executable objects a process maps, each by the path that is
    that file here (its own, else /proc/PID/map_files: a file in another
    mount namespace, or one deleted since)."""
    if not os.access(f"/proc/{pid}/maps", os.R_OK):
        raise SymbolError(f"pid {pid}: cannot read its memory map")
    objs = [lasting_path(m.read_path(pid), m.path, (m.dev, m.ino))
            for m in exec_mappings(pid)]
    objs += [os.path.realpath(p) for p in extra]
    return list(dict.fromkeys(objs))


def resolver_module(engine: engines.Engine):
    """The engine's resolve.py: resolve(objects, mode, keep_stepped) ->
    Resolution (mode: a row of probepoints/modes.py), and optionally
    version_of(shown_path, read_path)."""
    return importlib.import_module(engine.resolver)


def main() -> int:
    import argparse
    ap = argparse.ArgumentParser(description="list walscope probe points")
    ap.add_argument("object", help="executable or library")
    ap.add_argument("--mode", choices=tuple(modes.MODES), default=modes.DEFAULT,
                    help="the probe points this mode attaches (default: %(default)s)")
    a = ap.parse_args()
    objs = candidate_objects_for_command(a.object, [])
    for engine in engines.ENGINES:
        res = resolver_module(engine).resolve(objs, modes.MODES[a.mode])
        if not res.object_path:
            continue
        print(f"{engine.title} in {res.object_path}")
        for p in res.probes:
            print(f"{p.spec.phase:16} {p.offset:#10x} {p.name[:100]}")
        for m in res.missing:
            print(f"missing: {m}")
        return 0
    print(f"no engine walscope knows in {a.object}")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
