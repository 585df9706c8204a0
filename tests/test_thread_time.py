"""Thread time from the kernel's own accounting (struct ws_task_rec: no hook
on the context switch), against workloads that measure themselves and
against the sched_switch programs' off-CPU sums in the same run."""
from __future__ import annotations

import pytest
import json
import subprocess
import time

import pandas as pd

from tests.conftest import ROOT, run_trace, trace_known_offcpu

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

SLEEPS, SLEEP_S, SPIN_S = 40, 0.02, 1.0
WORKLOAD = str(ROOT / "tests" / "offcpu_workload.py")


def test_blocked_and_runnable_of_a_known_workload(tmp_path):
    """Sample mode (nothing on the scheduler): the main thread's blocked time
    holds its sleeps, its runnable time is the spin's wall time it did not
    get the CPU for, and its on-CPU time holds the spin's CPU time."""
    p = trace_known_offcpu(tmp_path, ["--mode", "sample"], SLEEPS, SLEEP_S, SPIN_S)
    assert p.returncode == 0, p.stderr[-2000:]
    me = json.loads((tmp_path / "m.json").read_text())
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["sched"] is False
    th = pd.read_parquet(tmp_path / "o" / "threads.parquet")
    main = th[th["tid"] == th["pid"]].iloc[0]
    assert main["exited"]
    # blocked: every sleep, and no more than the sleeps' wall time plus
    # start-up (imports read files from the page cache: little blocking)
    assert SLEEPS * SLEEP_S * 1e9 <= main["blocked_ns"] <= me["sleep_wall_s"] * 1e9 + 0.3e9
    waited = (me["spin_wall_s"] - me["spin_cpu_s"]) * 1e9
    assert waited > 0.2 * SPIN_S * 1e9, me   # the competitor did compete
    assert abs(main["runq_ns"] - waited) <= 0.1 * SPIN_S * 1e9, (main["runq_ns"], waited)
    assert main["oncpu_ns"] >= me["spin_cpu_s"] * 1e9
    assert main["window_ns"] == main["oncpu_ns"] + main["runq_ns"] + main["blocked_ns"]
    assert "threads (kernel)" in p.stdout and "add --sched" in p.stdout
    fg = s["thread_time"]["roles"]["foreground"]
    assert fg["blocked_ns"] >= main["blocked_ns"]


def test_agrees_with_the_sched_switch_sums(tmp_path):
    """db_bench, 1 thread, sync=true, with --sched: the off-CPU time the
    sched_switch programs sum for db_bench's threads is the off-CPU time
    (blocked + runnable) the kernel accounted for the same threads.  The
    kernel's runnable share is a lower bound: after a wakeup that preempts,
    the rq clock is not read again before the switch, so the wakeup's latency
    to run (~2 us a wakeup here, 0.1 us by run_delay) lands in blocked."""
    p = run_trace(["-q", "--mode", "sample", "--sched", "-o", str(tmp_path / "o"), "--",
                   "db_bench", f"--db={tmp_path}/db", "--benchmarks=fillrandom",
                   "--num=2000", "--threads=1", "--sync=true"], timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    rows = s["offcpu_stacks"]["by_syscall"]
    hooked_blocked = sum(r["blocked_us"] for r in rows) * 1e3
    hooked_runnable = sum(r["runnable_us"] for r in rows) * 1e3
    th = pd.read_parquet(tmp_path / "o" / "threads.parquet")
    fg = th[~th["thread"].str.startswith("rocksdb:")]   # the sums' threads
    kernel_off = fg["blocked_ns"].sum() + fg["runq_ns"].sum()
    print(f"off-CPU: kernel {kernel_off / 1e6:.1f} ms "
          f"(runnable {fg['runq_ns'].sum() / 1e6:.1f}), sched_switch "
          f"{(hooked_blocked + hooked_runnable) / 1e6:.1f} ms "
          f"(runnable {hooked_runnable / 1e6:.1f})")
    hooked = hooked_blocked + hooked_runnable
    # a failure says enough to tell why next time: one fresh clone read
    # kernel 883 ms against the sums' 805 (passed before and since)
    why = {"kernel_off": kernel_off, "hooked": hooked, "lost": s.get("lost_events"),
           "threads": fg[["thread", "blocked_ns", "runq_ns", "window_ns"]].to_dict("records"),
           "by_syscall": rows}
    assert abs(kernel_off - hooked) <= 0.05 * hooked, why
    assert fg["runq_ns"].sum() <= hooked_runnable * 1.1 + 1e6
    assert hooked > 0.3 * fg["window_ns"].max()   # fdatasyncs: blocked a lot


def test_attach_counts_from_the_attach(tmp_path):
    """-p PID: a thread that lived before the attach is counted from the
    baseline taken then, not from its birth."""
    # 30 s of 10 ms sleeps: alive through trace_wal's start-up however slow
    wl = subprocess.Popen(["python3", WORKLOAD, str(tmp_path / "m.json"), "0", "3000",
                           "0.01", "0.01"])
    try:
        time.sleep(1.5)   # 1.5 s of life before the attach
        p = run_trace(["-q", "--mode", "sample", "-p", str(wl.pid), "--duration", "1",
                       "-o", str(tmp_path / "o")], timeout=120)
    finally:
        wl.kill()
        wl.wait()
    assert p.returncode == 0, p.stderr[-2000:]
    th = pd.read_parquet(tmp_path / "o" / "threads.parquet")
    main = th[th["tid"] == wl.pid].iloc[0]
    assert not main["exited"]
    assert 0.9e9 <= main["window_ns"] <= 1.4e9, main
    assert main["blocked_ns"] >= 0.8e9   # it sleeps 10 ms at a time
