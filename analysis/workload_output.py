"""The run's throughput as the workload reported it: an engine's own
report in the command's output (each unit's ``report`` module, e.g.
db_bench's), or a workload's transaction log (txlog.json)."""
from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import engines
from runfolder.files import RunFolder


def from_engines(command_output: str) -> dict[str, Any] | None:
    """The first engine report found in the command's output, in the
    registry's order."""
    for e in engines.ENGINES:
        if e.report:
            got = importlib.import_module(e.report).throughput(command_output)
            if got:
                return got
    return None


def throughput(run_dir: Path, writes: int, span_ns: int | None,
               windowed: bool) -> dict[str, Any] | None:
    """The run's throughput as the workload reported it: an engine's
    report in its output (db_bench's write benchmarks), a workload's
    transaction log's transactions/s and tpmC; else writes over the span
    from the first write's start to the last's end (not in window mode,
    whose writes are a sample).  None when there is no telling."""
    folder = RunFolder(run_dir)
    log = folder.command_log
    got = from_engines(log.read_text(errors="replace") if log.exists() else "")
    if got:
        return got
    if folder.txlog_json.exists():
        try:
            meta = json.loads(folder.txlog_json.read_text())
            s = meta["summary"]
            who = meta.get("workload", "the workload's transaction log")
            return {"ops_per_s": s["transactions"] / s["elapsed_s"], "tpmC": s["tpmC"],
                    "source": f"{who}: {s['transactions']} transactions in "
                              f"{s['elapsed_s']:.1f} s, tpmC {s['tpmC']:.0f}"}
        except (ValueError, KeyError, ZeroDivisionError):
            pass
    if writes and span_ns and not windowed:
        return {"ops_per_s": writes / (span_ns / 1e9),
                "source": "writes over the span from the first write's start to the "
                          "last's end"}
    return None
