"""runners/study.py --quick, end to end for the five studies: each writes its
folder (README with a verdict per claim, results.json, environment.json,
pictures, flame graphs), from runs made here."""
from __future__ import annotations

import json
import os
import re
import subprocess

import pandas as pd
import pytest

from probepoints import modes
from runners.experiments.studies import STUDIES
from runners.experiments.studies.model import HELD, NOT_HELD, PARTLY, UNTESTABLE
from runners.experiments.studies.results import Results
from tests.conftest import ROOT

pytestmark = pytest.mark.root
OUTCOMES = {HELD, NOT_HELD, PARTLY, UNTESTABLE}


@pytest.fixture(scope="module")
def quick():
    for i in STUDIES:   # from scratch: no cell resumed from an earlier run
        subprocess.run(["rm", "-rf", str(ROOT / "runs" / f"study-{i}-quick")], check=True)
    p = subprocess.run([str(ROOT / "runners" / "study.py"), "all", "--quick"],
                       capture_output=True, text=True, timeout=1200, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    return {i: ROOT / "runs" / f"study-{i}-quick" for i in STUDIES}


@pytest.mark.parametrize("sid", list(STUDIES))
def test_study_folder(quick, sid):
    work = quick[sid]
    out = work / "writeup"
    study = STUDIES[sid]
    text = (out / "README.md").read_text()
    # a verdict for every claim, in the table
    rows = re.findall(r"^\| (\d+) \| \*\*(.+?)\*\* \|", text, re.M)
    assert [int(n) for n, _ in rows] == list(range(1, len(study.claims) + 1))
    assert {v for _, v in rows} <= OUTCOMES
    for claim in study.claims:
        assert claim.text in text
    env = json.loads((out / "environment.json").read_text())
    assert env["kernel"] == os.uname().release
    assert env["mode"] == (study.mode or modes.DEFAULT)
    for png in ("throughput.png", "breakdown.png"):
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, png
        assert f"({png})" in text
    assert list(out.glob("flame-*.svg"))
    # the table's medians are the untraced repeats' own, read independently
    res = Results.load(out / "results.json")
    df = pd.read_parquet(work / "matrix.parquet")
    base = df[df["kind"] == "baseline"]
    for c in res.cells:
        for bench, per in c.metrics.items():
            mine = base[(base["cell"] == c.name) & (base["benchmark"] == bench)]["ops_sec"]
            assert per["ops_sec"].median == pytest.approx(float(mine.median()))
    # every cell was traced, and the traced runs kept their rows' invariants
    assert all(c.run_dir for c in res.cells)
    assert sum(c.writes for c in res.cells) > 0
