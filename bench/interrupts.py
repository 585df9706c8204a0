#!/usr/bin/env python3
"""SIGINT to trace_wal from a script, at moments over its start-up, many
times each: how often it exits 130 with summary.json's exit_code 130 (or
no folder) and no workload left running.

A script's `trace_wal ... &` starts with SIGINT ignored and its
`kill -INT $!` reaches trace_wal alone; this does the same with each way
trace_wal starts (the system's Python on trace_wal.py, which moves into
.venv by exec; .venv's Python on it; the console script).  The test suite
tries each moment once (tests/test_faults.py); this tries --tries times.

    sudo bench/interrupts.py [--tries 10] [--moments 0.1,0.3,0.6,1,2,4]

Writes bench/results/interrupts.{json,md}.
"""
from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402

in_venv(str(ROOT / "trace_wal.py"), __file__)   # sudo bench/x.py: .venv's Python

RESULTS = ROOT / "bench" / "results"
STARTS = {"python3 trace_wal.py": ["/usr/bin/python3", str(ROOT / "trace_wal.py")],
          ".venv python trace_wal.py": [str(ROOT / ".venv/bin/python"), str(ROOT / "trace_wal.py")],
          "trace_wal (console script)": [str(ROOT / ".venv/bin/trace_wal")]}
WORKLOAD = ["db_bench", "--benchmarks=fillrandom", "--num=100000000", "--sync=true",
            "--threads=2"]


def running(pattern: str) -> bool:
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True).returncode == 0


def one(start: list[str], moment: float, tmp: Path) -> dict:
    out, db = tmp / "o", f"--db={tmp}/db"
    proc = subprocess.Popen(start + ["-o", str(out), "--", *WORKLOAD, db],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    time.sleep(moment)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    try:
        summary_code = json.loads((out / "summary.json").read_text()).get("exit_code")
    except (OSError, ValueError):
        summary_code = None
    end = time.monotonic() + 30
    while running(db) and time.monotonic() < end:
        time.sleep(0.1)
    orphan = running(db)
    if orphan:
        subprocess.run(["pkill", "-9", "-f", db])
    ok = (proc.returncode == 130 and "Traceback" not in err and not orphan
          and (summary_code == 130 or not out.exists()))
    return {"exit": proc.returncode, "summary_exit_code": summary_code,
            "folder": out.exists(), "orphan": orphan, "traceback": "Traceback" in err, "ok": ok,
            **({} if ok else {"stderr_tail": err[-1500:]})}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tries", type=int, default=10)
    ap.add_argument("--moments", default="0.1,0.3,0.6,1,2,4")
    ap.add_argument("-o", "--out", type=Path, default=RESULTS / "interrupts")
    a = ap.parse_args()
    moments = [float(m) for m in a.moments.split(",")]
    rows = []
    for i in range(a.tries):
        for m in moments:
            name = list(STARTS)[(i + moments.index(m)) % len(STARTS)]
            with tempfile.TemporaryDirectory(prefix="walscope-int-") as tmp:
                r = {"moment_s": m, "start": name, **one(STARTS[name], m, Path(tmp))}
            rows.append(r)
            print(json.dumps(r), flush=True)
    a.out.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
    lines = ["| moment | tries | exit 130 | summary 130 or no folder | orphans | ok |",
             "|---|---|---|---|---|---|"]
    for m in moments:
        rs = [r for r in rows if r["moment_s"] == m]
        lines.append(f"| {m:g} s | {len(rs)} | {sum(r['exit'] == 130 for r in rs)} | "
                     f"{sum(r['summary_exit_code'] == 130 or not r['folder'] for r in rs)} | "
                     f"{sum(r['orphan'] for r in rs)} | {sum(r['ok'] for r in rs)} |")
    a.out.with_suffix(".md").write_text(
        "# SIGINT from a script at moments over start-up\n\n"
        f"`sudo bench/interrupts.py --tries {a.tries}` (each way of starting in turn)\n\n"
        + "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
