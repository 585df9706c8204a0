"""A fleet's runs as one dataset: export, versions, and the named queries
against an independent computation (pandas) on synthetic runs; on real
traced runs, DuckDB and Spark return the same rows for every query, and
every SQL example in the docs runs."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import engines
from analysis import dataset as D
from analysis import query as Q
from analysis.compensation import Calibration
from analysis.writes import writes_frame_from
from tests.conftest import GOLDEN, records_lost

ROOT = Path(__file__).resolve().parent.parent


VERSIONS = {"rocksdb": "7.8.3", "sqlite": "3.45.1", "postgres": "16.4"}


def synthetic_run(d: Path, seed: int, n: int = 400, engine: str = "rocksdb") -> Path:
    """A run folder from write records made here: writes.parquet (through
    the real record layout and frame builder) and summary.json.  RocksDB's
    rows have time in four components, half the queue behind a sync; other
    engines' in every component, and most of it in a queue (if the engine
    has one) behind a sync."""
    rng = np.random.default_rng(seed)
    unit = engines.get(engine)
    a = np.zeros(n, dtype=GOLDEN.struct_dtype("ws_write_rec"))
    a["rec_type"] = GOLDEN.enum_values("ws_rec_type")["WS_REC_WRITE"]
    a["engine"] = GOLDEN.enum_values("ws_engine")[unit.ws_engine]
    comps = GOLDEN.components(engine)
    for c in ("queue", "wal_sync_io", "memtable", "other") if engine == "rocksdb" else comps:
        a["comp_ns"][:, comps.index(c)] = rng.integers(1_000, 200_000, n)
    if unit.queue:
        q = comps.index(unit.queue)
        if engine != "rocksdb":
            a["comp_ns"][:, q] *= 20
        a["q_behind_sync_ns"] = a["comp_ns"][:, q] // (2 if engine == "rocksdb" else 1)
    a["dur_ns"] = a["comp_ns"].sum(axis=1)
    a["start_ns"] = np.arange(n) * 1000
    a["flags"] = rng.integers(0, 2, n)
    d.mkdir(parents=True)
    writes_frame_from(a, Calibration(), engine, layout=GOLDEN).to_parquet(
        d / "writes.parquet", index=False)
    (d / "summary.json").write_text(json.dumps({
        "engine": engine, "mode": "full", "command": ["db_bench", f"--seed={seed}"],
        "writes": {"count": n, "duration_adj": {"mean_ns": 1.0, "p99_ns": 2.0}},
        "components": {unit.components[0].name: {"sum_ns": 100, "overhead_ns": 10}},
        "lost_events": {"write": 0}, "tracking_gaps": {}, "engines_found": [engine],
        "objects": [{"engine": engine, "version": VERSIONS.get(engine, "1.0")}],
        "environment": {"kernel": "6.18", "cpu_model": "test", "host": "ignored",
                        "walscope_commit": "abc123"}}))
    return d


@pytest.fixture
def fleet(tmp_path):
    ds = tmp_path / "ds"
    for i, host in enumerate(("h1", "h1", "h2")):
        run = synthetic_run(tmp_path / f"run{i}", seed=i)
        D.export(run, ds, host=host, run=f"r{i}")
    return ds


def test_export_is_hive_partitioned_and_versioned(fleet):
    parts = sorted(str(p.relative_to(fleet)) for p in D.files(fleet))
    assert "table=writes/host=h1/run=r0/part-0.parquet" in parts
    assert "table=runs/host=h2/run=r2/part-0.parquet" in parts
    meta = pq.read_schema(fleet / "table=writes/host=h1/run=r0/part-0.parquet").metadata
    assert meta[D.META_VERSION] == D.SCHEMA_VERSION.encode()
    assert meta[D.META_COMMIT] == b"abc123"
    runs = pq.read_table(fleet / "table=runs/host=h1/run=r1/part-0.parquet").to_pandas()
    assert runs.loc[0, "kernel"] == "6.18" and runs.loc[0, "rocksdb_version"] == "7.8.3"
    assert "host" not in runs.columns   # it is the partition's
    # a version the run had none of is a string too: Spark merges it with
    # another run's (a column typed null it refuses)
    schema = pq.read_schema(fleet / "table=runs/host=h1/run=r1/part-0.parquet")
    assert {schema.field(D.version_column(e.name)).type for e in engines.ENGINES} == \
        {pa.string()}
    assert D.check_versions(fleet) == ["runs", "writes"]


def test_exporting_again_replaces_the_partition(fleet, tmp_path):
    D.export(synthetic_run(tmp_path / "again", seed=9, n=7), fleet, host="h1", run="r0")
    df = Q.run_duckdb(fleet, "SELECT count(*) AS n FROM writes WHERE host = 'h1' AND run = 'r0'")
    assert df["n"].tolist() == [7]


def test_a_newer_major_version_is_refused_in_one_line(fleet):
    f = fleet / "table=writes/host=h9/run=x/part-0.parquet"
    f.parent.mkdir(parents=True)
    t = pa.table({"dur_ns": [1]}).replace_schema_metadata({D.META_VERSION: b"2.0"})
    pq.write_table(t, f)
    with pytest.raises(D.DatasetError, match="schema 2.0, newer than .* upgrade walscope"):
        D.check_versions(fleet)


def test_named_queries_against_pandas(fleet):
    """Each query's numbers, computed again by hand from the Parquet files."""
    w = pd.concat([pd.read_parquet(p).assign(host=p.parts[-3][5:], run=p.parts[-2][4:])
                   for p in sorted(fleet.glob("table=writes/*/*/*.parquet"))])
    got = Q.run_duckdb(fleet, "components_per_run")
    want = w.groupby(["host", "run", "engine"], as_index=False).agg(
        writes=("dur_ns", "size"), mean_us=("dur_adj_ns", "mean"),
        queue_us=("queue_adj_ns", "mean"))
    assert got[["host", "run", "engine", "writes"]].values.tolist() == \
        want[["host", "run", "engine", "writes"]].values.tolist()
    assert np.allclose(got["mean_us"], want["mean_us"] / 1e3)
    assert np.allclose(got["queue_us"], want["queue_us"] / 1e3)
    tail = Q.run_duckdb(fleet, "p99_tail")
    for _, row in tail.iterrows():
        d = w[(w["host"] == row["host"]) & (w["run"] == row["run"])]
        p99 = np.percentile(d["dur_adj_ns"], 99)   # linear, as percentile_cont
        assert row["p99_us"] == pytest.approx(p99 / 1e3)
        t = d[d["dur_adj_ns"] >= p99]
        assert row["tail_writes"] == len(t)
        assert row["behind_sync_us"] == pytest.approx(t["queue_behind_sync_ns"].mean() / 1e3)
    dom = Q.run_duckdb(fleet, "queue_behind_sync")
    for _, row in dom.iterrows():
        d = w[(w["host"] == row["host"]) & (w["run"] == row["run"])]
        assert row["behind_sync_share"] == pytest.approx(
            d["queue_behind_sync_ns"].sum() / d["dur_ns"].sum())
    runs = Q.run_duckdb(fleet, "overhead_and_losses")
    assert runs["host"].tolist() == ["h1", "h1", "h2"] and (runs["writes"] == 400).all()


def test_every_query_is_named_and_described():
    assert set(Q.names()) >= {"components_per_run", "p99_tail", "queue_behind_sync",
                              "overhead_and_losses"}
    for n in Q.names():
        assert Q.describe(n) and not Q.describe(n).startswith("SELECT")
    with pytest.raises(Q.QueryError, match="no query named"):
        Q.sql("nope")


def test_the_cli_exports_and_queries(fleet, tmp_path, capsys):
    from runners.command import walscope
    ds = tmp_path / "ds2"
    assert walscope.main(["export", str(tmp_path / "run0"), str(tmp_path / "run1"), str(ds),
                          "--host", "web 1"]) == 0
    assert walscope.main(["query", "components_per_run", str(ds), "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert "web_1,run0,rocksdb,400" in out and "web_1,run1,rocksdb,400" in out
    assert walscope.main(["query", "p99_tail", str(ds), "--format", "parquet",
                          "-o", str(tmp_path / "t.parquet")]) == 0
    assert len(pd.read_parquet(tmp_path / "t.parquet")) == 2
    assert walscope.main(["query", "components_per_run", str(tmp_path / "empty")]) == 1
    assert "no walscope dataset here" in capsys.readouterr().err


def sql_examples() -> list[tuple[str, str]]:
    """(file, SQL) of every ```sql block of README.md and docs/."""
    out = []
    for f in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        out += [(f.name, s) for s in re.findall(r"```sql\n(.*?)```", f.read_text(), re.S)]
    return out


def test_the_documented_sql_runs(fleet):
    """Every SQL example the docs show runs on a dataset with DuckDB."""
    examples = sql_examples()
    assert examples
    for where, text in examples:
        df = Q.run_duckdb(fleet, text)
        assert len(df), f"{where}: {text[:80]}"


@pytest.fixture(scope="module")
def real_fleet(tmp_path_factory):
    """Two real traced runs (synced, 2 and 4 threads) under two hosts."""
    from tests.conftest import run_trace
    base = tmp_path_factory.mktemp("fleet")
    ds = base / "ds"
    for host, threads in (("h1", 2), ("h2", 4)):
        out = base / f"run-{host}"
        p = run_trace(["-q", "--mode", "full", "-o", str(out), "--dataset", str(ds), "--host", host, "--",
                       "db_bench", f"--db={base}/db-{host}", "--benchmarks=fillrandom",
                       "--num=700", f"--threads={threads}", "--sync=true"])
        assert p.returncode == 0, p.stderr[-2000:]
    return ds


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark", reason="Spark is an extra (walscope[spark]): "
                        "`make venv-spark` or ./setup.sh --test installs it")
    s = Q.spark_session()
    yield s
    s.stop()


def same_rows(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    assert len(a) == len(b) and len(a)
    for c in a.columns:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        if pd.api.types.is_numeric_dtype(a[c]) and pd.api.types.is_numeric_dtype(b[c]):
            assert np.allclose(x.astype(float), y.astype(float), rtol=1e-9, equal_nan=True), c
        else:   # a null is a null, whichever way the engine hands it over
            show = lambda v: "<null>" if pd.isna(v) else str(v)  # noqa: E731
            assert [show(v) for v in x] == [show(v) for v in y], c


@pytest.mark.root
def test_duckdb_and_spark_return_the_same_rows(real_fleet, spark):
    """Every named query, and every documented example, on both engines."""
    assert sorted(p.name for p in (real_fleet / "table=writes").iterdir()) == \
        ["host=h1", "host=h2"]
    con = Q.duckdb_connection(real_fleet)
    for name in Q.names():
        same_rows(Q.run_duckdb(real_fleet, name, con), Q.run_spark(str(real_fleet), name, spark))
    for where, text in sql_examples():
        same_rows(Q.run_duckdb(real_fleet, text, con), Q.run_spark(str(real_fleet), text, spark))
    runs = Q.run_duckdb(real_fleet, "overhead_and_losses", con)
    assert runs["host"].tolist() == ["h1", "h2"] and (runs["writes"] > 0).all()
    assert runs["rocksdb_version"].notna().all()
    # every loss each run's summary.json counted, and no record lost (a
    # stack-map miss, a hash-bucket collision that depends on the boot's
    # kernel addresses, loses no record: conftest.records_lost)
    summaries = [json.loads((real_fleet.parent / f"run-{h}" / "summary.json").read_text())
                 for h in runs["host"]]
    assert runs["lost_events"].tolist() == [sum(s["lost_events"].values()) for s in summaries]
    assert [records_lost(s) for s in summaries] == [0, 0]


def test_the_fleet_report_draws_the_queries(fleet, tmp_path):
    from viz import report
    out = tmp_path / "fleet.html"
    assert report.main(["--dataset", str(fleet), "-o", str(out)]) == 0
    page = out.read_text()
    assert not re.search(r'<script[^>]+src=', page)   # self-contained
    data = json.loads(re.search(r'<script id="walscope-data" type="application/json">'
                                r'(.*?)</script>', page, re.S).group(1))
    want = Q.run_duckdb(fleet, "components_per_run")
    assert [(r["host"], r["run"]) for r in data["components_per_run"]] == \
        list(zip(want["host"], want["run"]))
    assert np.allclose([r["mean_us"] for r in data["components_per_run"]], want["mean_us"])
    assert "3 runs on 2 hosts" in page
    assert report.main(["--dataset", str(tmp_path / "none"), "-o", str(out)]) == 1
