"""Folded stacks (golden files), flame graph rendering, the HTML report in Chromium."""
from __future__ import annotations

import json
import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from analysis import folded
from viz import flamegraph, report
from viz import runs as runs_mod

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("WALSCOPE_REGEN_GOLDEN") == "1"  # rewrite the golden files


def synthetic_writes() -> pd.DataFrame:
    rows = []
    for leader, q, sync, walw, mem, runq, other in (
            (True, 100_000, 500_000, 10_000, 3_000, 20_000, 7_000),
            (False, 600_000, 0, 0, 2_000, 40_000, 1_000),
            (False, 300_000, 0, 0, 0, 0, 500)):
        r = {"leader": leader, "queue_ns": q, "queue_adj_ns": q,
             "wal_sync_io_adj_ns": sync, "wal_write_io_adj_ns": walw,
             "memtable_adj_ns": mem, "sched_runq_adj_ns": runq, "other_adj_ns": other,
             "crc_adj_ns": 1_000 if leader else 0, "wal_append_adj_ns": 2_000 if leader else 0,
             "queue_behind_sync_ns": q // 2, "queue_behind_wal_write_ns": q // 10}
        r["queue_other_ns"] = q - r["queue_behind_sync_ns"] - r["queue_behind_wal_write_ns"]
        rows.append(r)
    return pd.DataFrame(rows)


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if REGEN:
        path.write_text(text)
    assert text == path.read_text()


def test_phase_stacks_golden():
    text = folded.fold(folded.phase_stacks(synthetic_writes(), "db_bench"))
    check_golden("phase.folded", text)
    # weights are microseconds and add up to the compensated total
    total = sum(int(l.rsplit(" ", 1)[1]) for l in text.splitlines())
    w = synthetic_writes()
    expect = sum(w[c].sum() for c in w if c.endswith("_adj_ns")) / 1e3
    assert abs(total - expect) <= len(text.splitlines())


def test_fold_is_canonical():
    c = Counter({"b;c": 2, "a": 1, "z;y": 0})
    assert folded.fold(c) == "a 1\nb;c 2\n"
    assert folded.clean_frame("a;b c") == "a:b_c"


def test_offcpu_stacks_golden():
    sched = pd.DataFrame({"event": ["runq", "runq", "migrate"], "thread": ["db_bench"] * 3,
                          "preempted": [True, False, False], "dur_ns": [5_000, 7_000, 0]})
    io = pd.DataFrame({"thread": ["db_bench", "rocksdb:low"], "syscall": ["fdatasync", "write"],
                       "kind": ["wal", "sst"], "lat_ns": [200_000, 30_000]})
    check_golden("offcpu.folded", folded.fold(folded.offcpu_stacks(sched, io)))


@pytest.fixture(scope="module")
def two_runs(traced):
    a = traced("--benchmarks=fillrandom", "--num=1500", "--threads=2", "--sync=true",
               "--enable_pipelined_write=false")
    b = traced("--benchmarks=fillrandom", "--num=3000", "--threads=2", "--sync=false")
    return a, b


@pytest.mark.root
def test_flame_graphs_render(two_runs, tmp_path):
    a, b = two_runs
    out = flamegraph.render_run(a.dir)
    assert set(out) >= {"phase", "offcpu"}
    svg = out["phase"].read_text()
    assert svg.startswith("<?xml") and "WriteImpl" in svg and "fdatasync" in svg
    d = flamegraph.render_diff(a.dir, b.dir, tmp_path / "diff.svg")
    assert "<svg" in d.read_text()


@pytest.mark.root
def test_report_renders_in_chromium(two_runs, tmp_path):
    a, b = two_runs
    flamegraph.render_run(a.dir)
    out = tmp_path / "report.html"
    assert report.main([str(a.dir), str(b.dir), "-o", str(out)]) == 0
    page = out.read_text()
    assert not re.search(r'<script[^>]+src=', page)  # self-contained: nothing fetched
    # plotted sums equal summary.json (mean of compensated components)
    data = json.loads(re.search(r'<script id="walscope-data" type="application/json">(.*?)</script>',
                                page, re.S).group(1))
    for run in (a, b):
        for comp, v in data["scenarios"][f"{run.dir.parent.name}/{run.dir.name}"].items():
            assert abs(v["mean_us"] * 1e3 - run.summary["components"][comp]["mean_ns"]) < 1
        # threads' time per role, as summary.json has it
        assert data["thread_time"][f"{run.dir.parent.name}/{run.dir.name}"] == \
            run.summary["thread_time"]["roles"]
        assert run.summary["thread_time"]["roles"]["foreground"]["oncpu_ns"] > 0
    # it opens with the headline: one row per run, its dominant components
    assert page.index('class="headline"') < page.index('id="fig0"')
    assert [h["scenario"] for h in data["headline"]] == [
        f"{r.dir.parent.name}/{r.dir.name}" for r in (a, b)]
    assert "dominant at p99" in page and "ops/s" in data["headline"][0]["throughput"]
    # the flame graphs are in the page, not only linked
    assert page.count('<iframe class="flame"') == sum(
        len(list(r.dir.glob("flame-*.svg"))) for r in (a, b)) > 0
    # the screenshot is kept for CI's artefacts
    shot = ROOT / ".output" / "report-screenshot.png"
    shot.unlink(missing_ok=True)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={tmp_path}/prof"]
    p = subprocess.run(["chromium", *flags, "--enable-logging=stderr", "--v=0",
                        "--window-size=1400,4000", f"--screenshot={shot}", out.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 20_000
    console = [l for l in p.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    assert not console, console
    dom = subprocess.run(["chromium", *flags, "--virtual-time-budget=10000", "--dump-dom",
                          out.as_uri()], capture_output=True, text=True, timeout=120).stdout
    # every figure was drawn by plotly, with at least one trace of data
    n = len(data["figures"])
    assert n >= 4
    for i in range(n):
        block = dom.split(f'id="fig{i}"')[1].split(f'id="fig{i + 1}"')[0]
        assert "main-svg" in block, f"figure {i} ({data['figures'][i]}) not rendered"
        assert 'class="trace' in block or "class='trace" in block, \
            f"figure {i} ({data['figures'][i]}) has no data"


def test_report_bad_input(tmp_path):
    assert report.main([str(tmp_path / "nope")]) == 1
    assert report.main([str(tmp_path)]) == 1


@pytest.mark.root
def test_report_of_a_long_run_samples_but_keeps_means_cdf_and_tail(two_runs, tmp_path,
                                                                     monkeypatch):
    a, _ = two_runs
    monkeypatch.setattr(runs_mod, "REPORT_ROWS", 100)
    run = report.find_runs([a.dir])[0]
    assert run.sampled and len(run.writes) <= run.dur.n // run.step + 1
    assert run.dur.n == a.summary["writes"]["count"]    # every write's latency
    assert (run.tail.rows["dur_adj_ns"] >= run.dur.percentiles([99])[0] - 1).all()
    assert run.tail.n >= len(run.tail.rows) and run.tail.n >= run.dur.n // 100
    out = tmp_path / "r.html"
    payload = report.build([run], out)
    for comp, v in payload["scenarios"][run.name].items():
        assert abs(v["mean_us"] * 1e3 - a.summary["components"][comp]["mean_ns"]) < 1
    assert "1 in" in out.read_text()
