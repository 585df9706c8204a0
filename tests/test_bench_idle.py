"""bench/idle.py: the guest's halt-poll knobs are set for a benchmark and
put back after it, also when the benchmark fails; a machine without them
is told so rather than measured as if they were set."""
from __future__ import annotations

import json
import os

import pytest

from bench import idle


def test_a_machine_without_haltpoll_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(idle, "PARAMS", tmp_path / "none")
    with pytest.raises(idle.IdleError, match="no haltpoll"):
        with idle.poll_before_halt(400_000):
            pass
    with idle.poll_before_halt(0) as now:   # 0: as the machine is
        assert now == {}


def test_the_knobs_are_set_then_put_back(tmp_path, monkeypatch):
    params = tmp_path / "parameters"
    params.mkdir()
    for k, v in zip(idle.KNOBS, ("0", "50000", "Y")):
        (params / k).write_text(v + "\n")
    monkeypatch.setattr(idle, "PARAMS", params)
    with pytest.raises(RuntimeError):
        with idle.poll_before_halt(400_000) as now:
            assert now == {"guest_halt_poll_ns": "400000",
                           "guest_halt_poll_grow_start": "400000",
                           "guest_halt_poll_allow_shrink": "N"}
            raise RuntimeError("the benchmark failed")
    assert idle.settings() == {"guest_halt_poll_ns": "0", "guest_halt_poll_grow_start": "50000",
                               "guest_halt_poll_allow_shrink": "Y"}


@pytest.mark.skipif(os.geteuid() != 0 or not idle.PARAMS.is_dir(),
                    reason="the kernel's haltpoll knobs: root on a KVM guest")
def test_the_kernel_takes_the_setting_and_gets_its_own_back():
    before = idle.settings()
    with idle.poll_before_halt(123_000) as now:
        assert now["guest_halt_poll_ns"] == "123000"
    assert idle.settings() == before


def test_a_cell_measured_with_the_guest_polling_is_marked(tmp_path):
    """A cell bench/overhead.py --idle-poll-us measured says so in the
    generated table and its footnote; the others do not."""
    from runners import docs
    cell = {"ratios": [0.95, 0.97], "median": 0.96, "settled": True, "run_folder": "runs"}
    data = {"sync-on-1t": {"walscope-budget": {**cell, "idle_poll_us": 400}},
            "sync-on-4t": {"walscope-budget": cell}}
    path = tmp_path / "overhead.json"
    path.write_text(json.dumps(data))
    table = docs.overhead(path)
    rows = {line.split(" | ")[0]: line for line in table.splitlines() if line.startswith("| db")}
    assert "0.96 (2)*†‡" in rows["| db_bench, sync=true, 1 thread"]
    assert "‡" not in rows["| db_bench, sync=true, 4 threads"]
    assert "‡ measured with the guest polling 400 us before it halts" in table
    path.write_text(json.dumps({"sync-on-4t": {"walscope-budget": cell}}))
    assert "‡" not in docs.overhead(path)


@pytest.mark.skipif(os.geteuid() != 0, reason="bench/overhead.py runs as root")
def test_overhead_renders_its_results_again(tmp_path, monkeypatch):
    """bench/overhead.py --reps 0 --merge writes overhead.md again from
    overhead.json, through the same path a measured run ends on (where a
    refactor once lost a whole batch at its last step)."""
    import shutil

    from bench import overhead
    monkeypatch.chdir(tmp_path)   # it moves to the checkout: put back after
    shutil.copy(overhead.ROOT / "bench" / "results" / "overhead.json", tmp_path)
    assert overhead.main(["--reps", "0", "--merge", "-o", str(tmp_path)]) == 0
    md = (tmp_path / "overhead.md").read_text()
    assert "walscope-budget" in md and "untraced-again" in md
