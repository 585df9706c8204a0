"""Probe overhead along who waited for whom: the waits that others' probes
lengthened.

A write's own probe hits are subtracted from the components they landed in
(writes.writes_frame_from).  Under contention that is not all the probes
cost it: while it waited, others ran their probes, and its wait grew by
that much.  Two waits are charged here, each from the others' probe time
inside it (wPerf's idea, OSDI'18: follow the wait-for relation to where the
time went):

- **sched_runq**: runnable, waiting for a CPU.  The CPUs were busy with
  others' work, and a share of that work was their probes: the wait shrinks
  by that share.  The share is the others' probe time during the write over
  the CPUs' time then (all of them: a runnable thread waits for whichever
  frees first).
- **the leader wait** (the engine unit's ``leader_wait``: RocksDB's queue):
  a follower waiting for its group's leader, which was slowed by its own
  probes and by whatever lengthened its waits.  The follower's wait (taken
  as the start of its write, where RocksDB's JoinBatchGroup is) shrinks by
  the leaders' delay that fell inside it: each leader's delay (its own
  probe time plus its run-queue charge) spread over its write.

Each write's probe time is spread evenly over its span: the probes fire at
its phase boundaries, which cover it from end to end.  The result is, per
write, what to remove from each of the two components (at most all of it).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

import engines

RUNQ = engines.SCHED_RUNQ.name   # the scheduler's shared slot


def _integral(starts: np.ndarray, ends: np.ndarray, rates: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """The running integral F of the sum of rates[i] over [starts[i],
    ends[i]): knots (t, F(t)); F between knots is linear."""
    if not len(starts):
        return np.zeros(1), np.zeros(1)
    t = np.concatenate([starts, ends])
    d = np.concatenate([rates, -rates])
    order = np.argsort(t, kind="stable")
    t, d = t[order].astype(np.float64), d[order]
    level = np.cumsum(d)                  # the rate after each knot
    f = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(t))])
    return t, f


def _between(knots: tuple[np.ndarray, np.ndarray], a: np.ndarray, b: np.ndarray
             ) -> np.ndarray:
    t, f = knots
    return np.interp(b, t, f) - np.interp(a, t, f)


def charges(w: pd.DataFrame, overhead_ns: np.ndarray, ncpu: int,
            leader_wait: str | None) -> dict[str, np.ndarray]:
    """What others' probes added to each write's sched_runq and leader wait
    (ns): w has start_ns, dur_ns, pid, leader and the two components' raw
    time (sched_runq_ns, <leader_wait>_ns); overhead_ns is each write's own
    probe time; leader_wait None: the run queue alone."""
    n = len(w)
    out = {c: np.zeros(n, np.int64) for c in (RUNQ, leader_wait) if c}
    if not n:
        return out
    start = w["start_ns"].to_numpy(np.float64)
    dur = np.maximum(w["dur_ns"].to_numpy(np.float64), 1.0)
    end = start + dur
    own = overhead_ns.astype(np.float64)
    # run queue: others' probe time during the write, over all CPUs' time
    probes = _integral(start, end, own / dur)
    others = np.maximum(_between(probes, start, end) - own, 0.0)
    share = np.minimum(others / (max(ncpu, 1) * dur), 1.0)
    runq = w["sched_runq_ns"].to_numpy(np.float64) if "sched_runq_ns" in w else np.zeros(n)
    out[RUNQ] = np.floor(runq * share).astype(np.int64)
    if not leader_wait or f"{leader_wait}_ns" not in w or "leader" not in w:
        return out
    # the leaders' delay inside each follower's wait, per process
    queue = w[f"{leader_wait}_ns"].to_numpy(np.float64)
    leader = w["leader"].to_numpy(bool)
    pid = w["pid"].to_numpy()
    delay = own + out[RUNQ]
    got = np.zeros(n)
    for p in np.unique(pid):
        lead = (pid == p) & leader
        wait = (pid == p) & ~leader & (queue > 0)
        if not lead.any() or not wait.any():
            continue
        knots = _integral(start[lead], end[lead], delay[lead] / dur[lead])
        got[wait] = _between(knots, start[wait], start[wait] + queue[wait])
    out[leader_wait] = np.floor(np.minimum(got, queue)).astype(np.int64)
    return out
