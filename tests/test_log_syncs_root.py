"""Each thread's syncs of a log, counted by libc's sync probe the whole
run and read by the wall sweeps (probes/maps.bpf.h log_syncs): exact
against what a program did.  It syncs a file named as SQLite names its
WAL N times from one thread and another file M times from another; the
first thread's sweeps end at N, the other's at 0, and the run's count of
log syncs is N."""
from __future__ import annotations

import json
import re

import pytest

from analysis import untouched
from tests.conftest import ROOT, run_trace

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

SYNCER = str(ROOT / "tests" / "engines" / "log_syncer.py")
N, M = 300, 120


def test_each_threads_log_syncs_are_counted_windows_or_not(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    # no engine's write in it: --allow-empty keeps the run
    p = run_trace(["-q", "--allow-empty", "-o", str(tmp_path / "o"), "--", "python3", SYNCER,
                   str(work), str(N), str(M)], timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    log = (tmp_path / "o" / "command.log").read_text()
    tid = int(re.search(r"log syncs \d+ other syncs \d+ tid (\d+)", log).group(1))
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["wal"]["sync"]["every_count"] == N, s["wal"]["sync"]
    wall = untouched.wall_frame(tmp_path / "o")
    last = wall.groupby("tid")["log_syncs"].max()
    assert last[tid] == N, last
    assert last.drop(tid).max() == 0, last   # the other thread synced no log
