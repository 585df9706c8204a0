"""A real traced run for benchmarks that scale one up (analysis memory,
the report, the dataset queries): db_bench fillrandom under trace_wal.py."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def traced_db_bench(work: Path, *db_bench_args: str, mode: str = "full") -> Path:
    """work/template: the run folder of `db_bench --benchmarks=fillrandom
    ARGS` traced in mode; exits with the tracer's last words if it fails."""
    out = work / "template"
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), str(ROOT / "trace_wal.py"),
                        "-q", "--mode", mode, "-o", str(out), "--", "db_bench",
                        f"--db={work}/db", "--benchmarks=fillrandom", *db_bench_args],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"template run failed: {p.stderr.strip()[-300:]}")
    return out
