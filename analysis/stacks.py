"""On-CPU stacks of the traced threads, folded for the on-CPU flame graph.

Two ways, chosen per run by the tracer and recorded in summary.json
(``oncpu_stacks``):
  bpf    the BPF sampler's own stack walk (bpf_get_stackid): cheap, but it
         follows frame pointers, which Debian's librocksdb and most distro
         binaries lack;
  dwarf  ``perf record --call-graph dwarf``: copies 16 KiB of user stack per
         sample and unwinds it afterwards with the objects' DWARF CFI; works
         without frame pointers, costs more per sample.
Both were symbolized by the tracer (symbols.json, perf-script.txt).  A
stack whose outermost frame is not a thread or process entry point
(_start, clone, start_thread...) is counted as truncated.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

from analysis.symbols import RunSymbols
from runfolder import records as R

ROOT_FRAMES = ("_start", "__libc_start_main", "__libc_start_call_main", "clone",
               "__clone", "clone3", "__clone3", "start_thread")


def is_truncated(frames: list[str]) -> bool:
    """frames root first.  A complete user stack starts at an entry point, or
    in an object without symbols ("[db_bench]": a stripped program's _start);
    one whose root address maps to no object ("[unknown]") was cut short."""
    if not frames or frames[0] == "[unknown]":
        return True
    root = frames[0]
    return not (root.startswith(ROOT_FRAMES) or (root.startswith("[") and root.endswith("]")))


_FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")


def fold_perf(script: Path) -> tuple[Counter, int, int]:
    """(folded stacks thread;root..leaf -> samples, samples, truncated) of
    perf script's text (collectors.perf_record.script)."""
    out: Counter = Counter()
    total = truncated = 0
    comm, frames = None, []

    def flush() -> None:
        nonlocal total, truncated
        if comm is None:
            return
        user = [f for f in reversed(frames) if not f.startswith("[k]")]
        total += 1
        truncated += is_truncated(user)
        stack = [comm] + list(reversed(frames))
        out[";".join(s.replace(";", ":").replace(" ", "_") for s in stack)] += 1

    for line in script.read_text().splitlines():
        if not line.strip():
            flush()
            comm, frames = None, []
            continue
        if not line.startswith((" ", "\t")):
            flush()
            comm, frames = line.split()[0], []
            continue
        m = _FRAME.match(line)
        if m:
            sym, dso = m.group(1), m.group(2)
            if sym == "[unknown]" and dso != "[unknown]":
                sym = f"[{os.path.basename(dso)}]"
            sym = sym.split("(")[0] if "(" in sym and not sym.startswith("[") else sym
            frames.append(("[k]" if "kernel" in dso else "") + sym)
    flush()
    # kernel frames marked while counting truncation; unmark for the graph
    return Counter({k.replace("[k]", ""): v for k, v in out.items()}), total, truncated


def fold_bpf(run_dir: Path) -> tuple[Counter, int, int]:
    """Stacks the BPF sampler walked (frame pointers), symbolized."""
    s = R.read_records(run_dir, "ws_sample_rec")
    stacks = R.read_stack_map(run_dir)
    sym = RunSymbols(run_dir)
    out: Counter = Counter()
    total = truncated = 0
    for pid, sid, comm in zip(s["pid"], s["ustack_id"], s["comm"]):
        if sid < 0 or int(sid) not in stacks:
            continue
        frames = [sym.user(int(pid), ip).split("(")[0]
                  for ip in reversed(stacks[int(sid)])]
        total += 1
        truncated += is_truncated(frames)
        out[";".join([comm.decode(errors="replace")] + frames)] += 1
    return out, total, truncated
