"""Every verdict a study's README prints follows from its results.json by
the documented rule: the claims are decided again here, from the saved
results, and must read the same; each README opens with the seed's
question and an answer."""
from __future__ import annotations

import re

import pytest

from runners.experiments.studies import STUDIES
from runners.experiments.studies.results import Results
from runners.experiments.studies.writeup import verdicts
from tests.conftest import ROOT

FOLDERS = {s.id: ROOT / "studies" / s.folder for s in STUDIES.values()}


def printed_verdicts(readme: str) -> list[tuple[int, str]]:
    """The '| # | **verdict** | evidence |' rows of 'The claims, checked'."""
    part = readme.split("## The claims, checked", 1)[1].split("\n## ", 1)[0]
    return [(int(n), v) for n, v in re.findall(r"^\| (\d+) \| \*\*(.+?)\*\* \|", part, re.M)]


@pytest.mark.parametrize("sid", sorted(FOLDERS))
def test_readme_verdicts_follow_from_results(sid):
    folder = FOLDERS[sid]
    if not (folder / "results.json").exists():
        pytest.skip(f"study {sid} not run")
    study = STUDIES[sid]
    res = Results.load(folder / "results.json")
    readme = (folder / "README.md").read_text()
    decided = [(i, v.outcome) for i, v in enumerate(verdicts(study, res), 1)]
    assert printed_verdicts(readme) == decided
    evidence = {i: v.evidence for i, v in enumerate(verdicts(study, res), 1)}
    for i, ev in evidence.items():   # the figures too, not only the word
        assert ev.split(" See [")[0][:200] in readme, f"claim {i}'s evidence differs"


@pytest.mark.parametrize("sid", sorted(FOLDERS))
def test_readme_opens_with_question_and_answer(sid):
    folder = FOLDERS[sid]
    if not (folder / "README.md").exists():
        pytest.skip(f"study {sid} not run")
    text = (folder / "README.md").read_text()
    head = text.split("## The seed's claims", 1)[0]
    assert "## Question" in head and "**Answer.** " in head
    assert "(no answer written" not in head and "not answerable" not in head
    assert STUDIES[sid].question in head


@pytest.mark.parametrize("sid", sorted(FOLDERS))
def test_answer_is_a_paragraph_a_reader_could_quote(sid):
    """Issue 45: at most ~120 words, sentences, not a run of intervals."""
    folder = FOLDERS[sid]
    if not (folder / "README.md").exists():
        pytest.skip(f"study {sid} not run")
    text = (folder / "README.md").read_text()
    answer = text.split("**Answer.** ", 1)[1].split("\n", 1)[0]
    assert len(answer.split()) <= 120, len(answer.split())
    assert "over 5 rounds" not in answer and "A/A" not in answer
    assert answer.rstrip().endswith(".")


@pytest.mark.parametrize("sid", sorted(FOLDERS))
def test_every_cell_names_its_lens_and_trust(sid):
    folder = FOLDERS[sid]
    if not (folder / "results.json").exists():
        pytest.skip(f"study {sid} not run")
    import json
    for c in json.loads((folder / "results.json").read_text())["cells"]:
        assert c["lens"] in ("rows", "untouched") and isinstance(c["trusted"], bool)
