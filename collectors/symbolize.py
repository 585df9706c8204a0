"""Instruction addresses to function names, while the traced objects and
the kernel's symbols are at hand (root, the tracing host).

After the collector stops, every address the records refer to (sample
IPs, user and kernel stacks, off-CPU periods' user IPs) is resolved once
and written to the run folder as symbols.json, so the analysis never reads
an ELF object or /proc/kallsyms: it works on a copied folder, as any user.
"""
from __future__ import annotations

import bisect
import json
import os
import subprocess
from pathlib import Path

import numpy as np
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from runfolder import records as R
from probepoints.elf import symbol_ranges
from probepoints.points import SymbolError
from collectors.procfs import Mapping
from collectors.unwind import Unwinder
from runfolder.files import RunFolder

KERNEL_HALF = 0xffff800000000000   # x86_64: kernel addresses from here
NO_MAPS: list[Mapping] = []        # a process whose maps were not read


class Symbolizer:
    """User addresses of a process (through its memory maps) to names."""

    def __init__(self) -> None:
        self._tables: dict[str, tuple[list[int], list[int], list[str], int]] = {}
        # a process's maps sorted by start, by the list's id (one lookup
        # per frame of every sample: a linear scan of hundreds is slow)
        self._sorted: dict[int, tuple[list[Mapping], list[int], list[Mapping]]] = {}

    def _table(self, path: str):
        if path not in self._tables:
            try:
                rows = symbol_ranges(path)
            except (SymbolError, OSError, ELFError,
                    subprocess.SubprocessError):
                rows = []   # unreadable symbols: samples name the object only
            try:    # apart: callers are unwound where no symbol is read
                bias = _load_bias(path)
            except (OSError, ELFError):
                bias = 0
            self._tables[path] = ([r[0] for r in rows], [r[1] for r in rows],
                                  [r[2] for r in rows], bias)
        return self._tables[path]

    def locate(self, maps: list[Mapping], ip: int) -> tuple[str, int] | None:
        """The object mapped at ip and ip's address in it (its vaddr)."""
        got = self._sorted.get(id(maps))
        if got is None or got[0] is not maps:
            ordered = sorted(maps)
            got = self._sorted[id(maps)] = (maps, [m[0] for m in ordered], ordered)
        i = bisect.bisect_right(got[1], ip) - 1
        if i < 0:
            return None
        lo, hi, off, path = got[2][i]
        return (path, ip - lo + off + self._table(path)[3]) if ip < hi else None

    def name(self, maps: list[Mapping], ip: int) -> str:
        where = self.locate(maps, ip)
        if where is None:
            return "[unknown]"
        starts, ends, names, _ = self._table(where[0])
        i = bisect.bisect_right(starts, where[1]) - 1
        if i >= 0 and where[1] < ends[i]:
            return names[i]
        return f"[{os.path.basename(where[0])}]"


def _load_bias(path: str) -> int:
    """vaddr - file offset of the first executable PT_LOAD (usually 0)."""
    with open(path, "rb") as f:
        for seg in ELFFile(f).iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg["p_flags"] & 1:
                return seg["p_vaddr"] - seg["p_offset"]
    return 0


class KernelSymbols:
    """Addresses to names from /proc/kallsyms (read as root, at run time)."""

    def __init__(self, path: str = "/proc/kallsyms"):
        addrs, names = [], []
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3 or parts[1] not in "tTwW":
                    continue
                a = int(parts[0], 16)
                if a:
                    addrs.append(a)
                    names.append(parts[2])
        order = np.argsort(np.array(addrs, dtype=np.uint64), kind="stable")
        self.addrs = [addrs[i] for i in order]
        self.names = [names[i] for i in order]

    def name(self, ip: int) -> str:
        i = bisect.bisect_right(self.addrs, ip) - 1
        return self.names[i] if i >= 0 else "[kernel]"


def sample_callers(run_dir: Path, maps: dict[int, list[Mapping]],
                   sym: Symbolizer) -> dict[str, list[int]]:
    """"tid:ts_ns" (hex) of each user sample whose callers were found ->
    their call sites, innermost first (collectors.unwind)."""
    s = R.read_records(run_dir, "ws_sample_rec")
    if not len(s) or "stack" not in (s.dtype.names or ()):
        return {}
    unwinder = Unwinder(sym.locate)
    out: dict[str, list[int]] = {}
    for r in s[(s["ip"] != 0) & (s["stack_words"] > 0)]:
        stack = r["stack"][: int(r["stack_words"])].tobytes()
        chain = unwinder.callers(maps.get(int(r["pid"]), NO_MAPS), int(r["ip"]),
                                 int(r["sp"]), int(r["bp"]), stack)
        if chain:
            out[f"{int(r['tid']):x}:{int(r['ts_ns']):x}"] = chain
    return out


def referenced_user_ips(run_dir: Path) -> dict[int, set[int]]:
    """pid -> the user addresses its samples and off-CPU periods refer to."""
    stacks = R.read_stack_map(run_dir)
    out: dict[int, set[int]] = {}
    s = R.read_records(run_dir, "ws_sample_rec")
    for pid, ip, uid in zip(s["pid"], s["ip"], s["ustack_id"]):
        ips = out.setdefault(int(pid), set())
        if ip:
            ips.add(int(ip))
        if uid >= 0:
            ips.update(stacks.get(int(uid), []))
    for e in R.read_offcpu(run_dir):
        k = e["key"]
        ips = out.setdefault(int(k["pid"]), set())
        if k["user_ip"]:
            ips.add(int(k["user_ip"]))
        if k["ustack_id"] >= 0:
            ips.update(stacks.get(int(k["ustack_id"]), []))
    # where the wall sweeps found a thread runnable, preempted in user code
    if RunFolder(run_dir).records("ws_wall_rec").exists():
        w = R.read_records(run_dir, "ws_wall_rec")
        runq = R.Layout.of(run_dir).enum_values("ws_wall_state")["WS_WALL_RUNQ"]
        for pid, ip, state, nr in zip(w["pid"], w["user_ip"], w["state"], w["sys_nr"]):
            if state == runq and ip and nr < 0:
                out.setdefault(int(pid), set()).add(int(ip))
    return out


def write_symbols(run_dir: Path, maps: dict[int, list[Mapping]]) -> int:
    """symbols.json: {"user": {pid: {hex ip: name}}, "kernel": {hex ip:
    name}, "callers": {"tid:ts_ns": [hex call site, ...]}} for every address
    the run's records refer to (the samples' callers among them); returns
    how many."""
    sym = Symbolizer()
    callers = sample_callers(run_dir, maps, sym) or {   # a folder written twice
        k: [int(ip, 16) for ip in v]
        for k, v in RunFolder(run_dir).symbols().get("callers", {}).items()}
    # the copies of the processes' stacks (their keys and rows) have served
    R.zero_field(run_dir, "ws_sample_rec", "stack")
    refs = referenced_user_ips(run_dir)
    if callers:
        s = R.read_records(run_dir, "ws_sample_rec")
        pid_of = {f"{int(t):x}:{int(ts):x}": int(p)
                  for p, t, ts in zip(s["pid"], s["tid"], s["ts_ns"])}
        for key, chain in callers.items():
            refs.setdefault(pid_of[key], set()).update(chain)
    user = {str(pid): {f"{ip:x}": sym.name(maps.get(pid, NO_MAPS), ip) for ip in sorted(ips)}
            for pid, ips in refs.items() if ips}
    kips = sorted({ip for ips in R.read_stack_map(run_dir).values() for ip in ips
                   if ip >= KERNEL_HALF})
    kernel: dict[str, str] = {}
    if kips:
        ks = KernelSymbols()
        kernel = {f"{ip:x}": ks.name(ip) for ip in kips}
    dst = RunFolder(run_dir).symbols_json
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.write_text(json.dumps({"user": user, "kernel": kernel, "callers": {
        k: [f"{ip:x}" for ip in chain] for k, chain in callers.items()}}))
    tmp.replace(dst)
    return sum(len(v) for v in user.values()) + len(kernel)
