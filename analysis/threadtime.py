"""Each traced thread's time as the kernel accounts it: on-CPU, runnable
(waiting in a run queue) and blocked, with nothing hooked on the context
switch.

The BPF side reads se.sum_exec_runtime and sched_info.run_delay of a thread
when it exits, and of every thread of a process when the process starts
being traced (the baseline) and when tracing stops (struct ws_task_rec).
A thread's window runs from the baseline, or its birth if it was born
traced, to its exit or the end; blocked time is the window less on-CPU and
runnable time.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import engines
from runfolder import records as R
from runfolder.files import RunFolder

SOURCE = "kernel accounting: se.sum_exec_runtime, sched_info.run_delay"


def _comm(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def threads_frame(run_dir: Path) -> pd.DataFrame:
    """One row per thread with an end (exit or final) record."""
    folder = RunFolder(run_dir)
    recs = R.read_records(folder, "ws_task_rec")
    phases = R.Layout.of(folder).enum_values("ws_task_phase")
    cols = ["pid", "tid", "thread", "exited", "window_ns", "oncpu_ns", "runq_ns",
            "blocked_ns", "runs", "nvcsw", "nivcsw"]
    if not len(recs):
        return pd.DataFrame({c: pd.Series(dtype="object" if c == "thread" else "int64")
                             for c in cols})
    base: dict[int, np.void] = {}
    end: dict[int, np.void] = {}
    for r in recs:
        tid, ph = int(r["tid"]), int(r["phase"])
        if ph == phases["WS_TASK_BASELINE"]:
            base.setdefault(tid, r)
        elif ph == phases["WS_TASK_EXIT"] or tid not in end:
            end[tid] = r   # an exit wins over a final sweep
    rows = []
    for tid, e in end.items():
        b = base.get(tid)
        if b is not None and int(b["start_ns"]) == int(e["start_ns"]):
            t0 = int(b["ts_ns"])
            d = {k: int(e[k]) - int(b[k]) for k in ("oncpu_ns", "runq_ns", "runs",
                                                   "nvcsw", "nivcsw")}
        else:   # born while traced (or the tid was reused): counters from birth
            t0 = int(e["start_ns"])
            d = {k: int(e[k]) for k in ("oncpu_ns", "runq_ns", "runs", "nvcsw", "nivcsw")}
        window = max(int(e["ts_ns"]) - t0, 0)
        rows.append({"pid": int(e["pid"]), "tid": tid, "thread": _comm(e["comm"]),
                     "exited": int(e["phase"]) == phases["WS_TASK_EXIT"],
                     "window_ns": window, **d,
                     "blocked_ns": max(window - d["oncpu_ns"] - d["runq_ns"], 0)})
    return pd.DataFrame(rows, columns=cols).sort_values("tid", ignore_index=True)


def role(thread: str, engine: str = engines.UNNAMED) -> str:
    """foreground (the application's threads) or background (the engine's own)."""
    own = engines.get(engine).background_threads
    return "background" if own and thread.startswith(own) else "foreground"


def summarize(df: pd.DataFrame, engine: str = engines.UNNAMED) -> dict[str, Any]:
    """Totals per role, for summary.json's thread_time."""
    out: dict[str, Any] = {"source": SOURCE, "roles": {}}
    if df.empty:
        return out
    roles = df["thread"].map(lambda t: role(t, engine))
    for name, g in df.groupby(roles, sort=True):
        out["roles"][name] = {
            "threads": int(len(g)),
            **{k: int(g[k].sum()) for k in ("window_ns", "oncpu_ns", "runq_ns",
                                             "blocked_ns", "nvcsw", "nivcsw")}}
    return out


def table_lines(info: dict[str, Any], fmt_ns) -> list[str]:
    """Rows for the breakdown tables: per role, the threads' time split."""
    roles = info.get("roles", {})
    if not roles:
        return []
    lines = [f"{'threads (kernel)':<20}{'threads':>9}{'on-CPU':>10}{'runnable':>10}"
             f"{'blocked':>10}"]
    for name, v in roles.items():
        lines.append(f"{name:<20}{v['threads']:>9}{fmt_ns(v['oncpu_ns']):>10}"
                     f"{fmt_ns(v['runq_ns']):>10}{fmt_ns(v['blocked_ns']):>10}")
    return lines
