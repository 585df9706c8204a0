"""The report's and the diff page's pictures as Chromium draws them
(issue 44): each check measures the rendered page (boxes, widths, the
text of labels), so a picture that regresses fails here.

- the diff page's flame graphs take the page's width and their titles
  stand whole, clear of "Search", at a wide and a narrow window;
- the CDF's log axis labels read as latencies, and the p50/p99/p99.9
  labels sit inside the plot without overprinting each other;
- the timeline draws the background writes it promises, and a run with
  none says so in its panel;
- lost events read as words, not summary.json's JSON.

Run folders are made here (no root, no workload); Chromium and, for the
flame graphs, inferno (setup.sh builds both) or the tests skip.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from runners.command import walscope
from tests.test_dataset import synthetic_run
from tests.test_diff import exp_comps, make_run
from viz import diff as VD
from viz import figures, flamegraph, report
from viz.axes import log_ticks, size_ticks, us_label
from analysis.losses import losses
from viz.screenshot import measure

GOLDEN = Path(__file__).parent / "golden"
# run names as long as a matrix cell's: titles that run off a frame
A_NAME = "fillrandom-threads-4-sync-true-pipelined-false"
B_NAME = "fillrandom-threads-4-sync-false-pipelined-false"


def need_chromium() -> None:
    if not shutil.which("chromium") and not shutil.which("chromium-browser"):
        pytest.skip("chromium is not installed (setup.sh installs it)")


def need_inferno() -> None:
    try:
        flamegraph.inferno("inferno-flamegraph")
        flamegraph.inferno("inferno-diff-folded")
    except flamegraph.RenderError as e:
        pytest.skip(str(e))


def overlap(a: list[float], b: list[float]) -> bool:
    """Whether two [left, top, right, bottom] boxes share any area."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def inside(box: list[float], frame: list[float], slack: float = 1.0) -> bool:
    return (box[0] >= frame[0] - slack and box[1] >= frame[1] - slack
            and box[2] <= frame[2] + slack and box[3] <= frame[3] + slack)


# -- the diff page's flame graphs ---------------------------------------

FLAME_JS = """
function box(e) { var r = e.getBoundingClientRect();
                  return [r.left, r.top, r.right, r.bottom]; }
return {page: document.documentElement.clientWidth,
        frames: Array.prototype.map.call(document.querySelectorAll("iframe.flame"),
  function (f) {
    var d = f.contentDocument, svg = d.querySelector("svg");
    var text = function (id) { var t = d.getElementById(id);
      return t && {text: t.textContent, box: box(t),
                   size: parseFloat(getComputedStyle(t).fontSize)}; };
    return {frame: f.clientWidth, svg: box(svg), title: text("title"),
            subtitle: text("subtitle"), search: box(d.getElementById("search"))};
  })};
"""


@pytest.fixture(scope="module")
def diff_page(tmp_path_factory) -> Path:
    need_chromium()
    need_inferno()
    d = tmp_path_factory.mktemp("diffpage")
    rng = np.random.default_rng(44)
    a = make_run(d / A_NAME, exp_comps(rng, 100))
    b = make_run(d / B_NAME, exp_comps(rng, 200))
    (a / "phase.folded").write_text((GOLDEN / "phase.folded").read_text())
    (b / "phase.folded").write_text("db_bench;WriteImpl;[leader];WriteToWAL;fdatasync 40\n"
                                    "db_bench;WriteImpl;[leader];InsertInto 40\n")
    page = d / "diff.html"
    assert walscope.main(["diff", str(a), str(b), "-o", str(page)]) == 0
    return page


@pytest.fixture(scope="module", params=[1280, 800], ids=["1280px", "800px"])
def diff_drawn(request, diff_page) -> dict[str, Any]:
    got = measure(diff_page, FLAME_JS, width=request.param, height=900)
    assert len(got["frames"]) == 2, got
    return got


def test_diff_flame_graphs_take_the_pages_width(diff_drawn):
    """Each flame graph fills >= 90% of its frame, and the frame >= 90% of
    the page (beside the table it had about half: 640 px of 1,280)."""
    for f in diff_drawn["frames"]:
        svg_width = f["svg"][2] - f["svg"][0]
        assert svg_width >= 0.9 * f["frame"], f
        assert f["frame"] >= 0.9 * diff_drawn["page"], (f["frame"], diff_drawn["page"])


def test_diff_flame_graph_titles_are_whole(diff_drawn):
    """Title and subtitle: the whole text (which runs, how to read the
    colours), inside the graph, clear of "Search", at a readable size."""
    wanted = [VD.flame_titles(A_NAME, B_NAME, "phase", w) for w in ("B", "A")]
    for f, (title, subtitle) in zip(diff_drawn["frames"], wanted):
        texts = [t for t in (f["title"], f["subtitle"]) if t]
        for t in texts:
            assert t["box"][0] >= f["svg"][0] and t["box"][2] <= f["svg"][2], (t, f["svg"])
            assert not overlap(t["box"], f["search"]), (t, f["search"])
            assert t["size"] >= 7, t
        assert [t["text"] for t in texts] == [title, subtitle], f
        assert "red: more in " + B_NAME in subtitle


# -- the report: CDF, timeline, losses, its flame graph -----------------

BACKGROUND_WRITES = 12

REPORT_JS = """
function box(e) { var r = e.getBoundingClientRect();
                  return [r.left, r.top, r.right, r.bottom]; }
function texts(root, sel) {
  return Array.prototype.map.call(root.querySelectorAll(sel),
    function (t) { return {text: t.textContent, box: box(t)}; }); }
var data = JSON.parse(document.getElementById("walscope-data").textContent);
function fig(title) { return document.getElementById("fig" + data.figures.indexOf(title)); }
var cdf = fig(%(cdf)s), tl = fig(%(timeline)s);
var traces = Array.prototype.map.call(tl.querySelectorAll(".scatterlayer .trace"),
  function (g) { var t = g.__data__[0].trace;
    return {name: t.name, xaxis: t.xaxis, points: g.querySelectorAll("path.point").length}; });
var table = Array.prototype.slice.call(document.querySelectorAll("table")).pop();
return {
  cdf: {plot: box(cdf.querySelector(".bglayer rect.bg")),
        xticks: texts(cdf, ".xtick text"), marks: texts(cdf, ".textpoint text")},
  timeline: {panels: Array.prototype.map.call(tl.querySelectorAll(".bglayer rect.bg"), box),
             traces: traces, notes: texts(tl, ".annotation-text"),
             titles: texts(tl, "[class^='g-y'][class$='title'] text")},
  lost: Array.prototype.map.call(table.querySelectorAll("tr"), function (r) {
    return Array.prototype.map.call(r.children, function (c) { return c.textContent; }); })};
"""


def background_io(n: int) -> pd.DataFrame:
    """n SST writes by a flush thread during the run, and a WAL write by
    the writer (which is no cross)."""
    bg = pd.DataFrame({"ts_ns": np.linspace(10_000, 390_000, n).astype(np.int64),
                       "lat_ns": 50_000, "thread": "rocksdb:high", "syscall": "write",
                       "kind": "sst", "in_write": False,
                       "bytes": np.geomspace(4096, 4 << 20, n).astype(np.int64)})
    wal = pd.DataFrame({"ts_ns": [5_000], "lat_ns": [3_000], "thread": ["db_bench"],
                        "syscall": ["write"], "kind": ["wal"], "in_write": [True],
                        "bytes": [100]})
    return pd.concat([bg, wal], ignore_index=True)


@pytest.fixture(scope="module")
def report_drawn(tmp_path_factory) -> dict[str, Any]:
    """One report of two runs made here: "flushed" with background writes,
    lost stacks and returns with no entry; "quiet" with neither."""
    need_chromium()
    d = tmp_path_factory.mktemp("report")
    runs = []
    for i, name in enumerate(("flushed", "quiet")):
        run = synthetic_run(d / name, seed=i)
        s = json.loads((run / "summary.json").read_text())
        s["probe_hits"] = {"per_write": 4.0}
        for c in s["components"].values():
            c["mean_ns"] = 5.0
        if name == "flushed":
            s["lost_events"] = {"write": 0, "stack": 453}
            s["tracking_gaps"] = {"threads_full": 0, "phase_mismatch": 2}
            background_io(BACKGROUND_WRITES).to_parquet(run / "io.parquet", index=False)
        (run / "summary.json").write_text(json.dumps(s))
        runs.append(run)
    out = d / "report.html"
    assert report.main([str(r) for r in runs] + ["-o", str(out)]) == 0
    js = REPORT_JS % {"cdf": json.dumps(figures.FIGURES[1][0]),
                      "timeline": json.dumps(figures.FIGURES[3][0])}
    return measure(out, js, width=1280, height=900)


LATENCY = re.compile(r"^\d[\d,]*(\.\d+)? (ns|us|ms|s)$")


def test_cdf_axis_labels_read_as_latencies(report_drawn):
    """At least three x labels, each a latency with its unit (plotly's own
    showed "100" and bare minor digits, "2" for 200), none overprinting."""
    ticks = report_drawn["cdf"]["xticks"]
    assert len(ticks) >= 3, ticks
    assert all(LATENCY.match(t["text"]) for t in ticks), [t["text"] for t in ticks]
    for i, a in enumerate(ticks):
        assert not any(overlap(a["box"], b["box"]) for b in ticks[i + 1:]), ticks


def test_cdf_percentile_labels_inside_the_plot(report_drawn):
    """p50, p99 and p99.9 labelled once each, every label inside the plot
    area (p99.9 sat above its top edge, cut), none over another."""
    marks, plot = report_drawn["cdf"]["marks"], report_drawn["cdf"]["plot"]
    for m in marks:
        assert inside(m["box"], plot), (m, plot)
    for i, a in enumerate(marks):
        assert not any(overlap(a["box"], b["box"]) for b in marks[i + 1:]), marks
    assert sorted(m["text"] for m in marks) == ["p50", "p99", "p99.9"], marks


def test_timeline_draws_background_writes_or_says_there_are_none(report_drawn):
    """The flushed run's panel draws a cross for each background write (not
    the writer's own WAL write) on a KiB axis; the quiet run's panel says
    it had none, inside its plot area; the flushed one says nothing of it."""
    tl = report_drawn["timeline"]
    crosses = [t for t in tl["traces"] if t["name"] == figures.BACKGROUND]
    assert [(t["xaxis"], t["points"]) for t in crosses] == [("x", BACKGROUND_WRITES)], \
        tl["traces"]
    titles = [t["text"] for t in tl["titles"]]
    assert sum("KiB" in t for t in titles) == 1 and "write latency" in titles, titles
    notes = [n for n in tl["notes"] if "no flush or compaction writes" in n["text"]]
    assert len(notes) == 1, tl["notes"]
    panels = sorted(tl["panels"], key=lambda b: b[1])
    assert len(panels) == 2, panels
    assert inside(notes[0]["box"], panels[1]) and not inside(notes[0]["box"], panels[0])


def test_lost_events_read_as_words(report_drawn):
    """The overhead table's "lost" column: what was lost, in words."""
    rows = report_drawn["lost"]
    col = next(i for i, h in enumerate(rows[0]) if "lost" in h)
    by_run = {r[0]: r[col] for r in rows[1:]}
    assert by_run == {"flushed": "453 stacks lost, 2 returns with no entry",
                      "quiet": "none"}, rows
    assert not any("{" in cell for r in rows for cell in r), rows


# -- the pure parts ------------------------------------------------------

@pytest.mark.parametrize("lo,hi", [(40, 800), (500, 3000), (1, 5000), (0.5, 5e7),
                                   (100, 120), (2_000, 2_100)])
def test_log_ticks_are_enough_and_inside_the_range(lo, hi):
    t = log_ticks([lo, (lo + hi) / 2, hi])
    assert min(3, len(t["tickvals"])) == 3 and len(t["tickvals"]) <= 10, t
    assert all(lo <= v * 1.001 and v <= hi * 1.001 for v in t["tickvals"]), t
    assert len(set(t["ticktext"])) == len(t["ticktext"]), t
    assert all(LATENCY.match(x) for x in t["ticktext"]), t


def test_tick_labels_and_sizes():
    assert [us_label(v) for v in (0.5, 20, 1500, 2e6)] == ["500 ns", "20 us", "1.5 ms", "2 s"]
    # 11 powers of two from 4 KiB to 4 MiB: every other one, ending at the top
    assert size_ticks([4, 4096])["ticktext"] == ["4 KiB", "16 KiB", "64 KiB", "256 KiB",
                                                 "1 MiB", "4 MiB"]
    assert size_ticks([0.5, 8])["ticktext"] == ["512 B", "1 KiB", "2 KiB", "4 KiB", "8 KiB"]
    assert log_ticks([0, float("nan")]) == {} and size_ticks([]) == {}


def test_losses_in_words():
    assert losses({"lost_events": {"stack": 453, "write": 0}}) == "453 stacks lost"
    assert losses({"lost_events": {"stack": 1, "offcpu": 2},
                   "tracking_gaps": {"threads_full": 3}}) == \
        "1 stack lost, 2 off-CPU periods lost, 3 threads not tracked"
    assert losses({"lost_events": {"new_kind": 5}}) == "5 new_kind events lost"
    assert losses({"lost_events": {"write": 0}, "tracking_gaps": {}}) == "none"
