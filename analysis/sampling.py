"""--mode sample: classify timed perf samples of traced threads.

No uprobes and no syscall tracepoints: each on-CPU sample carries the user
IP, or, when it hit the kernel, the syscall in progress and its fd's file
kind, read from the task's saved user registers.  IPs were named by the
tracer (symbols.json: the process's memory map, snapshotted while it ran,
and the object's symbols), and a name maps to a component here.  Blocked time is never sampled: the
off-CPU sums (offcpu.py) give it, by syscall, from sched_switch.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

import engines
from analysis import components, syscalls
from analysis.symbols import RunSymbols
from runfolder import records as R
from runfolder.files import RunFolder

# demangled-name fragment -> component (first match wins): every engine's
RULES: tuple[tuple[str, str], ...] = tuple(r for e in engines.ENGINES for r in e.sample_rules)


# names whose brackets are a function's own, kept through function_name
_KEPT = ("(anonymous namespace)", "operator()", "operator<<=", "operator>>=",
         "operator<=>", "operator<<", "operator>>", "operator<=", "operator>=",
         "operator->*", "operator->", "operator<", "operator>")


def function_name(name: str) -> str:
    """A demangled name without its parameter lists and template arguments:
    a rule names the function, not the types it takes (DBImpl::WriteToWAL
    takes a WriteThread::WriteGroup, and is no wait in the write thread; a
    lambda inside WriteImpl(..., PostMemTableCallback*) is no memtable)."""
    kept: list[str] = []

    def keep(m: re.Match) -> str:
        kept.append(m.group(0))
        return f"\0{len(kept) - 1}\0"
    text = re.sub("|".join(re.escape(k) for k in _KEPT), keep,
                  re.sub(r" \[clone [^\]]*\]", "", name))
    out, depth = [], 0
    for c in text:
        if c in "(<":
            depth += 1
        elif c in ")>" and depth:
            depth -= 1
        elif not depth:
            out.append(c)
    return re.sub("\0(\\d+)\0", lambda m: kept[int(m.group(1))], "".join(out))


def classify_symbol(name: str) -> str:
    fn = function_name(name)
    for frag, comp in RULES:
        if frag in fn:
            return comp
    return "other"


def classify_frames(names: list[str]) -> tuple[str, str]:
    """The component of the innermost frame (the leaf, then its callers)
    whose name a rule knows, and that frame's name; "other" and the leaf
    where none does.  A leaf the object names nothing for (a stripped
    library's static function, libc's memcpy) takes its caller's part."""
    for n in names:
        comp = classify_symbol(n)
        if comp != "other":
            return comp, n
    return "other", names[0]


def syscall_component(nr: int, kind: str, engine: str, layout: R.Layout) -> str | None:
    """The engine's I/O component of a sample taken in a write or sync
    syscall on a file of that kind; None for any other syscall or file
    (the syscalls named in layout)."""
    name = syscalls.traced(layout).get(nr)
    io = syscalls.io_class(name, layout) if name else None
    return components.io_component(io, kind, engine, layout) if io else None


def samples_frame(run_dir: Path, engine: str = engines.UNNAMED) -> pd.DataFrame:
    """One row per perf sample of a traced thread (samples.parquet)."""
    folder = RunFolder(run_dir)
    layout = R.Layout.of(folder)
    s = R.read_records(folder, "ws_sample_rec")
    kinds = layout.file_kinds()
    sym = RunSymbols(run_dir)
    phase_comps = components.names(engine, layout) + ["?"]   # slot names of the engine
    names, comps, vias = [], [], []
    for pid, tid, ts, ip, nr, kind in zip(s["pid"], s["tid"], s["ts_ns"], s["ip"],
                                          s["sys_nr"], s["sys_kind"]):
        comp = syscall_component(int(nr), kinds.get(int(kind), "other"), engine, layout)
        if comp:
            names.append("[syscall]")
            comps.append(comp)
            vias.append("[syscall]")
            continue
        if ip == 0:   # other syscalls (futex, yield), irqs, faults
            names.append(f"[{syscalls.name(int(nr), layout)}]" if nr >= 0 else "[kernel]")
            comps.append("kernel")
            vias.append(names[-1])
            continue
        n = sym.user(int(pid), int(ip))
        comp, via = classify_frames([n] + sym.callers(int(pid), int(tid), int(ts)))
        names.append(n)
        comps.append(comp)
        vias.append(via)
    return pd.DataFrame({
        "ts_ns": s["ts_ns"].astype(np.int64), "pid": s["pid"].astype(np.int64),
        "tid": s["tid"].astype(np.int64), "cpu": s["cpu"].astype(np.int32),
        "thread": [c.decode(errors="replace") for c in s["comm"]],
        "symbol": names, "component": comps,
        # the frame whose name gave the component: the leaf, or a caller
        "component_from": vias,
        "in_write": s["in_write"].astype(bool),
        # the probed component current when the sample was taken
        "phase_comp": pd.Categorical.from_codes(
            np.minimum(s["comp"].astype(np.int64), len(phase_comps) - 1), phase_comps),
    })


# a split's symbols where they are narrower than the component's RULES
SPLIT_SYMBOLS: dict[str, tuple[str, ...]] = {
    c: syms for e in engines.ENGINES for c, syms in e.split_symbols}


def split_fractions(samples: pd.DataFrame, split: dict[str, str],
                    min_samples: int = 20) -> dict[str, dict[str, float]]:
    """For each component measured by sampling inside its parent (crc inside
    wal_append, memtable inside other): the share of the parent's in-write
    samples whose function (or the caller that placed them) is the
    component's, with its binomial standard error."""
    out = {}
    for comp, parent in split.items():
        inside = samples[samples["in_write"] & (samples["phase_comp"] == parent)] \
            if len(samples) else samples
        n = int(len(inside))
        if comp in SPLIT_SYMBOLS and n:
            # the frame that placed the sample: the caller a rule named,
            # else the leaf (a folder from before callers: the leaf)
            pat = "|".join(re.escape(x) for x in SPLIT_SYMBOLS[comp])
            names = inside["component_from" if "component_from" in inside else "symbol"]
            k = int(names.map(function_name).str.contains(pat, regex=True).sum())
        else:
            k = int((inside["component"] == comp).sum()) if n else 0
        f = k / n if n >= min_samples else 0.0
        out[comp] = {"parent": parent, "samples": n, "hits": k, "fraction": f,
                     "stderr": float(np.sqrt(f * (1 - f) / n)) if n >= min_samples else 0.0,
                     "applied": n >= min_samples}
    return out


def breakdown(samples: pd.DataFrame, hz: int) -> dict[str, dict[str, float]]:
    """Per component: samples, share of samples, estimated on-CPU time."""
    if not len(samples):
        return {}
    # the write path runs on the threads that issue writes: the foreground
    # threads (not the engines' own background threads)
    fg = samples[~samples["thread"].str.startswith(engines.background_prefixes())]
    counts = fg["component"].value_counts()
    total = int(counts.sum())
    return {c: {"samples": int(n), "share": n / total,
                "est_cpu_ns": n / hz * 1e9} for c, n in counts.items()}
