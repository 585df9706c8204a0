"""InnoDB's probe point in the server binary (mariadbd; mysqld): the
commit of the SQL layer, ha_commit_trans(THD*, bool), which the server
exports.  InnoDB's own functions are not exported (nothing of its redo
log can be probed), so this one pair delimits a commit and its syscalls
say the rest."""
from __future__ import annotations

import re

from engines.innodb import ENGINE
from probepoints.elf import embedded, first_defining
from probepoints.modes import Mode
from probepoints.points import BOTH, ProbeSpec, Resolution, Resolved

COMMIT = "_Z15ha_commit_transP3THDb"    # ha_commit_trans(THD*, bool)
PROBES: tuple[ProbeSpec, ...] = (ProbeSpec("ha_commit_trans(", "IP_COMMIT", BOTH),)
_TOKENS = re.compile(r"^_Z15ha_commit_transP3THDb$")
_VERSION = re.compile(rb"(\d+\.\d+\.\d+)-MariaDB")


def server_version(path: str) -> str | None:
    m = embedded(path, _VERSION)
    return f"MariaDB {m.group(1).decode()}" if m else None


def resolve(objects: list[str], mode: Mode, keep_stepped: bool = True) -> Resolution:
    """ha_commit_trans in the first object that exports it (the server)."""
    res = Resolution(engine=ENGINE.name)
    found = first_defining(objects, _TOKENS, COMMIT, res)
    if found is None:
        return res
    obj, syms = found
    res.object_path = obj
    res.version = server_version(obj)
    res.notes.append("InnoDB's functions are not exported: a commit is split by its "
                     "syscalls and waits alone")
    if mode.probe_set is None:
        return res
    for spec in PROBES:
        if mode.probe_set in spec.modes:
            res.probes.append(Resolved(spec, "ha_commit_trans(THD*, bool)", obj,
                                       syms[COMMIT], engine=ENGINE.name))
    return res
