"""serve --all's finding (collectors/engine_processes.py) on real
processes: a process that maps an engine's library is found, one that maps
none is not, a child of a found process is traced through it, a process
that loads an engine late is found at its next read, and one of several
given (-p -p) ends the run only with the last."""
from __future__ import annotations

import subprocess
import sys

import pytest

from collectors import engine_processes
from collectors.engine_processes import EngineProcesses

# maps libsqlite3 at import (the interpreter's _sqlite3), then waits
WITH_ENGINE = "import sqlite3, sys; print('up', flush=True); sys.stdin.read()"
# maps no engine until told (a line on stdin), then imports sqlite3
LATE = ("import sys; print('up', flush=True); sys.stdin.readline(); import sqlite3; "
        "print('loaded', flush=True); sys.stdin.read()")
# maps the engine and forks a child that does too (a server's backend)
PARENT = ("import os, sqlite3, sys, time\n"
          "if os.fork() == 0:\n    time.sleep(3600)\n"
          "print('up', flush=True); sys.stdin.read()")


@pytest.fixture
def procs():
    """The processes a test starts, killed and reaped after it, whatever
    happened (children of the test's own: killed with their parent's
    group of one)."""
    got: list[subprocess.Popen] = []
    yield got
    for p in got:
        subprocess.run(["pkill", "-P", str(p.pid)])
        if p.poll() is None:
            p.kill()
        p.wait()


def started(procs: list, code: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    procs.append(p)
    assert p.stdout.readline().strip() == "up"
    return p


def sleeper(procs: list) -> subprocess.Popen:
    procs.append(subprocess.Popen(["sleep", "600"]))
    return procs[-1]


def finder() -> EngineProcesses:
    # no waiting between reads (the test process and its ancestors are never
    # taken: walscope's own lineage)
    return EngineProcesses(scan_s=0.0, recheck_s=0.0)


def test_walscope_and_its_ancestors_are_never_taken():
    """The test process holds an engine (sqlite3 is imported) and so may
    its parents: none is a target, nor init."""
    import os
    import sqlite3  # noqa: F401 (maps the library)
    f = finder()
    mine = engine_processes.lineage(os.getpid())
    assert {os.getpid(), 1, os.getppid()} <= mine
    assert not mine & set(f.initial())


def test_the_marks_are_every_engines_that_has_one():
    assert engine_processes.MARKS and all(engine_processes.MARKS)
    import sqlite3  # noqa: F401 (maps the library)
    libs = [line.split()[-1] for line in open("/proc/self/maps") if "libsqlite3" in line]
    assert libs and engine_processes.holds_mark(libs[0])
    assert not engine_processes.holds_mark("/bin/sleep")
    assert not engine_processes.holds_mark("/nonexistent")


def test_all_finds_the_processes_an_engine_is_in_and_no_other(procs):
    engine, plain = started(procs, WITH_ENGINE), sleeper(procs)
    f = finder()
    first = f.initial()
    assert engine.pid in first
    assert plain.pid not in first
    f.take(first)
    assert engine.pid not in f.more(lambda pid: True)      # taken: not again


def test_a_child_of_a_found_process_is_traced_through_it(procs):
    parent = started(procs, PARENT)
    f = finder()
    first = f.initial()
    assert parent.pid in first
    children = [int(c) for c in open(f"/proc/{parent.pid}/task/{parent.pid}/children")
                .read().split()]
    assert children and not set(children) & set(first)
    f.take(first)
    # traced through its parent: not inspected, not read again
    asked: list[int] = []
    assert not set(children) & set(f.more(lambda pid: asked.append(pid) or True))
    assert not set(children) & set(asked) and set(children) <= f.covered
    assert set(children) & set(f._new_pids()) == set()


def test_a_process_that_loads_an_engine_late_is_found_at_its_next_read(procs):
    late = started(procs, LATE)
    f = finder()
    f.take(f.initial())
    assert late.pid not in f.traced
    asked: list[int] = []
    assert late.pid not in f.more(lambda pid: asked.append(pid) or True)
    assert late.pid not in asked            # no mark: never inspected
    late.stdin.write("go\n")
    late.stdin.flush()
    assert late.stdout.readline().strip() == "loaded"
    found = f.more(lambda pid: True)
    assert late.pid in found
    f.take(found)
    assert late.pid not in f.more(lambda pid: True)    # taken: not read again


def test_a_marked_process_without_an_engine_is_passed_and_read_again(procs):
    engine = started(procs, WITH_ENGINE)
    f = finder()
    f.take([], f.initial())                  # inspected: no engine after all
    assert engine.pid not in f.traced
    assert engine.pid not in f.more(lambda pid: False)
    assert engine.pid in f.more(lambda pid: True)


def test_several_given_end_with_the_last(procs):
    a, b = sleeper(procs), sleeper(procs)
    f = EngineProcesses(fixed=(a.pid, b.pid))
    assert f.initial() == [a.pid, b.pid] and not f.every()
    assert f.more(lambda pid: True) == []
    a.kill()
    a.wait()
    assert not f.done()
    b.kill()
    b.wait()
    assert f.done()
