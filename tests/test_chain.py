"""Probe overhead along who waited for whom (analysis/chain.py), on
constructed writes: a leader whose probes delay its followers, threads that
share CPUs, and what must not be charged."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import engines
from analysis import chain

US = 1_000
QUEUE = engines.get("rocksdb").leader_wait   # "queue": the constructed writes' column


def writes(rows: list[dict]) -> tuple[pd.DataFrame, np.ndarray]:
    df = pd.DataFrame([{"pid": 1, "leader": False, "queue_ns": 0, "sched_runq_ns": 0,
                        "own": 0, **r} for r in rows])
    return df.drop(columns="own"), df["own"].to_numpy(np.int64)


def test_a_leaders_probes_delay_its_two_followers():
    # the leader runs 0-100 us with 20 us of probes; two followers wait
    # for it from 10 us and 50 us until it is done
    w, own = writes([
        {"start_ns": 0, "dur_ns": 100 * US, "leader": True, "own": 20 * US},
        {"start_ns": 10 * US, "dur_ns": 95 * US, "queue_ns": 90 * US, "own": 2 * US},
        {"start_ns": 50 * US, "dur_ns": 55 * US, "queue_ns": 50 * US, "own": 2 * US},
    ])
    got = chain.charges(w, own, ncpu=4, leader_wait=QUEUE)
    # the leader's 20 us spread over its 100 us: 0.2 ns a ns of wait inside it
    assert got["queue"].tolist() == [0, 18 * US, 10 * US]
    assert got["sched_runq"].tolist() == [0, 0, 0]


def test_a_wait_is_charged_only_its_own_processs_leaders():
    w, own = writes([
        {"start_ns": 0, "dur_ns": 100 * US, "leader": True, "own": 20 * US, "pid": 2},
        {"start_ns": 10 * US, "dur_ns": 95 * US, "queue_ns": 90 * US, "own": 2 * US},
    ])
    assert chain.charges(w, own, ncpu=4, leader_wait=QUEUE)["queue"].tolist() == [0, 0]


def test_two_threads_sharing_one_cpu():
    # A runs 0-100 us with 40 us of probes while B, runnable, waits 60 us
    # for the CPU: 40% of the CPU's time then was A's probes
    w, own = writes([
        {"start_ns": 0, "dur_ns": 100 * US, "own": 40 * US},
        {"start_ns": 0, "dur_ns": 100 * US, "sched_runq_ns": 60 * US},
    ])
    got = chain.charges(w, own, ncpu=1, leader_wait=QUEUE)
    assert got["sched_runq"].tolist() == [0, 24 * US]
    # with two CPUs the same probes took a fifth of the CPUs' time
    assert chain.charges(w, own, ncpu=2, leader_wait=QUEUE)["sched_runq"].tolist() == [0, 12 * US]


def test_own_probes_are_not_charged_again_and_charges_stay_within_the_wait():
    w, own = writes([
        {"start_ns": 0, "dur_ns": 10 * US, "sched_runq_ns": 5 * US, "own": 8 * US},
        {"start_ns": 0, "dur_ns": 10 * US, "leader": True, "own": 10 * US},
        {"start_ns": 0, "dur_ns": 10 * US, "queue_ns": 3 * US},
    ])
    got = chain.charges(w, own, ncpu=1, leader_wait=QUEUE)
    assert got["sched_runq"][0] == 5 * US          # all of it, not more
    assert got["queue"][2] == 3 * US
    alone, own1 = writes([{"start_ns": 0, "dur_ns": 10 * US, "sched_runq_ns": 5 * US,
                           "own": 8 * US}])
    assert chain.charges(alone, own1, ncpu=1, leader_wait=QUEUE)["sched_runq"][0] == 0


def test_a_leader_slowed_in_the_run_queue_passes_that_on():
    # the leader waited 30 us for a CPU that B's probes held half the time:
    # 15 us of its delay is B's, and its follower waited through all of it
    w, own = writes([
        {"start_ns": 0, "dur_ns": 100 * US, "own": 50 * US},                  # B
        {"start_ns": 0, "dur_ns": 100 * US, "leader": True, "sched_runq_ns": 30 * US},
        {"start_ns": 0, "dur_ns": 100 * US, "queue_ns": 100 * US},
    ])
    got = chain.charges(w, own, ncpu=1, leader_wait=QUEUE)
    assert got["sched_runq"][1] == 15 * US
    assert got["queue"][2] == pytest.approx(15 * US, abs=1)


def test_no_writes():
    w = pd.DataFrame(columns=["start_ns", "dur_ns", "pid", "leader", "queue_ns",
                              "sched_runq_ns"])
    got = chain.charges(w, np.zeros(0, np.int64), ncpu=2, leader_wait=QUEUE)
    assert all(len(v) == 0 for v in got.values())


def test_no_leader_wait_charges_the_run_queue_alone():
    """An engine whose follower wait the chain cannot place (PostgreSQL's
    WALWriteLock wait comes at the commit) gets no leader-wait charge."""
    w, own = writes([{"start_ns": 0, "dur_ns": 100 * US, "leader": True, "own": 30 * US},
                     {"start_ns": 0, "dur_ns": 100 * US, "queue_ns": 80 * US}])
    assert set(chain.charges(w, own, ncpu=4, leader_wait=None)) == {"sched_runq"}
    assert chain.charges(w, own, ncpu=4, leader_wait=QUEUE)["queue"][1] > 0
