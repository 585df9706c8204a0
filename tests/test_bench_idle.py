"""bench/idle.py: the guest's halt-poll knobs are set for a benchmark and
put back after it, also when the benchmark fails, is signalled, or was
killed before (the next one puts them back); a machine without them is
told so rather than measured as if they were set."""
from __future__ import annotations

import json
import os
import signal

import pytest

from bench import idle

OWN = {"guest_halt_poll_ns": "0", "guest_halt_poll_grow_start": "50000",
       "guest_halt_poll_allow_shrink": "Y"}
POLLING = {"guest_halt_poll_ns": "400000", "guest_halt_poll_grow_start": "400000",
           "guest_halt_poll_allow_shrink": "N"}


@pytest.fixture
def fake_sysfs(tmp_path, monkeypatch):
    params = tmp_path / "parameters"
    params.mkdir()
    for k, v in OWN.items():
        (params / k).write_text(v + "\n")
    monkeypatch.setattr(idle, "PARAMS", params)
    monkeypatch.setattr(idle, "STATE", tmp_path / "state.json")
    return params


def test_a_machine_without_haltpoll_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(idle, "PARAMS", tmp_path / "none")
    with pytest.raises(idle.IdleError, match="no haltpoll"):
        with idle.poll_before_halt(400_000):
            pass
    with idle.poll_before_halt(0) as now:   # 0: as the machine is
        assert now == {}


def test_the_knobs_are_set_then_put_back(fake_sysfs):
    before = {s: signal.getsignal(s) for s in idle.SIGNALS}
    with pytest.raises(RuntimeError):
        with idle.poll_before_halt(400_000) as now:
            assert now == POLLING
            assert json.loads(idle.STATE.read_text()) == OWN
            raise RuntimeError("the benchmark failed")
    assert idle.settings() == OWN
    assert not idle.STATE.exists()
    assert {s: signal.getsignal(s) for s in idle.SIGNALS} == before


def test_a_signal_puts_them_back_and_reaches_the_old_handler(fake_sysfs):
    got = []
    old = signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
    try:
        with idle.poll_before_halt(400_000):
            os.kill(os.getpid(), signal.SIGTERM)
            assert got == [signal.SIGTERM]
            assert idle.settings() == OWN
        assert idle.settings() == OWN
    finally:
        signal.signal(signal.SIGTERM, old)


def test_a_killed_benchmarks_settings_are_put_back_by_the_next(fake_sysfs):
    idle._write(POLLING)   # as a SIGKILLed benchmark left them
    idle.STATE.write_text(json.dumps(OWN))
    with idle.poll_before_halt(200_000) as now:
        assert now["guest_halt_poll_ns"] == "200000"
        assert json.loads(idle.STATE.read_text()) == OWN
    assert idle.settings() == OWN


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0 or not idle.PARAMS.is_dir(),
                    reason="the kernel's haltpoll knobs: root on a KVM guest")
def test_the_kernel_takes_the_setting_and_gets_its_own_back():
    before = idle.settings()
    with idle.poll_before_halt(123_000) as now:
        assert now["guest_halt_poll_ns"] == "123000"
    assert idle.settings() == before
    assert not idle.STATE.exists()


def test_a_cell_measured_with_the_guest_polling_is_marked(tmp_path):
    """A cell bench/overhead.py --idle-poll-us measured says so in the
    generated table and its footnote; the others do not."""
    from runners import bench_tables
    cell = {"ratios": [0.95, 0.97], "median": 0.96, "settled": True, "run_folder": "runs"}
    data = {"sync-on-1t": {"walscope-budget": {**cell, "idle_poll_us": 400}},
            "sync-on-4t": {"walscope-budget": cell}}
    path = tmp_path / "overhead.json"
    path.write_text(json.dumps(data))
    table = bench_tables.overhead(path)
    rows = {line.split(" | ")[0]: line for line in table.splitlines() if line.startswith("| db")}
    assert "0.96 (2)*†‡" in rows["| db_bench, sync=true, 1 thread"]
    assert "‡" not in rows["| db_bench, sync=true, 4 threads"]
    assert "‡ measured with the guest polling 400 us before it halts" in table
    path.write_text(json.dumps({"sync-on-4t": {"walscope-budget": cell}}))
    assert "‡" not in bench_tables.overhead(path)


def test_overhead_renders_its_results_again(tmp_path, monkeypatch):
    """bench/overhead.py --reps 0 --merge writes overhead.md again from
    overhead.json, through the same path a measured batch ends on (where a
    refactor once lost a whole batch at its last step)."""
    import argparse
    import shutil

    from bench import overhead
    monkeypatch.chdir(tmp_path)   # it moves to the checkout: put back after
    shutil.copy(overhead.ROOT / "bench" / "results" / "overhead.json", tmp_path)
    a = argparse.Namespace(reps=0, merge=True, output=tmp_path, tools="walscope-budget",
                           workloads="sync-on-1t", scale=1.0, no_settle=False,
                           idle_poll_us=0)
    assert overhead.measure(a, ["untraced-again", "walscope-budget"]) == 0
    md = (tmp_path / "overhead.md").read_text()
    assert "walscope-budget" in md and "untraced-again" in md


def test_the_option_refuses_a_negative_time():
    import argparse
    ap = argparse.ArgumentParser()
    idle.add_option(ap)
    assert ap.parse_args(["--idle-poll-us", "400"]).idle_poll_us == 400
    assert ap.parse_args([]).idle_poll_us == 0
    with pytest.raises(SystemExit):
        ap.parse_args(["--idle-poll-us", "-1"])
