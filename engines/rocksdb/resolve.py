"""RocksDB's probe points in an object: DBImpl::WriteImpl and the calls
inside a write, matched by demangled-name prefix, so renamed or re-signed
overloads across RocksDB 7.x-10.x (WriteToWAL vs WriteGroupToWAL,
AddRecord with WriteOptions, ...) are all found; every overload present
is attached.  Offsets are file offsets, as uprobes want them."""
from __future__ import annotations

import os
import re

from engines.rocksdb import ENGINE
from probepoints.elf import demangle, embedded, function_symbols, stepped_phases
from probepoints.modes import Mode
from probepoints.points import BOTH, FULL, ProbeSpec, Resolution, Resolved, SymbolError

PROBES: tuple[ProbeSpec, ...] = (
    ProbeSpec("rocksdb::DBImpl::WriteImpl(", "PH_WRITE", BOTH),
    # --mode writes: the write's boundaries and the WAL calls only (4 hits
    # a leader's write); its group role and queue come from syscalls, the
    # memtable's and the spin's shares of the rest from samples
    ProbeSpec("rocksdb::WriteThread::JoinBatchGroup(", "PH_QUEUE", FULL),
    ProbeSpec("rocksdb::WriteThread::AwaitState(", "PH_QUEUE", FULL),
    # WriteToWAL(const WriteBatch&, ...) is called by the group-level
    # WriteToWAL(const WriteGroup&, ...) (WriteGroupToWAL in newer releases)
    # and ConcurrentWriteToWAL: 2 hits a write saved (81050 calls, none
    # outside them, in 7.8 under fillrandom/overwrite, sync, pipelined writes)
    ProbeSpec("rocksdb::DBImpl::WriteToWAL(", "PH_WAL", BOTH,
              nested="(rocksdb::WriteBatch const&"),
    ProbeSpec("rocksdb::DBImpl::WriteGroupToWAL(", "PH_WAL", BOTH,
              alt_of="rocksdb::DBImpl::WriteToWAL("),
    ProbeSpec("rocksdb::DBImpl::ConcurrentWriteToWAL(", "PH_WAL", BOTH),
    ProbeSpec("rocksdb::DBImpl::SyncWAL(", "PH_WAL", BOTH),
    ProbeSpec("rocksdb::DBImpl::FlushWAL(", "PH_WAL", BOTH),
    # inside a write, AddRecord only runs in the group-level WriteToWAL (or
    # ConcurrentWriteToWAL): 807638 calls, none elsewhere, in 7.8 under
    # fillrandom/overwrite with memtable switches, sync on and off, pipelined
    # writes on and off (tests/test_bpftrace_scripts.py checks it); outside
    # writes it writes the MANIFEST, which is not a write's WAL time
    ProbeSpec("rocksdb::log::Writer::AddRecord(", "PH_WAL", FULL,
              within=("rocksdb::DBImpl::WriteToWAL(rocksdb::WriteThread::WriteGroup",
                      "rocksdb::DBImpl::WriteGroupToWAL(")),
    ProbeSpec("rocksdb::crc32c::Extend(", "PH_CRC", FULL),
    ProbeSpec("rocksdb::crc32c::Crc32cCombine(", "PH_CRC", FULL),
    ProbeSpec("rocksdb::WriteBatchInternal::InsertInto(", "PH_MEMTABLE", FULL),
    ProbeSpec("rocksdb::WriteThread::EnterAsBatchGroupLeader(", "PH_LEADER",
              FULL, ret=False),
)

# (name, phase, fallbacks tried in order when name is not exported)

# mangled-name fragments worth demangling (keeps c++filt input small)
_TOKENS = re.compile(
    r"WriteImpl|JoinBatchGroup|AwaitState|WriteToWAL|WriteGroupToWAL|SyncWAL|"
    r"FlushWAL|AddRecord|crc32c|InsertInto|EnterAsBatchGroupLeader")


def rocksdb_version(path: str) -> str | None:
    m = re.search(r"librocksdb\.so\.(\d+(?:\.\d+)*)", os.path.realpath(path))
    return m.group(1) if m else None


def resolve(objects: list[str], mode: Mode, keep_stepped: bool = True) -> Resolution:
    """Probe points of mode's probe set in the first object that defines
    DBImpl::WriteImpl.  keep_stepped=False: if a CRC site must be
    single-stepped (~10 us a hit), CRC gets no probes and is split out of
    wal_append by sampling."""
    res = Resolution(engine=ENGINE.name)
    if mode.probe_set is None:
        specs: tuple[ProbeSpec, ...] = ()
    else:
        specs = tuple(s for s in PROBES if mode.probe_set in s.modes)
    for obj in objects:
        res.objects_checked.append(obj)
        try:
            syms = function_symbols(obj, _TOKENS)
        except SymbolError:
            continue
        if not syms:
            continue
        names = demangle([s for s, _ in syms])
        found = [(d, off) for d, (_, off) in zip(names, syms)
                 if "[clone" not in d]
        if not any(d.startswith("rocksdb::DBImpl::WriteImpl(") for d, _ in found):
            continue
        res.object_path = obj
        res.version = rocksdb_version(obj)
        for spec in specs:
            hits = [(d, off) for d, off in found if d.startswith(spec.prefix)]
            alt_found = spec.alt_of and any(d.startswith(spec.alt_of)
                                            for d, _ in found)
            if not hits and not alt_found:
                res.missing.append(spec.prefix.rstrip("("))
            if spec.within and any(d.startswith(w) for d, _ in found for w in spec.within):
                continue
            if spec.nested and (alt_found or any(spec.nested not in d for d, _ in hits)):
                hits = [(d, off) for d, off in hits if spec.nested not in d]
            for d, off in sorted(set(hits), key=lambda x: x[1]):
                res.probes.append(Resolved(spec, d, obj, off, engine=ENGINE.name))
        crc = [p for p in res.probes if p.spec.phase == "PH_CRC"]
        if crc and not keep_stepped and "PH_CRC" in stepped_phases(crc):
            res.probes = [p for p in res.probes if p.spec.phase != "PH_CRC"]
            res.notes.append("crc32c probe sites are single-stepped (~10 us a hit): "
                             "crc is split out of wal_append by sampling instead")
        if mode.probe_set is not None and not any(p.spec.phase == "PH_CRC"
                                                  for p in res.probes):
            res.sampled_split["crc"] = "wal_append"
        res.groups_unprobed = mode.groups_unprobed
        if mode.probe_set is not None and not any(p.spec.phase == "PH_MEMTABLE"
                                                  for p in res.probes):
            res.sampled_split["memtable"] = "other"
        if res.groups_unprobed:   # the spin before a follower yields
            res.sampled_split["queue"] = "other"
        return res
    return res


_BUILD_DATE = re.compile(rb"rocksdb_build_date:([ -~]{1,40})")
_BUILD_SHA = re.compile(rb"rocksdb_build_git_sha:([0-9a-f]{1,40})")


def _build(path: str) -> str | None:
    """What a RocksDB build says of itself where its file name does not
    carry the version (a static build): its build date and git sha."""
    date = embedded(path, _BUILD_DATE)
    sha = embedded(path, _BUILD_SHA)
    parts = [f"built {date.group(1).decode()}" if date else "",
             f"git {sha.group(1).decode()}" if sha and sha.group(1) != b"0" else ""]
    return ", ".join(p for p in parts if p) or None


def version_of(shown_path: str, read_path: str) -> str | None:
    """The version in the library's file name, else its build's own words."""
    return rocksdb_version(shown_path) or _build(read_path)
