"""The five studies walscope redoes (../shared/seeds), one module each."""
from __future__ import annotations

from runners.experiments.studies import s000, s001, s002, s003, s004
from runners.experiments.studies.model import Study

STUDIES: dict[str, Study] = {m.STUDY.id: m.STUDY for m in (s000, s001, s002, s003, s004)}
