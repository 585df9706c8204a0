#!/usr/bin/env python3
"""What a window costs to open and close: the time to attach and detach the
probe set, per window and per uprobe, against the number of traced
processes (SQLite TPC-C-like clients, 1-4) and of probe sites (RocksDB's
set against SQLite's), from windows.tsv of runs made here.

    sudo bench/window_attach.py [--windows-ms 50] [-o bench/results]

Each run uses windows open half the time so that a short run holds many;
attach_us is from the first program attached to the window open (the
workload runs meanwhile: no write is admitted before), detach_us the
closing of the links, which the collector does side by side.
Writes window_attach.json and window_attach.md.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402

in_venv(str(ROOT / "trace_wal.py"), __file__)   # sudo bench/x.py: .venv's Python

from analysis.windows import read_windows  # noqa: E402

PY = sys.executable   # .venv's where setup.sh made one (trace_wal.py moves there)


def workloads(tmp: Path) -> dict[str, list[str]]:
    out = {"rocksdb db_bench, 1 process": [
        "db_bench", f"--db={tmp}/rdb", "--benchmarks=fillrandom", "--num=400000",
        "--threads=2", "--sync=false"]}
    for n in (1, 2, 4):
        out[f"sqlite tpcc, {n} process{'es' if n > 1 else ''}"] = [
            "python3", "-m", "runners.workloads.sqlite_tpcc", f"--db={tmp}/s{n}/tpcc.db",
            f"--template-dir={tmp}/tpl", "--journal-mode=wal", f"--clients={n}",
            "--duration=4"]
    return out


def measure(name: str, cmd: list[str], tmp: Path, window_ms: int) -> dict:
    rd = tmp / ("run-" + "".join(ch for ch in name if ch.isalnum()))
    p = subprocess.run([PY, str(ROOT / "trace_wal.py"), "-q", "--mode", "window",
                        "--window-ms", str(window_ms), "--window-duty", "0.5",
                        "--allow-empty", "-o", str(rd), "--", *cmd],
                       capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        raise SystemExit(f"{name}: trace_wal.py exited {p.returncode}: {p.stderr[-400:]}")
    w = read_windows(rd)
    return {"windows": len(w), "uprobes": int(w["uprobes"].median()),
            "attach_ms": statistics.median(w["attach_us"]) / 1e3,
            "attach_max_ms": float(w["attach_us"].max()) / 1e3,
            "attach_per_uprobe_us": statistics.median(w["attach_us"] / w["uprobes"]),
            "detach_ms": statistics.median(w["detach_us"]) / 1e3,
            "detach_max_ms": float(w["detach_us"].max()) / 1e3}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--window-ms", type=int, default=50)
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args(argv)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="walscope-winattach-") as t:
        tmp = Path(t)
        for name, cmd in workloads(tmp).items():
            for n in (1, 2, 4):   # the databases' folders
                (tmp / f"s{n}").mkdir(exist_ok=True)
            rows[name] = measure(name, cmd, tmp, a.window_ms)
            print(name, rows[name], flush=True)
    lines = ["| workload | windows | uprobes | attach ms (median, max) | per uprobe us | "
             "detach ms (median, max) |", "|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['windows']} | {r['uprobes']} | {r['attach_ms']:.1f}, "
                     f"{r['attach_max_ms']:.1f} | {r['attach_per_uprobe_us']:.0f} | "
                     f"{r['detach_ms']:.2f}, {r['detach_max_ms']:.2f} |")
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / "window_attach.json").write_text(json.dumps(rows, indent=1) + "\n")
    (a.output / "window_attach.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
