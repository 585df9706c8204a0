"""Folded stacks (golden files), flame graph rendering, the HTML report in Chromium."""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from analysis import folded
from tests.png import read_rows
from tests.test_dataset import synthetic_run
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
    flags = chromium_flags(tmp_path)
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


def chromium_flags(tmp_path: Path) -> list[str]:
    return ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={tmp_path}/prof"]


@pytest.fixture
def flame_report(tmp_path):
    """A report of one synthetic run folder with one flame graph, rendered
    by inferno from the golden phase stacks."""
    if not shutil.which("chromium"):
        pytest.skip("chromium is not installed (setup.sh installs it)")
    try:
        flamegraph.inferno("inferno-flamegraph")
    except flamegraph.RenderError as e:
        pytest.skip(str(e))
    run = synthetic_run(tmp_path / "r", seed=1)
    s = json.loads((run / "summary.json").read_text())
    s["components"]["queue"]["mean_ns"] = 5.0
    s["probe_hits"] = {"per_write": 4.0}
    (run / "summary.json").write_text(json.dumps(s))
    flamegraph.render(GOLDEN / "phase.folded", run / "flame-phase.svg", flamegraph.TITLES["phase"])
    out = tmp_path / "report.html"
    assert report.main([str(run), "-o", str(out)]) == 0
    return out


def flame_and_frame_widths(shot: Path) -> tuple[int, int]:
    """(px, px): the widest stretch of the flame graph's background (#eeeeb0
    and its gradient) in a screenshot, and the inside of the frame (#ccc
    borders) around it."""
    rows = read_rows(shot)
    best = (0, 0, 0)     # run length, row, first x
    for y, row in enumerate(rows):
        x = 0
        while x < len(row):
            if row[x][0] == row[x][1] == 238 and 170 <= row[x][2] <= 230:
                start = x
                while x < len(row) and row[x][:2] == (238, 238) and 170 <= row[x][2] <= 238:
                    x += 1
                best = max(best, (x - start, y, start))
            x += 1
    length, y, start = best
    assert length, "no flame graph background in the screenshot"
    row = rows[y]
    grey = (204, 204, 204)
    left = max((x for x in range(start) if row[x] == grey), default=None)
    right = min((x for x in range(start + length, len(row)) if row[x] == grey), default=None)
    assert left is not None and right is not None, "no frame around the flame graph"
    return length, right - left - 1


def test_embedded_flame_graph_fills_its_frame(flame_report, tmp_path):
    """The report's flame graph draws at least 90% of its frame's width (it
    drew 300 px of 1,336 when the SVG sat in srcdoc as it was)."""
    shot = tmp_path / "shot.png"
    subprocess.run(["chromium", *chromium_flags(tmp_path), "--window-size=1400,4000",
                    f"--screenshot={shot}", flame_report.as_uri()],
                   capture_output=True, text=True, timeout=120)
    flame, frame = flame_and_frame_widths(shot)
    assert frame > 1000 and flame >= 0.9 * frame, (flame, frame)


HARNESS = """<!DOCTYPE html><html><body>
<iframe id="r" src="%s" style="width:1400px;height:900px"></iframe><pre id="out">-</pre>
<script>
document.getElementById("r").onload = function () { setTimeout(function () {
  var f = document.getElementById("r").contentDocument.querySelector("iframe.flame");
  var d = f.contentDocument, svg = d.querySelector("svg");
  var o = {frame: f.clientWidth, svg: svg.getBoundingClientRect().width,
           fluid: !svg.hasAttribute("width"), zoomed: false, found: ""};
  var g = Array.prototype.find.call(d.querySelectorAll("#frames g"), function (e) {
    return e.querySelector("title").textContent.indexOf("JoinBatchGroup") == 0; });
  g.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  o.zoomed = !d.getElementById("unzoom").classList.contains("hide");
  o.label = g.querySelector("text").textContent.trim();
  document.getElementById("out").textContent = JSON.stringify(o);
}, 1000); };
</script></body></html>"""


def test_embedded_flame_graph_stays_interactive(flame_report, tmp_path):
    """Inside the report the flame graph's own script runs: it takes the
    frame's width, and a click on a frame zooms into it."""
    harness = tmp_path / "harness.html"
    harness.write_text(HARNESS % flame_report.as_uri())
    dom = subprocess.run(["chromium", *chromium_flags(tmp_path), "--allow-file-access-from-files",
                          "--virtual-time-budget=10000", "--dump-dom", harness.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    got = json.loads(html.unescape(re.search(r'<pre id="out">(.*?)</pre>', dom, re.S).group(1)))
    assert got["fluid"] and got["svg"] >= 0.9 * got["frame"] > 900, got
    assert got["zoomed"] and got["label"] == "JoinBatchGroup", got


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
