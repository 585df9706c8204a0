"""How far a traced run's latencies can be trusted: its self-check.

Compensation removes what the probes cost each write (its own hits) and the
waits others' probes lengthened, as far as the wait-for chain shows them
(analysis/chain.py).  What it cannot follow is the scheduler's response to
longer writes: a write three times longer is three times likelier to be
preempted mid-way, and a leader preempted mid-group stalls its followers
for a time slice.  That error grows with how much the probes lengthened
the writes (inflation: raw mean / compensated mean - 1) and with how much
of the compensated latency is waiting (queue and run queue: wait share).
Their product is the run's risk; bench/truth.py measured the compensated
mean against the workload's own untraced timing across regimes, and
RISK_TRUSTED is the largest risk at which every regime stayed within
TOLERANCE (docs/attribution.md, generated from bench/results/truth.json).
"""
from __future__ import annotations

from typing import Any

# the components that are waits another write or thread can lengthen
WAITS = ("queue", "sched_runq")
# the stated tolerance of a compensated mean, and the largest risk at which
# bench/truth.py found every workload within it on the 2-core VM: 0.03
# (sync=true 4 threads: risk 0.01-0.02, mean 1.00x; sync=false 1 thread:
# 0.02-0.03, 1.0-1.2x; sync=false 4 threads: 0.3-0.4, 2.3-3.6x)
TOLERANCE = 0.15
RISK_TRUSTED = 0.03


def self_check(summary: dict[str, Any]) -> dict[str, Any] | None:
    """summary.json's self_check, from its write components; None without
    per-write rows."""
    writes = summary.get("writes", {})
    raw = writes.get("duration", {}).get("mean_ns")
    adj = writes.get("duration_adj", {}).get("mean_ns")
    if not writes.get("count") or not raw or not adj:
        return None
    comps = summary.get("components", {})
    wait = sum(comps.get(c, {}).get("mean_ns", 0.0) for c in WAITS)
    inflation = max(raw / adj - 1, 0.0)
    share = min(wait / adj, 1.0)
    risk = inflation * share
    return {"inflation": inflation, "wait_share": share, "risk": risk,
            "risk_trusted": RISK_TRUSTED, "tolerance": TOLERANCE,
            "trusted": risk <= RISK_TRUSTED}


def line(check: dict[str, Any]) -> str:
    """The table's two lines (80 columns)."""
    head = (f"self-check: probes lengthened writes {check['inflation'] * 100:.0f}%, "
            f"waits are {check['wait_share'] * 100:.0f}% of latency: risk "
            f"{check['risk']:.3f}")
    if check["trusted"]:
        return head + f"\n  <= {check['risk_trusted']}: latencies within " \
            f"{check['tolerance'] * 100:.0f}% of untraced (bench/truth.py)"
    return head + f"\n  > {check['risk_trusted']}: latencies may read high: waits the " \
        "probes lengthened (docs/attribution.md)"
