"""Off-CPU stacks (BPF at sched_switch) against a workload that measures itself."""
from __future__ import annotations

import pytest
import json
import subprocess

from tests.conftest import ROOT, run_trace, trace_known_offcpu

pytestmark = pytest.mark.root   # end-to-end: root, a live kernel, the build

SLEEPS, SLEEP_S, SPIN_S = 40, 0.02, 1.0


def folded(path) -> list[tuple[list[str], int]]:
    out = []
    for line in path.read_text().splitlines():
        stack, n = line.rsplit(" ", 1)
        out.append((stack.split(";"), int(n)))
    return out


def test_offcpu_blocked_and_runnable(tmp_path):
    p = trace_known_offcpu(tmp_path, ["-q"], SLEEPS, SLEEP_S, SPIN_S)
    assert p.returncode == 0, p.stderr[-2000:]
    me = json.loads((tmp_path / "m.json").read_text())
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    info = s["offcpu_stacks"]
    assert info["lost_kernel_stacks"] == 0 and info["periods"] >= SLEEPS
    stacks = folded(tmp_path / "o" / "offcpu-stacks.folded")
    assert all(st[1] in ("[blocked]", "[runnable]") for st, _ in stacks)
    # blocked: every sleep, under the kernel's nanosleep path, and no more
    # than the loop's own wall time
    slept = sum(n for st, n in stacks if st[1] == "[blocked]" and "do_nanosleep" in st)
    assert SLEEPS * SLEEP_S * 1e6 <= slept <= me["sleep_wall_s"] * 1e6
    # runnable: the spin's wall time it did not get a CPU for; the spinner
    # is preempted, so its stacks are not blocked ones
    waited = (me["spin_wall_s"] - me["spin_cpu_s"]) * 1e6
    assert waited > 0.2 * SPIN_S * 1e6, me   # the competitor did compete
    runnable = sum(n for st, n in stacks if st[1] == "[runnable]")
    assert abs(runnable - waited) <= 0.1 * SPIN_S * 1e6, (runnable, waited)
    assert (tmp_path / "o" / "flame-offcpu-stacks.svg").exists()


def test_offcpu_stacks_off(tmp_path):
    p = run_trace(["-q", "--no-offcpu-stacks", "--allow-empty", "-o", str(tmp_path / "o"), "--",
                   "python3",
                   str(ROOT / "tests" / "offcpu_workload.py"), str(tmp_path / "m.json"),
                   "0", "2", "0.001", "0.01"], timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert "offcpu_stacks" not in s
    assert not (tmp_path / "o" / "offcpu.bin").exists()


def test_stack_map_misses_are_counted_and_shown(tmp_path):
    """A one-entry stack map keeps one stack: every other one is a counted
    loss, in summary.json, the table and the folded stacks.  The spin's
    competitor makes sure there are two: sleeps, and preemptions."""
    p = trace_known_offcpu(tmp_path, ["--stack-entries", "1"], 20, 0.002, 0.05)
    assert p.returncode == 0, p.stderr[-2000:]
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["lost_events"]["stack"] > 0
    assert s["offcpu_stacks"]["lost_kernel_stacks"] > 0
    n = s["lost_events"]["stack"]
    assert f"{n:,} stack{'' if n == 1 else 's'} lost" in p.stdout   # (analysis/losses.py)
    assert "[kernel_stack_lost]" in (tmp_path / "o" / "offcpu-stacks.folded").read_text()
    assert f"{s['lost_events']['stack']} stacks not kept" in p.stderr
    assert "--stack-entries N, a bigger map, keeps more" in p.stderr


def test_sampled_stacks_keep_totals_and_place_the_rest(tmp_path):
    """--offcpu-stack-every 8: stacks are walked for a fraction of the
    periods (1 in 8 at random, plus one a thread every 10 ms), the others'
    time goes to the stacks sampled for the same thread, user IP and
    syscall: every sleep still lands under the kernel's nanosleep path."""
    sleeps, sleep_s = 400, 0.001
    p = trace_known_offcpu(tmp_path, ["-q", "--offcpu-stack-every", "8"], sleeps, sleep_s, 0.2)
    assert p.returncode == 0, p.stderr[-2000:]
    me = json.loads((tmp_path / "m.json").read_text())
    info = json.loads((tmp_path / "o" / "summary.json").read_text())["offcpu_stacks"]
    assert info["stack_every"] == 8 and info["periods"] >= sleeps
    assert 0 < info["sampled_periods"] < 0.5 * info["periods"], info
    stacks = folded(tmp_path / "o" / "offcpu-stacks.folded")
    slept = sum(n for st, n in stacks if st[1] == "[blocked]" and "do_nanosleep" in st)
    assert sleeps * sleep_s * 1e6 <= slept <= me["sleep_wall_s"] * 1e6, (slept, me)
    # the folded total is the periods' total: nothing dropped by the spreading
    total = sum(n for _, n in stacks)
    assert abs(total - info["blocked_us"] - info["runnable_us"]) <= len(stacks) + 1


def test_the_stack_map_size_in_help_is_the_maps():
    """--help's default for --stack-entries is the stack map's own size in
    probes/maps.bpf.h (one fact, said twice: held together here)."""
    import re
    text = (ROOT / "probes" / "maps.bpf.h").read_text()
    size = re.search(r"max_entries, (\d+)\);\s*/\* resized by the loader \*/\s*"
                     r"__type\(key, __u32\);\s*__uint\(value_size, WS_STACK_DEPTH", text)
    assert size, "the stacks map's definition in probes/maps.bpf.h"
    p = subprocess.run([str(ROOT / "trace_wal.py"), "--help"], capture_output=True, text=True,
                       timeout=120)
    assert f"probes/maps.bpf.h's, {size.group(1)};" in " ".join(p.stdout.split())
