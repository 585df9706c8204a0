"""collectors/object_cache.py: an object's rejection kept between runs, by
file identity; engines and loaders always read again."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from collectors import object_cache
from probepoints import modes
from collectors.object_cache import ObjectCache
from collectors.objects import ObjectFollower
from tests.conftest import run_trace

LIBZ = "/usr/lib/x86_64-linux-gnu/libz.so.1"
SQLITE = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0"
LOADER = "/lib64/ld-linux-x86-64.so.2"


def follower(tmp_path: Path) -> ObjectFollower:
    return ObjectFollower(modes.MODES[modes.DEFAULT], False, tmp_path / "run",
                          cache_dir=tmp_path / "cache")


@pytest.fixture
def no_racy_window(monkeypatch):
    """Files copied a moment ago kept all the same (the rule is tested below)."""
    monkeypatch.setattr(object_cache, "RACY_NS", 0)


def test_a_rejection_is_kept_and_a_changed_file_read_again(tmp_path, no_racy_window):
    lib = tmp_path / "libz.so"
    shutil.copy(LIBZ, lib)
    first = follower(tmp_path)
    first.inspect_start([str(lib)])
    first.save_cache()
    read = first.objects[0]
    assert read.engine is None and read.why.startswith("no ") and not read.cached
    again = follower(tmp_path)
    again.inspect_start([str(lib)])
    kept = again.objects[0]
    assert kept.cached and again.cache_hits == 1
    assert (kept.path, kept.build_id, kept.symbols, kept.why) == \
        (read.path, read.build_id, read.symbols, read.why)
    stale = tmp_path / "cache" / "objects-v1-budget-0123456789ab.json"
    stale.write_text("{}")          # another walscope's, unused 8 days: dropped
    week_ago = os.stat(stale).st_mtime - 8 * 86400
    os.utime(stale, (week_ago, week_ago))
    recent = tmp_path / "cache" / "objects-v1-budget-fedcba987654.json"
    recent.write_text("{}")         # another walscope's in use: kept
    other = tmp_path / "cache" / "objects-v1-budget-stepped-0123456789ab.json"
    other.write_text("{}")          # another mode's: kept
    os.utime(other, (week_ago, week_ago))
    with open(lib, "ab") as f:   # written since: its verdict no longer holds
        f.write(b"\0")
    third = follower(tmp_path)
    third.inspect_start([str(lib)])
    assert not third.objects[0].cached and third.cache_hits == 0
    third.save_cache()
    assert not stale.exists() and recent.exists() and other.exists() \
        and first.cache_path.exists()


def test_a_file_changed_a_moment_ago_is_not_kept(tmp_path):
    """A same-size rewrite inside one timestamp tick keeps the file's key:
    a verdict is kept only for a file unchanged for 2 s before its read."""
    lib = tmp_path / "libz.so"
    shutil.copy(LIBZ, lib)
    f = follower(tmp_path)
    f.inspect_start([str(lib)])
    f.save_cache()
    assert not f.objects[0].cached and not f.cache_path.exists()
    again = follower(tmp_path)
    again.inspect_start([str(lib)])
    assert again.cache_hits == 0


def test_engines_are_always_read_and_hooks_always_given(tmp_path):
    """An engine's object is never cached; the loader is (it holds no
    engine), and its hook's line is given all the same when the cache
    recalls it (read again: two symbols)."""
    for i in range(2):
        f = follower(tmp_path)
        lines = f.inspect_start([SQLITE, LOADER])
        f.save_cache()
        assert [o.cached for o in f.objects] == [False, i == 1]
        assert [o.engine for o in f.objects] == ["sqlite", None]
        assert any(line.startswith("loader\t") for line in lines)


def test_a_cache_it_cannot_read_or_trust_changes_nothing(tmp_path):
    (tmp_path / "cache").write_text("not a folder")
    f = follower(tmp_path)
    f.inspect_start([LIBZ])
    f.save_cache()   # saving fails quietly
    assert f.objects[0].why.startswith("no ") and not f.objects[0].cached
    bad = tmp_path / "bad"
    bad.mkdir(mode=0o755)
    c = ObjectCache(modes.DEFAULT, False, bad)
    c.path.write_text("[1, 2]")      # not a mapping
    assert ObjectCache(modes.DEFAULT, False, bad).lookup(LIBZ) is None
    st = os.stat(LIBZ)
    good = json.dumps({object_cache.file_key(st): {"why": "no engine", "symbols": ".dynsym"}})
    c.path.unlink()
    os.symlink(tmp_path / "elsewhere.json", c.path)   # not followed
    (tmp_path / "elsewhere.json").write_text(good)
    assert ObjectCache(modes.DEFAULT, False, bad).lookup(LIBZ) is None
    c.path.unlink()
    c.path.write_text(good)
    assert ObjectCache(modes.DEFAULT, False, bad).lookup(LIBZ) is not None
    bad.chmod(0o777)                 # a folder others may write: not trusted
    assert ObjectCache(modes.DEFAULT, False, bad).lookup(LIBZ) is None


def test_the_plain_command_twice_finds_sqlite_and_skips_what_it_rejected(tmp_path):
    """The second of two default-mode runs releases the interpreter's
    objects from the cache, finds SQLite and records its transactions."""
    prog = tmp_path / "w.py"
    prog.write_text(
        "import json, sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "con.execute('create table t(a)')\n"
        "for i in range(50):\n"
        "    con.execute('insert into t values (?)', (json.dumps(i),))\n")
    runs = []
    for i in range(2):
        out = tmp_path / f"o{i}"
        p = run_trace(["-q", "-o", str(out), "--", "/usr/bin/python3", str(prog),
                       str(tmp_path / f"db{i}")], timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        runs.append(json.loads((out / "summary.json").read_text()))
    second = runs[1]
    objs = {Path(o["path"]).name: o for o in second["objects"]}
    rejected = [o for o in second["objects"] if o["engine"] is None
                and not o["path"].startswith(("/lib64/ld-", "/usr/lib/x86_64-linux-gnu/ld-"))
                and o["why"] and o["why"].startswith("no ")]
    assert rejected and all(o["cached"] for o in rejected)
    assert objs["libsqlite3.so.0.8.6"]["engine"] == "sqlite" and \
        not objs["libsqlite3.so.0.8.6"]["cached"]
    assert second["engines_found"] == ["sqlite"]
    assert second["writes"]["count"] > 0
