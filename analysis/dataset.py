"""Many hosts' runs as one dataset: a Hive-partitioned tree of Parquet.

    DATASET/table=writes/host=H/run=R/part-0.parquet
    DATASET/table=io/...   table=sched/...   table=samples/...   table=threads/...
    DATASET/table=runs/host=H/run=R/part-0.parquet    (one row per run)

DuckDB, Spark, Trino and pandas discover `host` and `run` from the paths.
Every file carries, in its Parquet key-value metadata, the dataset schema
version and the walscope commit that wrote it; a reader refuses a newer
major version (``check_versions``).  Exporting a run again replaces its
partitions, so a fleet can export continuously.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import engines
from analysis.table import overhead_removed_ns
from runfolder.files import TABLES, RunFolder

# major.minor: a minor adds columns or tables, a major changes or removes
SCHEMA_VERSION = "1.1"     # 1.1: runs.postgres_version
META_VERSION = b"walscope.schema_version"
META_COMMIT = b"walscope.commit"
META_TABLE = b"walscope.table"
# TABLES (runfolder.files): the run folder's Parquet files, which
# become tables of the dataset
RUNS = "runs"
PART = "part-0.parquet"
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


class DatasetError(RuntimeError):
    """A dataset or run folder that cannot be used: one line."""


def partition_value(text: str) -> str:
    """A host or run name as a path segment (no '/', '=' or spaces)."""
    return _SAFE.sub("_", text) or "_"


def version_column(engine: str) -> str:
    """The runs table's column of an engine's version (as its resolver read
    it from the object), one per engine of the registry."""
    return f"{engine}_version"


def run_row(summary: dict[str, Any], host: str, run: str) -> dict[str, Any]:
    """The runs table's row: what a fleet query groups and filters by."""
    env = summary.get("environment", {})
    w = summary.get("writes", {})
    d = w.get("duration_adj", {})
    versions = {o["engine"]: o.get("version") for o in summary.get("objects", [])
                if o.get("engine")}
    comps = summary.get("components", {})
    total = sum(c.get("sum_ns", 0) for c in comps.values()) or 0
    over = sum(c.get("overhead_ns", 0) for c in comps.values())
    lost = sum(v for v in summary.get("lost_events", {}).values() if v)
    gaps = sum(v for v in summary.get("tracking_gaps", {}).values() if v)
    return {
        "host": host, "run": run,
        "started_utc": summary.get("started_utc"),
        "elapsed_s": summary.get("elapsed_s"),
        "command": " ".join(summary.get("command") or []) or None,
        "mode": summary.get("mode"),
        "engine": summary.get("engine"),
        "engines": ",".join(summary.get("engines_found", [])) or None,
        "kernel": env.get("kernel"),
        "machine": env.get("machine"),
        "cpu_model": env.get("cpu_model"),
        "cpu_types": env.get("cpu_types"),
        **{version_column(e.name): versions.get(e.name) for e in engines.ENGINES},
        "library": env.get("library"),
        "writes": w.get("count", 0),
        "mean_ns": d.get("mean_ns"),
        "p50_ns": d.get("p50_ns"),
        "p99_ns": d.get("p99_ns"),
        "p999_ns": d.get("p999_ns"),
        "probe_overhead_ns": over,
        "overhead_per_write_ns": overhead_removed_ns(summary) if w.get("count") else None,
        "overhead_share": over / (total + over) if total + over else None,
        "lost_events": lost,
        "tracking_gaps": gaps,
        "partial_run": bool(summary.get("partial_run")),
        "exit_code": summary.get("exit_code"),
        "walscope_commit": env.get("walscope_commit"),
    }


def runs_table(row: dict[str, Any]) -> pa.Table:
    """The runs table's row as a table.  Every engine's version is a string,
    also where the run had none of that engine: a column of nulls would be
    typed null, which Spark does not merge with another run's string."""
    t = pa.Table.from_pylist([row])
    for e in engines.ENGINES:
        c = version_column(e.name)
        t = t.set_column(t.schema.get_field_index(c), c, t.column(c).cast(pa.string()))
    return t


def _metadata(table: str, commit: str | None) -> dict[bytes, bytes]:
    return {META_VERSION: SCHEMA_VERSION.encode(), META_COMMIT: (commit or "unknown").encode(),
            META_TABLE: table.encode()}


def _write_table(src: pa.Table | pq.ParquetFile, dst: Path, meta: dict[bytes, bytes]) -> int:
    """dst (atomically replaced) with src's rows, a row group at a time."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_suffix(".tmp")
    rows = 0
    if isinstance(src, pa.Table):
        schema = src.schema.with_metadata({**(src.schema.metadata or {}), **meta})
        pq.write_table(src.replace_schema_metadata(schema.metadata), tmp)
        rows = src.num_rows
    else:
        schema = src.schema_arrow
        schema = schema.with_metadata({**(schema.metadata or {}), **meta})
        with pq.ParquetWriter(tmp, schema) as writer:
            for g in range(src.metadata.num_row_groups):
                t = src.read_row_group(g)
                writer.write_table(t.replace_schema_metadata(schema.metadata))
                rows += t.num_rows
    tmp.replace(dst)
    return rows


def export(run_dir: Path, dataset: Path, host: str | None = None,
           run: str | None = None) -> dict[str, int]:
    """Copy an analysed run folder into the dataset; returns rows per table."""
    run_dir, dataset = Path(run_dir), Path(dataset)
    try:
        summary = RunFolder(run_dir).summary()
    except FileNotFoundError:
        raise DatasetError(f"{run_dir}: not an analysed run folder (no summary.json: "
                           f"walscope analyse {run_dir})") from None
    except ValueError as e:
        raise DatasetError(f"{run_dir}/summary.json: unreadable ({e})") from None
    env = summary.get("environment", {})
    host = partition_value(host or env.get("host") or "unknown")
    run = partition_value(run or run_dir.name)
    commit = env.get("walscope_commit")
    out: dict[str, int] = {}
    for table in TABLES:
        src = RunFolder(run_dir).table(table)
        if src.exists():
            out[table] = _write_table(pq.ParquetFile(src), part_path(dataset, table, host, run),
                                      _metadata(table, commit))
    row = runs_table(run_row(summary, host, run))
    # host and run are the partition's, in its path: not columns of the file
    row = row.drop_columns(["host", "run"])
    out[RUNS] = _write_table(row, part_path(dataset, RUNS, host, run), _metadata(RUNS, commit))
    return out


def part_path(dataset: Path, table: str, host: str, run: str) -> Path:
    return Path(dataset) / f"table={table}" / f"host={host}" / f"run={run}" / PART


def files(dataset: Path) -> list[Path]:
    return sorted(Path(dataset).glob("table=*/host=*/run=*/*.parquet"))


def check_versions(dataset: Path) -> list[str]:
    """Tables present; refuses (DatasetError) a file of a newer major
    schema version, or a folder that is no dataset."""
    found = files(dataset)
    if not found:
        raise DatasetError(f"{dataset}: no walscope dataset here (table=*/host=*/run=*/"
                           "*.parquet); make one with `walscope export RUN... DATASET`")
    major = int(SCHEMA_VERSION.split(".")[0])
    tables = set()
    for f in found:
        meta = pq.read_schema(f).metadata or {}
        v = meta.get(META_VERSION, b"0").decode()
        try:
            theirs = int(v.split(".")[0])
        except ValueError:
            raise DatasetError(f"{f}: unreadable schema version {v!r}") from None
        if theirs > major:
            raise DatasetError(f"{f}: written with dataset schema {v}, newer than this "
                               f"walscope's {SCHEMA_VERSION}: upgrade walscope to read it")
        tables.add(f.parent.parent.parent.name.split("=", 1)[1])
    return sorted(tables)
