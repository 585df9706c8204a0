"""Off-CPU stacks of the traced threads, for the off-CPU flame graph.

The BPF side (probes/walscope.bpf.c, ``offcpu_end``) sums, per stack pair
taken at sched_switch out, how long traced threads then stayed blocked
(until their wakeup) and runnable (from the wakeup, or a preemption, until
they ran again).  The collector writes the map to offcpu.bin at exit.

Folded as::

    thread;[blocked];[write:wal_sync_io];<user leaf>;fdatasync(wal);entry_SYSCALL_64;...;schedule 1234

weighted in microseconds.  The syscall frame names the syscall in progress
and its file's kind (traced, or read from the task's saved registers in
--mode sample, which takes no kernel stacks: the folded stacks then end
there).  Kernel stacks need no frame pointers.  User
stacks are walked only when every probed object keeps frame pointers;
otherwise the BPF side keeps the user IP the thread entered the kernel from
(exact), and walscope's own component at the switch stands in for the rest
of the user stack.

Stacks are walked for 1 in N periods (``--offcpu-stack-every``), at random.
An unsampled period keeps its own thread, component, user IP and syscall
frames; its kernel (and user) stack is estimated: its time is spread over
the stacks sampled for the same thread name, syscall, file kind and
component, in proportion to their time.  Totals are exact; a group with no
sampled stack shows ``[stack not sampled]``.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

import engines
from analysis import components, syscalls
from analysis.folded import clean_frame
from analysis.symbols import RunSymbols
from runfolder import records as R
from runfolder.files import RunFolder

# frames of the tracing itself, above the scheduler, are dropped
SCHED_LEAF = "__schedule"


def kernel_frames(ips: list[int], sym: RunSymbols) -> list[str]:
    """Root first, the frames above __schedule (tracing's own) dropped."""
    names = [sym.kernel(ip) for ip in ips]   # leaf first
    if SCHED_LEAF in names:
        names = names[names.index(SCHED_LEAF):]
    return list(reversed(names))


def group_keys(k: np.void) -> tuple[tuple, tuple]:
    """What an unsampled off-CPU period shares with the sampled ones whose
    stacks it takes: the same user IP too, or else the thread's name, write
    component, syscall and file."""
    g = (int(k["pid"]), bytes(k["comm"]), int(k["in_write"]), int(k["comp"]),
         int(k["sys_nr"]), int(k["sys_kind"]))
    return g + (int(k["user_ip"]),), g


def sampled_shares(ents: np.ndarray, unsampled: int
                   ) -> dict[tuple, dict[tuple[int, int], float]]:
    """Per group key (both of group_keys): the off-CPU time of each
    (user, kernel) stack pair walked for it."""
    out: dict[tuple, dict[tuple[int, int], float]] = {}
    for e in ents:
        k, v = e["key"], e["val"]
        kid = int(k["kstack_id"])
        w = float(v["blocked_ns"]) + float(v["runnable_ns"])
        if kid < 0 or kid == unsampled or w <= 0:
            continue
        for key in group_keys(k):
            g = out.setdefault(key, {})
            pair = (int(k["ustack_id"]), kid)
            g[pair] = g.get(pair, 0.0) + w
    return out


def fold(run_dir: Path, engine: str = engines.UNNAMED,
         user_stacks: bool = False) -> tuple[Counter, dict[str, Any]]:
    """(folded stacks -> us, what summary.json says about them)."""
    folder = RunFolder(run_dir)
    layout = R.Layout.of(folder)
    ents = R.read_offcpu(folder)
    stacks = R.read_stack_map(folder)
    comps = components.names(engine, layout)
    sym = RunSymbols(run_dir)
    out: Counter = Counter()
    kinds = layout.file_kinds()
    info: dict[str, Any] = {
        "periods": 0, "blocked_us": 0.0, "runnable_us": 0.0, "lost_kernel_stacks": 0,
        "user_frames": "all" if user_stacks else "leaf", "kernel_stacks": False}
    by_sys: dict[str, list[float]] = {}   # foreground threads: blocked, runnable, n
    background = engines.background_prefixes()
    unsampled = layout.stack_id_value("WS_STACK_UNSAMPLED")
    shares = sampled_shares(ents, unsampled)
    kframes: dict[int, list[str]] = {}   # a kernel stack, symbolized once

    def kernel(kid: int) -> list[str]:
        if kid not in kframes:
            kframes[kid] = kernel_frames(stacks[kid], sym)
        return kframes[kid]
    info["sampled_periods"] = 0
    for e in ents:
        k, v = e["key"], e["val"]
        thread = clean_frame(bytes(k["comm"]).split(b"\0")[0].decode(errors="replace"))
        mid: list[str] = []
        if k["in_write"]:
            c = int(k["comp"])
            mid.append(f"[write:{comps[c] if c < len(comps) else c}]")
        uid, kid = int(k["ustack_id"]), int(k["kstack_id"])
        pid = int(k["pid"])

        def user(uid: int) -> list[str]:
            if uid >= 0 and uid in stacks and stacks[uid]:
                ips = stacks[uid] if user_stacks else stacks[uid][:1]
            else:
                ips = [int(k["user_ip"])] if k["user_ip"] else []
            return [sym.user(pid, ip).split("(")[0] for ip in reversed(ips)]
        nr = int(k["sys_nr"])
        sysf = "[no syscall]"
        if nr >= 0:
            sysf = syscalls.name(nr, layout)
            kind = kinds.get(int(k["sys_kind"]), "other")
            if kind != "other":
                sysf += f"({kind})"
        # (user frames, kernel frames, share of this entry's time)
        parts: list[tuple[list[str], list[str], float]] = []
        if kid == unsampled:
            fine, coarse = group_keys(k)
            got = shares.get(fine) or shares.get(coarse, {})
            total = sum(got.values())
            for (suid, skid), w in got.items():
                parts.append((user(suid) if user_stacks else user(-1),
                              kernel(skid) if skid in stacks
                              else ["[kernel stack lost]"], w / total))
            if not parts:
                parts.append((user(-1), ["[stack not sampled]"], 1.0))
        else:
            kf: list[str] = []
            if kid >= 0 and kid in stacks:
                kf = kernel(kid)
                info["kernel_stacks"] = True
            elif kid != layout.no_stack():
                kf = ["[kernel stack lost]"]
                info["lost_kernel_stacks"] += int(v["count"])
            if kid != layout.no_stack():
                info["sampled_periods"] += int(v["count"])
            parts.append((user(uid), kf, 1.0))
        info["periods"] += int(v["count"])
        if not thread.startswith(background):   # the threads that issue writes
            row = by_sys.setdefault(sysf, [0.0, 0.0, 0])
            row[0] += v["blocked_ns"] / 1e3
            row[1] += v["runnable_ns"] / 1e3
            row[2] += int(v["count"])
        for state, ns in (("[blocked]", v["blocked_ns"]), ("[runnable]", v["runnable_ns"])):
            if not ns:
                continue
            for uf, kf, f in parts:
                frames = mid + uf + ([sysf] if nr >= 0 else []) + kf
                out[";".join([thread, state] + [clean_frame(x) for x in frames])] += \
                    ns * f / 1e3
            info[state.strip("[]") + "_us"] += ns / 1e3
    info["by_syscall"] = [
        {"syscall": s, "blocked_us": round(b, 1), "runnable_us": round(r, 1), "periods": n}
        for s, (b, r, n) in sorted(by_sys.items(), key=lambda kv: -kv[1][0] - kv[1][1])]
    return out, info
