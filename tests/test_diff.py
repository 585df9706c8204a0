"""walscope diff: the decomposition of Δmean and Δp99 on run folders made
here (components that add up, intervals that contain a known shift and
exclude it when there is none, windows resampled whole), its errors, and on
two traced runs, sync=true against sync=false (root tier)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import components
from analysis import diff as D
from analysis import windows as W
from runfolder.files import RunFolder
from runners.command import walscope
from viz import diff as VD
from viz import flamegraph
from tests.conftest import GOLDEN

COMPS = components.names("rocksdb", GOLDEN)


def make_run(d: Path, comps: dict[str, np.ndarray], engine: str = "rocksdb",
             mode: str = "full", starts: np.ndarray | None = None,
             windows: list[tuple[int, int]] | None = None, every_write: bool = False,
             extra_rows: pd.DataFrame | None = None) -> Path:
    """A run folder: writes.parquet whose rows are the given compensated
    components (the others 0) and summary.json; with windows, windows.tsv
    and summary.json's windows (and budget)."""
    n = len(next(iter(comps.values())))
    names = components.names(engine, GOLDEN)
    df = pd.DataFrame({"start_ns": starts if starts is not None else np.arange(n) * 1000})
    for c in names:
        v = np.asarray(comps.get(c, np.zeros(n))).astype(np.int64)
        df[f"{c}_ns"] = v
        df[f"{c}_overhead_ns"] = 0
        df[f"{c}_adj_ns"] = v
    df["dur_adj_ns"] = df[[f"{c}_adj_ns" for c in names]].sum(axis=1)
    df["dur_ns"] = df["dur_adj_ns"]
    df["syscalls"] = 2
    df["untraced_syscalls"] = 0
    df["wal_bytes"] = 100
    df["engine"] = engine
    if extra_rows is not None:
        df = pd.concat([df, extra_rows], ignore_index=True).fillna(0)
    d.mkdir(parents=True)
    df.to_parquet(d / "writes.parquet", index=False)
    s = {"engine": engine, "mode": mode, "command": ["test"],
         "writes": {"count": n}, "wal": {"sync": {"count": n}, "write": {"count": n,
                                                                         "bytes": 100 * n}}}
    if windows:
        RunFolder(d).windows_tsv.write_text("".join(f"open\t{o}\t50\t21\nclose\t{c}\t{c + 10}\t5\t0\n"
                                           for o, c in windows))
        s["windows"] = {"count": len(windows)}
        s["budget"] = {"every_write": every_write}
    (d / "summary.json").write_text(json.dumps(s))
    return d


def exp_comps(rng: np.random.Generator, n: int, shift_sync: float = 0.0
              ) -> dict[str, np.ndarray]:
    return {"queue": rng.exponential(50_000, n),
            "wal_sync_io": rng.exponential(100_000, n) + shift_sync,
            "memtable": rng.normal(8_000, 1_000, n).clip(0),
            "other": rng.exponential(5_000, n)}


def row(rows: list[dict], c: str) -> dict:
    return next(r for r in rows if r["component"] == c)


def test_component_deltas_and_the_residual_add_up_to_the_delta_exactly(tmp_path):
    rng = np.random.default_rng(5)
    a = make_run(tmp_path / "A", exp_comps(rng, 2000))
    b = make_run(tmp_path / "B", exp_comps(rng, 1700, shift_sync=30_000))
    d = D.diff_runs(a, b, boot=200)
    wa = pd.read_parquet(a / "writes.parquet")
    wb = pd.read_parquet(b / "writes.parquet")
    m = d["mean"]
    assert m["delta_ns"] == pytest.approx(wb["dur_adj_ns"].mean() - wa["dur_adj_ns"].mean(),
                                          abs=1e-6)
    total = sum(r["delta_ns"] for r in m["components"]) + m["residual_ns"]
    assert total == pytest.approx(m["delta_ns"], abs=1e-6)
    assert abs(m["residual_ns"]) < 1e-6          # components partition every write
    for c in COMPS:
        assert row(m["components"], c)["delta_ns"] == pytest.approx(
            wb[f"{c}_adj_ns"].mean() - wa[f"{c}_adj_ns"].mean(), abs=1e-6)
    # the p99 is np.percentile's; the band's components add up to the band
    # mean, and the residual is what the band misses of Δp99
    p = d["p99"]
    assert p["a_ns"] == pytest.approx(np.percentile(wa["dur_adj_ns"], 99))
    assert p["b_ns"] == pytest.approx(np.percentile(wb["dur_adj_ns"], 99))
    assert sum(r["delta_ns"] for r in p["components"]) == pytest.approx(
        p["band_b_ns"] - p["band_a_ns"], abs=1e-6)
    assert p["residual_ns"] == pytest.approx(p["delta_ns"] - p["components_sum_ns"], abs=1e-6)
    # of 2000, the p99 lies between ranks 1979 and 1980; p98.9 to p99.1 is
    # ranks 1977 to 1982; 3 a side widens it to 1976 to 1983
    band = np.sort(wa["dur_adj_ns"].to_numpy())[1976:1984]
    assert len(band) == d["runs"]["A"]["band_writes"] == 8
    assert p["band_a_ns"] == pytest.approx(band.mean())
    assert band.min() <= p["a_ns"] <= band.max()


def test_a_known_shift_is_inside_its_interval_and_no_shift_gives_zero(tmp_path):
    rng = np.random.default_rng(11)
    a = make_run(tmp_path / "A", exp_comps(rng, 3000))
    b = make_run(tmp_path / "B", exp_comps(rng, 3000, shift_sync=40_000))
    d = D.diff_runs(a, b)
    sync = row(d["mean"]["components"], "wal_sync_io")
    assert sync["lo_ns"] < 40_000 < sync["hi_ns"] and sync["lo_ns"] > 0
    tot = d["mean"]
    assert tot["lo_ns"] < 40_000 < tot["hi_ns"] and tot["lo_ns"] > 0
    for c in ("queue", "memtable", "other"):   # drawn alike in both runs
        r = row(d["mean"]["components"], c)
        assert r["lo_ns"] < 0 < r["hi_ns"], c
    # every write's sync is 40 us longer: so is the p99 of the population
    assert d["p99"]["lo_ns"] < 40_000 < d["p99"]["hi_ns"] and d["p99"]["lo_ns"] > 0
    # the same distribution in both: every interval holds 0
    c = make_run(tmp_path / "C", exp_comps(rng, 3000))
    d0 = D.diff_runs(a, c)
    assert d0["mean"]["lo_ns"] < 0 < d0["mean"]["hi_ns"]
    assert d0["p99"]["lo_ns"] < 0 < d0["p99"]["hi_ns"]


def test_null_intervals_cover_zero_about_95_percent_of_the_time(tmp_path):
    """Intervals far too narrow would miss 0 often: 40 null pairs, each
    interval of Δmean should miss 0 about twice."""
    rng = np.random.default_rng(3)
    missed = 0
    for i in range(40):
        a = make_run(tmp_path / f"A{i}", exp_comps(rng, 300))
        b = make_run(tmp_path / f"B{i}", exp_comps(rng, 300))
        m = D.diff_runs(a, b, boot=400, seed=i)["mean"]
        missed += not (m["lo_ns"] <= 0 <= m["hi_ns"])
    assert missed <= 6


def windowed_run(d: Path, rng: np.random.Generator, k: int, per: int = 40,
                 **kw) -> Path:
    """k windows of `per` writes; writes of one window share its moment
    (a window-wide offset much larger than the writes' own spread)."""
    opens = np.arange(k) * 10_000_000
    starts = np.concatenate([o + np.arange(per) * 100 for o in opens])
    offset = np.repeat(rng.exponential(200_000, k), per)
    comps = {"wal_sync_io": offset + rng.normal(50_000, 2_000, k * per).clip(0),
             "other": rng.exponential(1_000, k * per)}
    return make_run(d, comps, mode="budget", starts=starts,
                    windows=[(o, o + 1_000_000) for o in opens], **kw)


def test_rows_from_windows_are_resampled_a_window_at_a_time(tmp_path):
    rng = np.random.default_rng(2)
    a = windowed_run(tmp_path / "A", rng, 30)
    b = windowed_run(tmp_path / "B", rng, 30)
    ra = D.load_run(a)
    assert ra.unit == "windows" and ra.windows_with_writes == 30 and ra.interval
    # each write's unit is the window it began in (analysis.windows.window_of)
    win = W.read_windows(a)
    assert (ra.clusters == W.window_of(ra.writes["start_ns"].to_numpy(), win)).all()
    d = D.diff_runs(a, b)
    assert d["runs"]["A"]["unit"] == "windows"
    # the same rows as if every write were its own draw: a far narrower
    # interval, which the shared moments do not justify
    for r in (a, b):
        s = json.loads((r / "summary.json").read_text())
        s["budget"]["every_write"] = True
        (r / "summary.json").write_text(json.dumps(s))
    d1 = D.diff_runs(a, b)
    assert d1["runs"]["A"]["unit"] == "writes"
    assert d1["mean"]["delta_ns"] == pytest.approx(d["mean"]["delta_ns"])
    width = d["mean"]["hi_ns"] - d["mean"]["lo_ns"]
    width1 = d1["mean"]["hi_ns"] - d1["mean"]["lo_ns"]
    assert width > 3 * width1
    # a run's own mean interval is analysis.windows' bootstrap across windows
    n = np.bincount(ra.clusters).astype(float)
    s = np.bincount(ra.clusters, weights=ra.writes["dur_adj_ns"].to_numpy(float))
    lo, hi = W.interval_across_windows(s, n, np.random.default_rng(W.SEED))
    assert (d["runs"]["A"]["mean_lo_ns"], d["runs"]["A"]["mean_hi_ns"]) == (lo, hi)


def test_too_few_windows_give_no_interval(tmp_path):
    rng = np.random.default_rng(4)
    a = windowed_run(tmp_path / "A", rng, W.MIN_WINDOWS - 1)
    b = windowed_run(tmp_path / "B", rng, 20)
    d = D.diff_runs(a, b)
    assert not d["runs"]["A"]["interval"] and d["bootstrap"] == 0
    assert d["mean"]["lo_ns"] != d["mean"]["lo_ns"]     # NaN
    assert abs(d["mean"]["residual_ns"]) < 1e-6
    table = VD.format_table(d)
    assert "too few for an interval" in table and "no interval" in table
    assert json.loads(VD.to_json(d))["mean"]["lo_ns"] is None


def test_another_engines_rows_are_left_out(tmp_path):
    rng = np.random.default_rng(6)
    other = pd.DataFrame({"start_ns": [5], "dur_adj_ns": [10**9], "engine": ["sqlite"],
                          "sql_exec_adj_ns": [10**9]})
    a = make_run(tmp_path / "A", exp_comps(rng, 500), extra_rows=other)
    b = make_run(tmp_path / "B", exp_comps(rng, 500))
    d = D.diff_runs(a, b, boot=100)
    assert d["runs"]["A"]["writes"] == 500
    assert d["mean"]["a_ns"] < 10**6 and abs(d["mean"]["residual_ns"]) < 1e-6


def errors(capsys, *argv: str) -> str:
    assert walscope.main(["diff", *argv]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_errors_are_one_line(tmp_path, capsys):
    rng = np.random.default_rng(8)
    a = make_run(tmp_path / "A", exp_comps(rng, 100))
    assert errors(capsys, str(a), str(tmp_path / "none")) == \
        f"walscope diff: {tmp_path / 'none'}: no such run folder"
    sq = make_run(tmp_path / "S", {"sql_exec": rng.exponential(1000, 100)}, engine="sqlite")
    assert "is rocksdb and" in errors(capsys, str(a), str(sq))
    empty = make_run(tmp_path / "E", {"queue": np.zeros(0)}, mode="sample")
    assert errors(capsys, str(a), str(empty)).endswith(
        "no per-write rows (--mode sample records none: trace with the default or "
        "--mode full)")
    (tmp_path / "nosum").mkdir()
    assert "no summary.json" in errors(capsys, str(tmp_path / "nosum"), str(a))
    b = make_run(tmp_path / "B", exp_comps(rng, 100))
    assert "no phase.folded" in errors(capsys, str(a), str(b), "-o", str(tmp_path / "o"))
    assert not (tmp_path / "o").exists()


def test_the_table_fits_80_columns_and_json_is_strict(tmp_path, capsys):
    rng = np.random.default_rng(9)
    a = make_run(tmp_path / "A", exp_comps(rng, 800))
    b = make_run(tmp_path / "B", exp_comps(rng, 800, shift_sync=10_000))
    io = pd.DataFrame({"kind": ["wal", "wal", "sst"], "in_write": [True, True, False],
                       "syscall": ["pwrite64", "fdatasync", "pwrite64"],
                       "bytes": [100, 0, 4096]})
    io.to_parquet(a / "io.parquet")
    assert walscope.main(["diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80, out
    assert "wal_sync_io" in out and "residual" in out and "wal (in writes)" in out
    assert walscope.main(["diff", str(a), str(b), "--json"]) == 0
    d = json.loads(capsys.readouterr().out, parse_constant=lambda c: 1 / 0)
    kinds = {(k["kind"], k["in_write"]): k for k in d["io"]["A"]["by_kind"]}
    assert kinds[("wal", True)]["calls"] == pytest.approx(2 / 800)
    assert kinds[("wal", True)]["syncs"] == pytest.approx(1 / 800)
    assert kinds[("sst", False)]["bytes"] == pytest.approx(4096 / 800)
    assert d["io"]["B"]["by_kind"] == [] and d["io"]["A"]["syncs"] == 1.0


@pytest.mark.parametrize("engine,comp", [("rocksdb", "wal_sync_io"),
                                         ("sqlite", "journal_sync_io"),
                                         ("postgres", "wal_sync_io")])
def test_the_total_line_names_the_engines_row(engine, comp, tmp_path, capsys):
    """A write for RocksDB, a transaction for SQLite and PostgreSQL: the
    unit's row, as the run's own table names it."""
    rng = np.random.default_rng(12)
    a = make_run(tmp_path / "A", {comp: rng.exponential(1000, 100)}, engine=engine)
    b = make_run(tmp_path / "B", {comp: rng.exponential(1200, 100)}, engine=engine)
    assert walscope.main(["diff", str(a), str(b)]) == 0
    totals = [line.split("  ")[0] for line in capsys.readouterr().out.splitlines()
              if "(total)" in line]
    assert totals == ["write (total)" if engine == "rocksdb" else "txn (total)"]


def test_syncs_per_write_from_the_engines_own_summary_section(tmp_path):
    """SQLite's summary.json section counts its journal, database and
    directory syncs inside transactions; an engine without one, the WAL's."""
    rng = np.random.default_rng(13)
    sq = make_run(tmp_path / "S", {"sql_exec": rng.exponential(1000, 100)}, engine="sqlite")
    s = json.loads((sq / "summary.json").read_text())
    s["sqlite"] = {"journal_sync": {"count": 100}, "db_sync": {"count": 30},
                   "dir_sync": {"count": 20}, "journal_write": {"count": 999},
                   "checkpoints": 7}
    (sq / "summary.json").write_text(json.dumps(s))
    assert D.io_per_write(D.load_run(sq))["syncs"] == 1.5
    pg = make_run(tmp_path / "P", {"wal_sync_io": rng.exponential(1000, 100)},
                  engine="postgres")
    assert D.io_per_write(D.load_run(pg))["syncs"] == 1.0   # make_run's wal: one each


def test_folded_stacks_are_compared_per_write(tmp_path):
    f = tmp_path / "p.folded"
    f.write_text("w;a 3\nw;b 0.0004\nw;c 1.5\n")      # microseconds in all
    assert VD.per_write(f, 3, tmp_path / "o").read_text() == "w;a 1000\nw;c 500\n"


@pytest.mark.skipif(not (flamegraph.ROOT / ".output/inferno/bin/inferno-diff-folded").exists()
                    and not shutil.which("inferno-diff-folded"), reason="no inferno built")
def test_the_differential_flame_graph(tmp_path, capsys):
    rng = np.random.default_rng(10)
    a = make_run(tmp_path / "A", exp_comps(rng, 100))
    b = make_run(tmp_path / "B", exp_comps(rng, 200))
    (a / "phase.folded").write_text("db;WriteToWAL;fdatasync 100\ndb;InsertInto 10\n")
    (b / "phase.folded").write_text("db;WriteToWAL;fdatasync 40\ndb;InsertInto 40\n")
    out = tmp_path / "out"
    assert walscope.main(["diff", str(a), str(b), "-o", str(out)]) == 0
    capsys.readouterr()
    # per write: the sync 1000 -> 200 ns, the insert 100 -> 200 ns
    lines = set((out / "diff-phase.folded").read_text().splitlines())
    assert {"db;WriteToWAL;fdatasync 1000 200", "db;InsertInto 100 200"} <= lines
    # and with A's widths, the counts the other way round
    lines_a = set((out / "diff-phase-a.folded").read_text().splitlines())
    assert {"db;WriteToWAL;fdatasync 200 1000", "db;InsertInto 200 100"} <= lines_a
    assert "widths of A" in (out / "diff-phase-a.svg").read_text()
    svg = (out / "diff-phase.svg").read_text()
    assert "<svg" in svg and "fdatasync" in svg and "ns/write" in svg
    assert "<iframe" in (out / "diff.html").read_text()
    assert json.loads((out / "diff.json").read_text())["runs"]["B"]["writes"] == 200
    page = tmp_path / "d.html"
    assert walscope.main(["diff", str(a), str(b), "-o", str(page)]) == 0
    assert page.exists() and page.with_suffix(".svg").exists()


@pytest.mark.root
def test_sync_true_against_sync_false(traced, tmp_path):
    """Every write of db_bench fillrandom, synced and not: the WAL's sync is
    the difference, and the components account for all of it."""
    on = traced("--benchmarks=fillrandom", "--num=3000", "--sync=true", mode="full")
    off = traced("--benchmarks=fillrandom", "--num=3000", "--sync=false", mode="full")
    d = D.diff_runs(on.dir, off.dir)
    m = d["mean"]
    assert d["runs"]["A"]["writes"] == d["runs"]["B"]["writes"] == 3000
    assert m["delta_ns"] < 0 and m["hi_ns"] < 0
    assert abs(m["residual_ns"]) < 0.05 * abs(m["delta_ns"])
    sync = row(m["components"], "wal_sync_io")
    assert sync["b_ns"] == 0 and sync["hi_ns"] < 0
    assert abs(sync["delta_ns"]) > 0.5 * abs(m["delta_ns"])
    assert all(abs(r["delta_ns"]) <= abs(sync["delta_ns"]) for r in m["components"])
    assert d["io"]["A"]["syncs"] >= 0.99 and d["io"]["B"]["syncs"] == 0
    wal = {k["kind"]: k for k in d["io"]["A"]["by_kind"] if k["in_write"]}
    assert wal["wal"]["syncs"] >= 0.99
    # the command as a user runs it, with the flame graph beside the table
    out = tmp_path / "d"
    assert walscope.main(["diff", str(on.dir), str(off.dir), "-o", str(out)]) == 0
    table = (out / "diff.txt").read_text()
    assert max(len(line) for line in table.splitlines()) <= 80
    folded = (out / "diff-phase.folded").read_text().splitlines()
    syncs = [line for line in folded if "fdatasync" in line]
    assert syncs and all(int(line.split()[-1]) < int(line.split()[-2]) for line in syncs)
    print(table)


def test_runs_compare_without_a_build(tmp_path, monkeypatch, capsys):
    """Run folders copied to a machine with only the package: no layout
    at hand, the components and syncs come from the folders' own files."""
    from runfolder import records as R
    monkeypatch.setattr(R, "BTF_JSON", tmp_path / "no-build.json")
    rng = np.random.default_rng(12)
    a = make_run(tmp_path / "A", exp_comps(rng, 300))
    b = make_run(tmp_path / "B", exp_comps(rng, 300, shift_sync=50_000))
    pd.DataFrame({"kind": ["wal", "wal"], "in_write": [True, True],
                  "syscall": ["pwrite64", "fdatasync"], "bytes": [100, 0]}
                 ).to_parquet(a / "io.parquet")
    assert D.engine_components(a, "rocksdb") is None
    d = D.diff_runs(a, b, boot=100)
    assert {r["component"] for r in d["mean"]["components"]} == set(COMPS)
    assert abs(d["mean"]["residual_ns"]) < 1e-6
    assert d["io"]["A"]["by_kind"][0]["syncs"] == pytest.approx(1 / 300)


def test_the_report_of_two_runs_has_the_diff(tmp_path):
    """report.html given two runs shows what walscope diff prints: B - A by
    component, adding up to the delta with the residual; not for three."""
    from types import SimpleNamespace

    from viz.report import diff_section
    rng = np.random.default_rng(3)
    a = make_run(tmp_path / "a", exp_comps(rng, 4000))
    b = make_run(tmp_path / "b", exp_comps(rng, 4000, shift_sync=30_000))
    runs = [SimpleNamespace(path=a, name="a"), SimpleNamespace(path=b, name="b")]
    page, d = diff_section(runs)
    assert d is not None and d == D.diff_runs(a, b)
    assert "<h2 id=diff>" in page and "wal_sync_io" in page and "residual" in page
    m = d["mean"]
    assert m["delta_ns"] == pytest.approx(sum(c["delta_ns"] for c in m["components"])
                                          + m["residual_ns"])
    assert VD.signed(m["delta_ns"]) in page
    assert diff_section(runs + runs[:1]) == ("", None)
    other = make_run(tmp_path / "s", {"sql_exec": np.ones(10) * 1000}, engine="sqlite")
    page, d = diff_section([runs[0], SimpleNamespace(path=other, name="s")])
    assert d is None and "Not compared" in page
