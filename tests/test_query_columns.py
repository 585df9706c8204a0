"""The named queries and the fleet report follow the engine registry:
every engine's components are their columns and bars, a component added to
a unit reaches them (and leaves the checked-in SQL stale until `make docs`),
and a fleet of RocksDB alone answers as it did before."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import engines
from analysis import components
from analysis import dataset as D
from analysis import query as Q
from analysis import query_columns as QC
from analysis.query_columns import SQL_BLOCKS
from runners import docs
from tests.conftest import GOLDEN
from tests.test_dataset import VERSIONS, synthetic_run
from viz import fleet

# components_per_run's columns on a RocksDB dataset before the registry
# wrote them: they stay first, in this order
ROCKSDB_COLUMNS = ["host", "run", "engine", "writes", "mean_us", "queue_us", "wal_sync_io_us",
                   "wal_write_io_us", "wal_append_us", "crc_us", "memtable_us",
                   "sched_runq_us", "other_us"]


@pytest.fixture
def mixed_fleet(tmp_path: Path) -> Path:
    """One run of each engine, each on its own host."""
    ds = tmp_path / "ds"
    for i, e in enumerate(engines.ENGINES):
        run = synthetic_run(tmp_path / e.name, seed=i, n=200, engine=e.name)
        D.export(run, ds, host=f"h-{e.name}", run="r")
    return ds


@pytest.fixture
def rocksdb_fleet(tmp_path: Path) -> Path:
    ds = tmp_path / "ds"
    for i in range(2):
        D.export(synthetic_run(tmp_path / f"run{i}", seed=i, n=200), ds, host="h", run=f"r{i}")
    return ds


def us(comps: list[str]) -> list[str]:
    return [f"{c}_us" for c in comps]


def test_every_engines_components_are_columns_of_the_queries(mixed_fleet):
    con = Q.duckdb_connection(mixed_fleet)
    per_run = Q.run_duckdb(mixed_fleet, "components_per_run", con)
    tail = Q.run_duckdb(mixed_fleet, "p99_tail", con)
    assert list(per_run.columns[:len(ROCKSDB_COLUMNS)]) == ROCKSDB_COLUMNS
    comps = per_run.columns[ROCKSDB_COLUMNS.index("mean_us") + 1:]
    assert list(comps) == us(components.column_order())
    for e in engines.ENGINES:
        mine, others = us(e.component_names()), us(
            [c for c in components.column_order() if c not in e.component_names()])
        assert set(mine) <= set(tail.columns)
        for df in (per_run, tail):
            row = df[df["host"] == f"h-{e.name}"]
            assert len(row) == 1 and row[mine].notna().all(axis=None), e.name
            assert row[others].isna().all(axis=None), e.name
        # its components add up to its mean
        row = per_run[per_run["engine"] == e.name]
        assert np.allclose(row[mine].sum(axis=1), row["mean_us"])
    runs = Q.run_duckdb(mixed_fleet, "overhead_and_losses", con).set_index("engine")
    for e in engines.ENGINES:
        assert runs.loc[e.name, f"{e.name}_version"] == VERSIONS.get(e.name, "1.0")
    # waiting behind a sync is most of the synthetic rows' time wherever an
    # engine has a queue (RocksDB's is half of its queue: not always)
    dom = Q.run_duckdb(mixed_fleet, "queue_behind_sync", con)
    hosts = set(dom["host"])
    for e in engines.ENGINES:
        if e.name != "rocksdb":
            assert (f"h-{e.name}" in hosts) == (e.queue is not None), e.name


def test_the_fleet_report_draws_every_engines_components(mixed_fleet, tmp_path):
    con = Q.duckdb_connection(mixed_fleet)
    for name in ("components_per_run", "p99_tail"):
        bars = fleet.component_bars(Q.run_duckdb(mixed_fleet, name, con), "", "")
        assert [b.name for b in bars.data] == components.column_order()
    page = tmp_path / "fleet.html"
    fleet.build(mixed_fleet, page)
    for c in components.column_order():
        assert f'"name":"{c}"' in page.read_text()


def test_a_rocksdb_fleet_answers_as_before(rocksdb_fleet):
    """No SQLite or PostgreSQL file: their columns come from the views, as
    NULL; the report draws RocksDB's alone."""
    per_run = Q.run_duckdb(rocksdb_fleet, "components_per_run")
    assert list(per_run.columns[:len(ROCKSDB_COLUMNS)]) == ROCKSDB_COLUMNS
    assert per_run[per_run.columns[len(ROCKSDB_COLUMNS):]].isna().all(axis=None)
    tail = Q.run_duckdb(rocksdb_fleet, "p99_tail")
    assert fleet.drawn_components(tail) == engines.get("rocksdb").component_names()
    runs = Q.run_duckdb(rocksdb_fleet, "overhead_and_losses")
    assert runs["postgres_version"].isna().all() and runs["rocksdb_version"].notna().all()


def test_a_component_added_to_a_unit_reaches_the_queries_and_the_report(
        monkeypatch, rocksdb_fleet):
    sqlite = engines.get("sqlite")
    more = dataclasses.replace(sqlite, components=sqlite.components + (
        engines.Component("made_up", "#000000", "a test's"),))
    monkeypatch.setattr(engines, "ENGINES",
                        tuple(more if e is sqlite else e for e in engines.ENGINES))
    # the checked-in queries that list components are stale now
    sql = [Q.QUERIES / f"{n}.sql" for n in Q.names()]
    assert docs.stale(sql, layout=GOLDEN) == [
        f"analysis/queries/{n}.sql"
        for n in ("components_per_run", "p99_tail", "queue_behind_sync")]
    for name in ("components_per_run", "p99_tail"):
        text = docs.render(Q.sql(name), set(SQL_BLOCKS))
        assert "       avg(made_up_adj_ns) / 1e3 AS made_up_us,\n" in text
        df = Q.run_duckdb(rocksdb_fleet, text)   # the writes view has it, as NULL
        # after SQLite's own, before PostgreSQL's
        assert list(df.columns[-len(components.column_order()):]) == \
            us(components.column_order())
        assert df["made_up_us"].isna().all()
        df["made_up_us"] = 1.0   # where a run has it, the report draws it
        assert "made_up" in fleet.drawn_components(df)
    text = docs.render(Q.sql("queue_behind_sync"), set(SQL_BLOCKS))
    assert "sum(made_up_ns),\n" in text
    Q.run_duckdb(rocksdb_fleet, text)


def test_an_engine_added_to_the_registry_gets_a_version_column(monkeypatch, rocksdb_fleet):
    made_up = dataclasses.replace(engines.get("rocksdb"), name="made_up_db")
    monkeypatch.setattr(engines, "ENGINES", (*engines.ENGINES, made_up))
    text = docs.render(Q.sql("overhead_and_losses"), set(SQL_BLOCKS))
    assert ", made_up_db_version\n" in text
    runs = Q.run_duckdb(rocksdb_fleet, text)   # the runs view has it, as NULL
    assert runs.columns[-1] == "made_up_db_version"
    assert runs["made_up_db_version"].isna().all()


def test_blocks_fill_when_empty_and_take_their_marker_indent():
    text = "SELECT a,\n    -- gen:engine_versions\n    -- /gen:engine_versions\nFROM runs\n"
    got = docs.render(text, {"engine_versions"})
    assert got.splitlines()[2] == "    " + QC.engine_versions()
    assert docs.render(got, {"engine_versions"}) == got
    md = "<!-- gen:queries -->\n<!-- /gen:queries -->\n"
    assert "| [`p99_tail`]" in docs.render(md, {"queries"})


def test_the_query_table_leaves_out_columns_no_row_has(rocksdb_fleet, capsys):
    from runners.command import walscope
    assert walscope.main(["query", "components_per_run", str(rocksdb_fleet)]) == 0
    out, err = capsys.readouterr()
    assert out.split("\n")[0].split() == ROCKSDB_COLUMNS
    left = len(components.column_order()) - len(engines.get("rocksdb").component_names())
    assert f"({left} columns with no value in any row left out" in err
    assert walscope.main(["query", "components_per_run", str(rocksdb_fleet),
                          "--format", "csv"]) == 0
    assert capsys.readouterr().out.split("\n")[0].split(",")[-1] == \
        f"{components.column_order()[-1]}_us"
