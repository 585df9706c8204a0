#!/usr/bin/env python3
"""Named queries on a fleet-sized dataset: time and memory with DuckDB.

    sudo bench/dataset_queries.py [--template RUN] [--runs 10] [--writes 1000000]

The dataset holds --runs runs of --writes writes each, on 5 hosts: the
writes of a real traced run (--template, default: a 4-thread synced
db_bench run traced now) repeated, start times shifted, to the size asked.
Each named query then runs in a fresh process (fresh DuckDB, fresh heap):
its wall time and the process's peak resident memory.  Goal (issue 18):
each under 5 s here.  Results: bench/results/dataset_queries.{json,md}.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402

in_venv(str(ROOT / "trace_wal.py"), __file__)
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from analysis import dataset as D  # noqa: E402
from analysis import query as Q  # noqa: E402
from bench.template import traced_db_bench  # noqa: E402


def grown(src: Path, dst: Path, writes: int) -> None:
    """A run folder whose writes.parquet repeats src's to `writes` rows."""
    dst.mkdir(parents=True)
    for f in ("summary.json",):
        (dst / f).write_bytes((src / f).read_bytes())
    t = pq.read_table(src / "writes.parquet")
    span = pc.max(t["start_ns"]).as_py() - pc.min(t["start_ns"]).as_py() + 1
    with pq.ParquetWriter(dst / "writes.parquet", t.schema) as w:
        done, k = 0, 0
        while done < writes:
            part = t.slice(0, min(len(t), writes - done))
            part = part.set_column(part.schema.get_field_index("start_ns"), "start_ns",
                                   pc.add(part["start_ns"], pa.scalar(k * span, pa.int64())))
            w.write_table(part)
            done += len(part)
            k += 1


CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from analysis import query as Q
t = time.monotonic()
df = Q.run_duckdb(Path(sys.argv[2]), sys.argv[3])
print(json.dumps({"seconds": time.monotonic() - t, "rows": len(df),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--template", type=Path)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--writes", type=int, default=1_000_000)
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="walscope-dataset-") as t:
        work = Path(t)
        src = a.template or traced_db_bench(work, "--num=5000", "--threads=4", "--sync=true")
        ds = work / "ds"
        for i in range(a.runs):
            run = work / f"run{i}"
            grown(src, run, a.writes)
            D.export(run, ds, host=f"host{i % 5}", run=f"run{i}")
            print(f"run {i}: {a.writes} writes", file=sys.stderr)
        size = sum(f.stat().st_size for f in D.files(ds))
        rows = {}
        for name in Q.names():
            p = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-c", CHILD, str(ROOT),
                                str(ds), name], capture_output=True, text=True, check=True)
            rows[name] = json.loads(p.stdout.strip().splitlines()[-1])
            print(name, rows[name], file=sys.stderr)
    lines = [f"DuckDB, {a.runs} runs x {a.writes:,} writes on 5 hosts "
             f"({size / 2**30:.2f} GiB of Parquet), each query in a fresh process", "",
             "| query | seconds | result rows | peak memory (process) |", "|---|---|---|---|"]
    lines += [f"| {n} | {r['seconds']:.2f} | {r['rows']} | {r['peak_rss_mb']} MB |"
              for n, r in rows.items()]
    text = "\n".join(lines)
    print(text)
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / "dataset_queries.json").write_text(json.dumps(
        {"runs": a.runs, "writes": a.writes, "bytes": size, "queries": rows}, indent=1) + "\n")
    (a.output / "dataset_queries.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
