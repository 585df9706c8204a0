"""One row per traced syscall (io.parquet): which file, which thread,
how long, how many bytes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis import syscalls
from runfolder import records as R
from runfolder.files import RunFolder


def cpu_type_letters(layout: R.Layout) -> dict[int, str]:
    """enum ws_cpu_type value -> U (uniform), P or E; ? for anything else."""
    names = layout.enum_names("ws_cpu_type", "CT_")
    return {v: n[0].upper() for v, n in names.items()}


def opens_frame(run_dir: Path, seeded: dict[tuple[int, int], str]) -> pd.DataFrame:
    folder = RunFolder(run_dir)
    o = R.read_records(folder, "ws_open_rec")
    opens = o[(o["nr"] == syscalls.number("openat", R.Layout.of(folder))) & (o["ret"] >= 0)]
    df = pd.DataFrame({
        "ts_ns": opens["ts_ns"].astype(np.int64),
        "pid": opens["pid"].astype(np.int64),
        "fd": opens["ret"].astype(np.int64),
        "path": [p.decode(errors="replace") for p in opens["path"]],
        "open_ino": opens["ino"].astype(np.int64),
    })
    if seeded:
        pre = pd.DataFrame([(0, pid, fd, path, 0) for (pid, fd), path in seeded.items()],
                           columns=["ts_ns", "pid", "fd", "path", "open_ino"])
        df = pd.concat([pre, df], ignore_index=True)
    return df.sort_values("ts_ns", kind="stable")


def io_frame(run_dir: Path, seeded: dict[tuple[int, int], str] | None = None
             ) -> pd.DataFrame:
    opens = opens_frame(run_dir, seeded or {})
    folder = RunFolder(run_dir)
    return io_frame_from(R.read_records(folder, "ws_io_rec"), opens,
                         named_frame(run_dir), R.Layout.of(folder))


def named_frame(run_dir: Path) -> pd.DataFrame:
    """(tid, ts_ns) -> path of every openat/unlink record."""
    o = R.read_records(run_dir, "ws_open_rec")
    return pd.DataFrame({"tid": o["tid"].astype(np.int64),
                         "ts_ns": o["ts_ns"].astype(np.int64),
                         "own_path": [p.decode(errors="replace") for p in o["path"]]}
                        ).drop_duplicates(["tid", "ts_ns"])


def io_frame_from(io: np.ndarray, opens: pd.DataFrame, named: pd.DataFrame,
                  layout: R.Layout) -> pd.DataFrame:
    """io_frame of some io records (read with layout); opens and named from
    the whole run."""
    kinds = layout.file_kinds()
    names = syscalls.traced(layout)
    letters = cpu_type_letters(layout)
    df = pd.DataFrame({
        "ts_ns": io["ts_ns"].astype(np.int64),
        "pid": io["pid"].astype(np.int64),
        "tid": io["tid"].astype(np.int64),
        "syscall": pd.Categorical([names.get(int(x), str(x)) for x in io["nr"]]),
        "lat_ns": io["lat_ns"].astype(np.int64),
        "ret": io["ret"].astype(np.int64),
        "fd": io["fd"].astype(np.int64),
        "ino": io["ino"].astype(np.int64),
        "kind": pd.Categorical([kinds.get(int(k), "other") for k in io["kind"]]),
        "in_write": io["in_write"].astype(bool),
        "cpu": io["cpu"].astype(np.int32),
        "cpu_type": [letters.get(int(c), "?") for c in io["cpu_type"]],
        "thread": [c.decode(errors="replace") for c in io["comm"]],
    })
    df["bytes"] = np.where(df["syscall"].isin(syscalls.writes(layout)) & (df["ret"] > 0),
                           df["ret"], 0)
    df = df.sort_values("ts_ns", kind="stable").reset_index(drop=True)
    if len(df) and len(opens):
        df = pd.merge_asof(df, opens, on="ts_ns", by=["pid", "fd"],
                           direction="backward")
        df["path"] = df["path"].fillna("")
        # an fd that now names another file than the one opened at that
        # number (dup2, or a close and reopen nothing saw): the path of the
        # last open of the file the syscall used, by its inode
        moved = df["open_ino"].fillna(0).ne(df["ino"]) & df["open_ino"].fillna(0).gt(0) \
            & df["ino"].gt(0)
        if moved.any():
            by_ino = opens[opens["open_ino"] > 0].rename(
                columns={"open_ino": "ino", "path": "ino_path"})[["ts_ns", "pid", "ino",
                                                                  "ino_path"]]
            got = pd.merge_asof(df.loc[moved, ["ts_ns", "pid", "ino"]].reset_index(),
                                by_ino.sort_values("ts_ns", kind="stable"), on="ts_ns",
                                by=["pid", "ino"], direction="backward").set_index("index")
            df.loc[moved, "path"] = got["ino_path"].fillna("")
        df = df.drop(columns=["open_ino"])
    else:
        df["path"] = ""
    # openat/unlink rows: the path their own record carries
    if len(df) and len(named):
        own = df[["tid", "ts_ns"]].merge(named, how="left", on=["tid", "ts_ns"])["own_path"]
        own.index = df.index
        df["path"] = own.where(own.notna() & (own != ""), df["path"])
    return df
