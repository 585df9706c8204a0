#!/usr/bin/env python3
"""How long a process that dlopen()s RocksDB is held, and what is missed.

    sudo bench/dlopen_hold.py [--runs 20] [--writes 200]

Each run traces `rocks_c copy` (tests/engines/rocks_c.c: copy librocksdb to
a fresh temporary path, dlopen() it, N synced puts at once).  From the run's
summary.json objects entry for that library: from the mmap that the BPF
side stopped the process at, to its probes attached (attached_ns -
seen_ns) and to the process continued (held_ns); and the writes traced
against the N the program made (missed = N - traced, which the hold must
keep at 0).  Results: bench/results/dlopen_hold.{json,md}.
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
LIB = "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8"


def one(work: Path, i: int, n: int) -> dict:
    out = work / f"run{i}"
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), str(ROOT / "trace_wal.py"),
                        "-q", "-o", str(out), "--", str(ROOT / ".output" / "rocks_c"), "copy",
                        LIB, str(work / f"db{i}"), str(n)], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"dlopen_hold: run {i} failed: {p.stderr.strip()[-500:]}")
    s = json.loads((out / "summary.json").read_text())
    lib = next(o for o in s["objects"] if o["engine"] == "rocksdb")
    return {"attach_ms": (lib["attached_ns"] - lib["seen_ns"]) / 1e6,
            "held_ms": lib["held_ns"] / 1e6, "writes": s["writes"]["count"],
            "missed": n - s["writes"]["count"],
            "other_objects_held_ms": sum((o["held_ns"] or 0) for o in s["objects"]
                                         if o["engine"] is None) / 1e6}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="walscope-dlopen-") as t:
        rows = [one(Path(t), i, a.writes) for i in range(a.runs)]
    for r in rows:
        print(json.dumps(r), file=sys.stderr)
    col = lambda k: [r[k] for r in rows]  # noqa: E731
    text = "\n".join([
        f"dlopen of a fresh copy of librocksdb, {a.runs} runs, {a.writes} synced puts each",
        "", "| figure | median | max |", "|---|---|---|",
        f"| mmap to probes attached (ms) | {statistics.median(col('attach_ms')):.1f} | "
        f"{max(col('attach_ms')):.1f} |",
        f"| process held at librocksdb (ms) | {statistics.median(col('held_ms')):.1f} | "
        f"{max(col('held_ms')):.1f} |",
        f"| held at its other new objects, summed (ms) | "
        f"{statistics.median(col('other_objects_held_ms')):.1f} | "
        f"{max(col('other_objects_held_ms')):.1f} |",
        f"| writes missed | {statistics.median(col('missed')):.0f} | {max(col('missed'))} |",
    ])
    print(text)
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / "dlopen_hold.json").write_text(json.dumps(rows, indent=1) + "\n")
    (a.output / "dlopen_hold.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
