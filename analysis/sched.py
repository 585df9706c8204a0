"""One row per scheduler event of a traced thread (sched.parquet):
run-queue waits, migrations."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis.io import cpu_type_letters
from runfolder import records as R
from runfolder.files import RunFolder


def sched_events(layout: R.Layout) -> dict[int, str]:
    """enum ws_sched_ev value -> runq, migrate, offcpu."""
    return layout.enum_names("ws_sched_ev", "SE_")


def _cpu_type_names(codes: np.ndarray, layout: R.Layout) -> pd.Categorical:
    letters = cpu_type_letters(layout)
    names = [letters.get(i, "?") for i in range(4)]
    return pd.Categorical.from_codes(np.minimum(codes.astype(np.int64), 3), names)


def sched_frame(run_dir: Path, thread_names: dict[int, str]) -> pd.DataFrame:
    folder = RunFolder(run_dir)
    return sched_frame_from(R.read_records(folder, "ws_sched_rec"), thread_names,
                            R.Layout.of(folder))


def sched_frame_from(s: np.ndarray, thread_names: dict[int, str],
                     layout: R.Layout) -> pd.DataFrame:
    """sched_frame of some sched records (a chunk of the file, read with
    layout)."""
    events = sched_events(layout)
    df = pd.DataFrame({
        "ts_ns": s["ts_ns"].astype(np.int64),
        "pid": s["pid"].astype(np.int64),
        "tid": s["tid"].astype(np.int64),
        "event": pd.Categorical([events.get(int(e), "?") for e in s["ev"]]),
        "dur_ns": s["dur_ns"].astype(np.int64),
        "from_cpu": s["from_cpu"].astype(np.int32),
        "to_cpu": s["to_cpu"].astype(np.int32),
        "from_type": _cpu_type_names(s["from_type"], layout),
        "to_type": _cpu_type_names(s["to_type"], layout),
        "in_write": s["in_write"].astype(bool),
        "preempted": s["preempted"].astype(bool),
    })
    df["thread"] = pd.Categorical(df["tid"].map(thread_names).fillna(""))
    return df.sort_values("ts_ns", kind="stable").reset_index(drop=True)
