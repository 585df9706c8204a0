"""runners/study.py's runs folder: a full run resumes only an interrupted run
of the same commit, and otherwise starts from scratch, so that the commit
a study's README names made every run in it (a rerun once kept the earlier
commit's runs and named the new one)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runners.experiments import study
from runners.experiments.studies import STUDIES


def earlier(work: Path, made: dict | None) -> Path:
    """A runs folder as an earlier call left it: one finished unit."""
    unit = work / "cell-a" / "traced0.json"
    unit.parent.mkdir(parents=True)
    unit.write_text("[]")
    if made is not None:
        (work / "made.json").write_text(json.dumps(made))
    return unit


@pytest.mark.parametrize("made", [
    {"minutes": 6.0, "commit": "old1234", "complete": True},    # another commit's
    {"minutes": 6.0, "commit": "new5678", "complete": True},    # finished: redo
    {"minutes": 6.0, "commit": "new5678"},                      # before complete=
    None,                                                       # unknown
], ids=["other-commit", "finished", "old-format", "no-made-json"])
def test_a_full_run_starts_from_scratch(tmp_path, made):
    work = tmp_path / "study-000"
    unit = earlier(work, made)
    got = study.begin_runs(work, "new5678")
    assert not unit.exists()
    assert got == {"minutes": 0.0, "commit": "new5678", "complete": False}
    assert json.loads((work / "made.json").read_text()) == got


def test_an_interrupted_run_of_the_same_commit_resumes(tmp_path):
    work = tmp_path / "study-000"
    unit = earlier(work, {"minutes": 2.5, "commit": "new5678", "complete": False})
    got = study.begin_runs(work, "new5678")
    assert unit.exists()
    assert got["minutes"] == 2.5 and got["commit"] == "new5678"


def test_run_study_records_the_commit_that_made_the_runs(tmp_path, monkeypatch):
    """run_study end to end around the matrix: the runs of another commit go,
    made.json names this one and says the runs are complete."""
    st = next(iter(STUDIES.values()))
    monkeypatch.setattr(study, "ROOT", tmp_path)
    monkeypatch.setattr(study, "head_commit", lambda: "new5678")
    work = tmp_path / "runs" / f"study-{st.id}"
    unit = earlier(work, {"minutes": 6.0, "commit": "old1234", "complete": True})
    seen = {}

    def matrix(sc, out, cpu_types, report):
        seen["before"] = sorted(p.name for p in out.iterdir())
        raise study.StudyError("stop after the matrix")   # nothing to render

    monkeypatch.setattr(study.run_matrix, "run", matrix)
    with pytest.raises(study.StudyError):
        study.run_study(st, quick=False, render_only=False, out=tmp_path / "dest")
    assert not unit.exists() and seen["before"] == ["made.json"]
    assert json.loads((work / "made.json").read_text())["commit"] == "new5678"
