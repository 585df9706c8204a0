"""PostgreSQL's probe points in the server binary (postgres): exported C
functions, and the USDT probes of a build configured with --enable-dtrace
(Debian's, Ubuntu's and the PGDG packages are), which mark where a
transaction starts and ends inside static functions.  The probes used here
fire without a semaphore (their sites test none); the lightweight-lock
wait probes do test one, so their waits are taken at PGSemaphoreLock."""
from __future__ import annotations

import re

from engines.postgres import ENGINE
from probepoints.elf import embedded, first_defining
from probepoints.modes import Mode
from probepoints.points import BOTH, FULL, ProbeSpec, Resolution, Resolved
from probepoints.usdt import usdt_probes

# (function, phase, modes, return probe too)
FUNCTIONS: tuple[ProbeSpec, ...] = (
    # attached for good: every row is counted, windows or not (the share
    # recorded, exact)
    ProbeSpec("XactLogCommitRecord", "PGP_XACT_RECORD", BOTH, ret=False, always=True),
    ProbeSpec("XactLogAbortRecord", "PGP_XACT_RECORD", BOTH, ret=False, always=True),
    ProbeSpec("XLogFlush", "PGP_WAL_FLUSH", BOTH),
    ProbeSpec("LWLockAcquireOrWait", "PGP_WAL_LOCK", BOTH),
    ProbeSpec("XLogInsertRecord", "PGP_WAL_INSERT", FULL),
    ProbeSpec("PortalRun", "PGP_EXEC", FULL),
    ProbeSpec("secure_read", "PGP_CLIENT", FULL),
    ProbeSpec("PGSemaphoreLock", "PGP_LWLOCK", FULL),
    ProbeSpec("pg_usleep", "PGP_SLEEP", FULL),
    ProbeSpec("CreateCheckPoint", "PGP_CHECKPOINT", FULL),
)
# USDT probe name -> (phase, modes): entry-only markers
MARKERS: dict[str, tuple[str, frozenset[str]]] = {
    "transaction__start": ("PGP_XACT_START", BOTH),
    "transaction__commit": ("PGP_XACT_COMMIT", BOTH),
    "transaction__abort": ("PGP_XACT_ABORT", BOTH),
    "lock__wait__start": ("PGP_LOCK_START", FULL),
    "lock__wait__done": ("PGP_LOCK_DONE", FULL),
}
_TOKENS = re.compile("^(" + "|".join(s.prefix for s in FUNCTIONS) + ")$")
_VERSION = re.compile(rb"PostgreSQL (\d+(?:\.\d+)*)[ (]")


def postgres_version(path: str) -> str | None:
    """The server's version, from the PG_VERSION_STR it embeds."""
    m = embedded(path, _VERSION)
    return m.group(1).decode() if m else None


def resolve(objects: list[str], mode: Mode, keep_stepped: bool = True) -> Resolution:
    """Probe points of mode's probe set in the first object that defines
    XLogInsertRecord and carries the transaction USDT probes (the server,
    not an extension)."""
    res = Resolution(engine=ENGINE.name)
    probe_set = mode.probe_set
    found = first_defining(objects, _TOKENS, "XLogInsertRecord", res)
    if found is None:
        return res
    obj, syms = found
    usdt: dict[str, list[int]] = {}
    for p in usdt_probes(obj):
        if p.provider == "postgresql":
            usdt.setdefault(p.name, []).append(p.offset)
    res.object_path = obj
    res.version = postgres_version(obj)
    if "transaction__start" not in usdt:
        res.notes.append("no transaction USDT probes (a build without --enable-dtrace): "
                         "transactions cannot be delimited")
    if probe_set is None:
        return res
    for spec in FUNCTIONS:
        if probe_set not in spec.modes:
            continue
        if spec.prefix not in syms:
            res.missing.append(spec.prefix)
            continue
        res.probes.append(Resolved(spec, spec.prefix, obj, syms[spec.prefix],
                                   engine=ENGINE.name))
    for name, (phase, modes) in MARKERS.items():
        if probe_set not in modes:
            continue
        if name not in usdt:
            res.missing.append(name)
            continue
        spec = ProbeSpec(name, phase, modes, ret=False)
        res.probes += [Resolved(spec, name, obj, off, engine=ENGINE.name)
                       for off in sorted(usdt[name])]
    return res
