#!/usr/bin/env python3
"""sudo ./runners/study.py ID... | all: the documented command (README,
docs/matrices.md, each study's folder) for runners/experiments/study.py,
which runs a study end to end; see its --help."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402

in_venv(str(ROOT / "trace_wal.py"), __file__)   # the project's .venv, whoever starts it

from runners.experiments.study import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
