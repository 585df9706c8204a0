"""RocksDB's own report, as db_bench prints it: per-benchmark throughput and
percentiles, ``--statistics`` tickers and histograms, and the seeds'
derived metrics (stdlib only: the registry's units import nothing of
walscope's)."""
from __future__ import annotations

import re
from typing import Any

BENCH = re.compile(r"^(\w+)\s+:\s+([\d.]+) micros/op (\d+) ops/sec ([\d.]+) seconds (\d+) operations")
PCT = re.compile(r"^Percentiles: P50: ([\d.]+) P75: ([\d.]+) P99: ([\d.]+) P99\.9: ([\d.]+)")
TICKER = re.compile(r"^(rocksdb\.[\w.]+) COUNT : (\d+)$")
# runners/workloads/zipf_writer's own lines (db_bench has no such report)
LAST_LEVEL = re.compile(r"^last_level_byte_ratio \((reads|stored)\): ([\d.]+)")
HIST = re.compile(r"^(rocksdb\.[\w.]+) P50 : ([\d.]+) P95 : ([\d.]+) P99 : ([\d.]+) "
                  r"P100 : ([\d.]+) COUNT : (\d+) SUM : (\d+)")

# db_bench's (and zipf_writer's) benchmarks that write
WRITE_BENCHMARKS = ("fill", "overwrite", "update", "merge")


def parse(text: str) -> dict[str, Any]:
    benches: list[dict[str, Any]] = []
    tickers: dict[str, int] = {}
    hists: dict[str, dict[str, float]] = {}
    extra: dict[str, float] = {}
    for line in text.splitlines():
        line = line.strip()
        m = BENCH.match(line)
        if m:
            benches.append({"benchmark": m.group(1), "micros_op": float(m.group(2)),
                            "ops_sec": int(m.group(3)), "seconds": float(m.group(4)),
                            "operations": int(m.group(5))})
            continue
        m = PCT.match(line)
        if m and benches:
            benches[-1].update(p50_us=float(m.group(1)), p75_us=float(m.group(2)),
                               p99_us=float(m.group(3)), p999_us=float(m.group(4)))
            continue
        m = LAST_LEVEL.match(line)
        if m:
            extra[f"last_level_byte_ratio_{m.group(1)}"] = float(m.group(2))
            continue
        m = TICKER.match(line)
        if m:
            tickers[m.group(1)] = int(m.group(2))
            continue
        m = HIST.match(line)
        if m:
            hists[m.group(1)] = {"p50": float(m.group(2)), "p95": float(m.group(3)),
                                 "p99": float(m.group(4)), "p100": float(m.group(5)),
                                 "count": int(m.group(6)), "sum": int(m.group(7))}
    return {"benchmarks": benches, "tickers": tickers, "histograms": hists,
            "extra": extra}


def derived(p: dict[str, Any]) -> dict[str, float | None]:
    t = p["tickers"]
    written = t.get("rocksdb.bytes.written", 0)
    flush = t.get("rocksdb.flush.write.bytes", 0)
    compact = t.get("rocksdb.compact.write.bytes", 0)
    wal = t.get("rocksdb.wal.bytes", 0)
    last = t.get("rocksdb.last.level.read.bytes")
    non_last = t.get("rocksdb.non.last.level.read.bytes")
    return {
        # seed 003's metric: last-level share of the bytes read
        "last_level_byte_ratio": (last / (last + non_last)
                                  if last is not None and non_last is not None
                                  and last + non_last else None),
        "last_level_stored_ratio": p.get("extra", {}).get("last_level_byte_ratio_stored"),
        "write_amplification": (flush + compact + wal) / written if written else None,
        "flush_bytes": flush, "compaction_bytes": compact, "wal_bytes": wal,
        "bytes_written": written,
        "wal_synced": t.get("rocksdb.wal.synced"),
        "write_self": t.get("rocksdb.write.self"), "write_other": t.get("rocksdb.write.other"),
        "last_level_read_bytes": last,
    }


def throughput(command_output: str) -> dict[str, Any] | None:
    """db_bench's write benchmarks' operations over their seconds (reads
    left out), as the workload printed them; None if it printed none."""
    benches = [b for b in parse(command_output)["benchmarks"]
               if b["benchmark"].startswith(WRITE_BENCHMARKS)]
    secs = sum(b["seconds"] for b in benches)
    if not benches or secs <= 0:
        return None
    return {"ops_per_s": sum(b["operations"] for b in benches) / secs,
            "source": "the workload's report: " + ", ".join(
                f"{b['benchmark']} {b['ops_sec']} ops/s" for b in benches),
            "benchmarks": benches}
