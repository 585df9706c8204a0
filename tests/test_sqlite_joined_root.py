"""A transaction already open when the probes come is no row: its start
was not seen (probes/sqlite.bpf.h sql_in_txn reads the connection's
autoCommit byte).  Followed to its COMMIT, it is left out and counted
(summary.json rows_joined), where each of its statements was once a row
of its own: 25 such rows, 15-50 us each, in one window of a SQLite DELETE
run moved the windows' writes per byte by 18%.  The plain command's -p:
the default's first window opens, its probes attached, before the
process is taken (collectors/collect_windows.c start_windows)."""
from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from tests.conftest import ROOT, TRACE, wait_attached

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

CLIENT = str(ROOT / "tests" / "engines" / "open_txn.py")
FOLLOW, N = 12, 40


def test_a_transaction_open_at_the_attach_is_left_out_whole(tmp_path):
    go = tmp_path / "go"
    client = subprocess.Popen([sys.executable, CLIENT, str(tmp_path / "t.db"), str(go),
                               str(FOLLOW), str(N)], stdout=subprocess.PIPE, text=True)
    out = tmp_path / "o"
    try:
        assert client.stdout.readline().strip() == "open"
        tracer = subprocess.Popen([*TRACE, "-q", "-o", str(out), "-p",
                                   str(client.pid)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        wait_attached(out, tracer)
        go.touch()
        assert client.stdout.readline().strip() == f"transactions {N}"
        client.wait(timeout=60)
        _, err = tracer.communicate(timeout=300)
        assert tracer.returncode == 0, err[-2000:]
    finally:
        if client.poll() is None:
            client.kill()
    s = json.loads((out / "summary.json").read_text())
    w = pd.read_parquet(out / "writes.parquet", columns=["explicit", "statements"])
    # the client's own transactions, each whole; none of the open one's
    # statements as rows of their own
    assert len(w) == N and bool(w["explicit"].all()), w.value_counts()
    assert s["rows_joined"] == 1, s.get("rows_joined")
    assert s["sqlite"]["explicit"] == N and s["sqlite"]["autocommit"] == 0, s["sqlite"]
