"""The collector's --attach lines for what the resolvers found: each
probe's cookie (its engine's phase, the engine's id in byte 1, its
argument from bit 16) in the values of the build's layout, and which
components have a probe at a single-stepped site."""
from __future__ import annotations

import engines
from probepoints.elf import is_emulated_site
from probepoints.points import Resolution, Resolved
from runfolder.records import Layout


def stepped_components(probes: list[Resolved]) -> set[str]:
    """Components with at least one probe at a single-stepped site (each
    phase read in its own engine's table of the build's layout, the loaded
    object's; markers open none)."""
    build = Layout.build()
    stepped = [p for p in probes if not is_emulated_site(p.path, p.offset)]
    return {c for c in (build.phase_component(p.spec.phase, p.engine) for p in stepped) if c}


def attach_lines(probes: list[Resolved]) -> list[str]:
    """Lines of the collector's --attach file: the cookie is the phase (the
    probe's engine's phase enum), the engine (enum ws_engine) in byte 1,
    the probe's argument from bit 16; the values of the build's layout (the
    object the collector loads)."""
    build = Layout.build()
    engine_ids = build.enum_values("ws_engine")
    lines = []
    for p in probes:
        e = engines.get(p.engine)
        ph = build.enum_values(e.phase_enum)[p.spec.phase] | engine_ids[e.ws_engine] << 8 \
            | p.arg << 16
        short = p.name.split("(")[0]
        kind = "always" if p.spec.always else "enter"
        lines.append(f"{kind}\t{ph}\t{p.offset}\t{p.path}\t{short}")
        if p.spec.ret:
            lines.append(f"exit\t{ph}\t{p.offset}\t{p.path}\t{short}")
    return lines


def resolution_lines(res: Resolution) -> list[str]:
    """The collector's attach lines for what a resolution found: its
    probes, and a "rows" line (the engine's id) if its rows come from
    syscalls."""
    lines = attach_lines(res.probes)
    if res.syscall_rows:
        e = engines.get(res.engine)
        lines.append(f"rows\t{Layout.build().enum_values('ws_engine')[e.ws_engine]}"
                     f"\t0\t-\t{e.name}")
    return lines
