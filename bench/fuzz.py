#!/usr/bin/env python3
"""Run the property tests of tests/test_fuzz.py with a large budget.

    bench/fuzz.py [--examples 20000]

Crashes found are kept by hypothesis (.hypothesis/) and replayed first by the
CI run of the same tests; add a minimal failing input as an @example there.
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=20000)
    a = ap.parse_args()
    env = {**os.environ, "WALSCOPE_FUZZ_EXAMPLES": str(a.examples)}
    return subprocess.call([str(ROOT / ".venv" / "bin" / "python"), "-m", "pytest", "-q",
                            "--hypothesis-show-statistics", str(ROOT / "tests" / "test_fuzz.py")],
                           env=env, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
