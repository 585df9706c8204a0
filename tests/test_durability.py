"""runners/experiments/durability.py: writers killed mid-run, databases reopened (traced)."""
from __future__ import annotations

import pytest
import json
import subprocess

from tests.conftest import ROOT

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

DURABILITY = [str(ROOT / ".venv" / "bin" / "python"),
              str(ROOT / "runners" / "experiments" / "durability.py")]


def test_acknowledged_writes_after_sigkill(tmp_path):
    p = subprocess.run(DURABILITY + ["-o", str(tmp_path), "--kill-after", "0.5",
                                     "--settings", "rocksdb-sync,rocksdb-disable_wal,"
                                     "sqlite-delete-full"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = {r["setting"]: r for r in json.loads((tmp_path / "durability.json").read_text())}
    for r in rows.values():
        assert r["acknowledged"] > 0
        assert (tmp_path / r["reopen_run"] / "summary.json").exists()  # reopen traced
        assert r["lost_events"] == 0
    # the WAL makes acknowledged writes survive the process; without it only
    # memtables already flushed to SST survive (a fast run fills the 64 MB
    # default write buffer within 0.5 s now and then): the tail is lost
    assert rows["rocksdb-sync"]["lost"] == 0
    nowal = rows["rocksdb-disable_wal"]
    assert nowal["lost"] > 0 and nowal["survived"] == nowal["prefix"]
    assert rows["sqlite-delete-full"]["lost"] == 0
    assert rows["sqlite-delete-full"]["integrity"] == "ok"
    # WAL replay of a synced run: one sync per acknowledged write was traced
    # while writing; on reopen, RocksDB syncs what it recovered
    assert rows["rocksdb-sync"]["reopen_syncs"] > 0


def test_bad_settings_one_line(tmp_path):
    p = subprocess.run(DURABILITY + ["-o", str(tmp_path), "--settings", "bogus"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "unknown setting bogus" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
