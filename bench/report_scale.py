#!/usr/bin/env python3
"""How long viz/report.py takes, and how big its page gets, for N write records.

    bench/report_scale.py [--writes 1000000] [--scenarios 2]

Takes a real run folder (made here with a short traced db_bench run unless
--template is given) and scales its writes.parquet up to N rows per scenario
by resampling rows and spreading their start times, then times report.build.
Goal (issue 6): 1M records in under 15 s, HTML under 20 MB.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402

in_venv(str(ROOT / "trace_wal.py"), __file__)   # sudo bench/x.py: .venv's Python
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from bench.template import traced_db_bench  # noqa: E402
from viz import report  # noqa: E402


def scaled(template: Path, dst: Path, n: int, seed: int) -> None:
    shutil.copytree(template, dst)
    w = pd.read_parquet(template / "writes.parquet")
    rng = np.random.default_rng(seed)
    big = w.iloc[rng.integers(0, len(w), n)].reset_index(drop=True)
    span = int(w["start_ns"].max() - w["start_ns"].min()) or 1
    big["start_ns"] = w["start_ns"].min() + np.sort(rng.integers(0, span * (n // len(w) + 1), n))
    big.to_parquet(dst / "writes.parquet", index=False)
    s = json.loads((dst / "summary.json").read_text())
    s["writes"]["count"] = n
    (dst / "summary.json").write_text(json.dumps(s))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writes", type=int, default=1_000_000)
    ap.add_argument("--scenarios", type=int, default=2)
    ap.add_argument("--template", type=Path, help="a run folder to scale up")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="walscope-report-") as t:
        tmp = Path(t)
        tpl = a.template or traced_db_bench(tmp, "--num=2000", "--threads=2", "--sync=true")
        runs = []
        for i in range(a.scenarios):
            d = tmp / "m" / f"scenario{i}"
            d.parent.mkdir(exist_ok=True)
            scaled(tpl, d, a.writes, i)
            runs.append(d)
        out = tmp / "report.html"
        t0 = time.perf_counter()
        report.build(report.find_runs(runs), out)
        took = time.perf_counter() - t0
        size = out.stat().st_size
    print(f"{a.scenarios} scenarios x {a.writes} writes: report in {took:.1f} s, "
          f"{size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
