"""Named queries over a dataset (analysis/dataset.py), one SQL text for
every engine: DuckDB embedded (the default), or Spark for a fleet.

The queries live in analysis/queries/NAME.sql; their first line is a
``-- description``.  Each table of the dataset is a view of the same name
(writes, io, sched, samples, threads, runs) with ``host`` and ``run`` from
its partitions, and every engine's columns (components, versions) that
no file holds, as NULL (analysis/query_columns.py).  The SQL keeps to
what both engines read the same way (standard ordered-set aggregates such
as ``percentile_cont(0.99) WITHIN GROUP (ORDER BY ...)``, ``greatest``,
which skips NULLs in both); a test runs every query on both and compares
the rows.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import dataset as D
from analysis import query_columns as QC

QUERIES = Path(__file__).resolve().parent / "queries"
# DuckDB's memory for one query: results stream from Parquet, so a fleet's
# dataset larger than memory spills rather than grows
DUCKDB_MEMORY = "1GB"


class QueryError(RuntimeError):
    """An unknown query, or one an engine refused: one line."""


def names() -> list[str]:
    return sorted(p.stem for p in QUERIES.glob("*.sql"))


def describe(name: str) -> str:
    return sql(name).splitlines()[0].lstrip("- ").strip()


def sql(name: str) -> str:
    path = QUERIES / f"{name}.sql"
    if not path.exists():
        raise QueryError(f"no query named {name!r} (choose from {', '.join(names())})")
    return path.read_text()


def text_of(name_or_sql: str) -> str:
    """The SQL of a named query, or the SQL given; a lone word that names
    no query is an unknown name, not SQL for the engine to trip on."""
    if name_or_sql in names() or re.fullmatch(r"[\w.-]+", name_or_sql.strip()):
        return sql(name_or_sql.strip())
    return name_or_sql


def duckdb_connection(dataset: Path, memory_limit: str = DUCKDB_MEMORY) -> Any:
    """An in-memory DuckDB with a view per table of the dataset."""
    import duckdb
    tables = D.check_versions(dataset)
    con = duckdb.connect(config={"memory_limit": memory_limit})
    for t in tables:
        glob = str(Path(dataset).resolve() / f"table={t}" / "*" / "*" / "*.parquet")
        files = (f"read_parquet('{glob}', hive_partitioning = true, union_by_name = true, "
                 "hive_types = {'host': VARCHAR, 'run': VARCHAR})")
        present = [d[0] for d in con.execute(f"SELECT * FROM {files} LIMIT 0").description]
        con.execute(f"CREATE VIEW {t} AS SELECT "
                    + ", ".join(["*", *QC.null_columns(t, present)]) + f" FROM {files}")
    return con


def run_duckdb(dataset: Path, name_or_sql: str, con: Any = None) -> pd.DataFrame:
    import duckdb
    text = text_of(name_or_sql)
    con = con or duckdb_connection(dataset)
    try:
        return con.execute(text).df()
    except duckdb.Error as e:
        raise QueryError(f"duckdb: {str(e).splitlines()[0]}") from None


def spark_session(master: str = "local[2]") -> Any:
    """A Spark session for these queries (local, or a cluster's master URL:
    spark://host:7077, yarn, k8s://...)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise QueryError("Spark is an extra: pip install 'walscope[spark]' "
                         "(in a clone: make venv-spark)") from None
    return (SparkSession.builder.master(master).appName("walscope")
            .config("spark.sql.session.timeZone", "UTC")
            # run and host names are names, even when they look like numbers
            .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .getOrCreate())


def spark_views(spark: Any, dataset: str) -> list[str]:
    """A temporary view per table under dataset (a local path, or a URL
    Spark reads: s3a://bucket/walscope, hdfs://...)."""
    local = "://" not in dataset
    tables = D.check_versions(Path(dataset)) if local else list(D.TABLES) + [D.RUNS]
    made = []
    for t in tables:
        try:
            df = spark.read.option("mergeSchema", "true").parquet(f"{dataset}/table={t}")
        except Exception as e:   # a remote table that is not there
            if local:
                raise QueryError(f"spark: {str(e).splitlines()[0]}") from None
            continue
        added = QC.null_columns(t, df.columns)
        (df.selectExpr("*", *added) if added else df).createOrReplaceTempView(t)
        made.append(t)
    return made


def run_spark(dataset: str, name_or_sql: str, spark: Any = None) -> pd.DataFrame:
    text = text_of(name_or_sql)
    spark = spark or spark_session()
    spark_views(spark, str(dataset))
    try:
        return spark.sql(text).toPandas()
    except Exception as e:
        raise QueryError(f"spark: {str(e).splitlines()[0]}") from None
