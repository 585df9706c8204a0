#!/usr/bin/env python3
"""Tracing overhead: throughput traced / untraced, walscope vs the usual tools.

For db_bench fillrandom with sync=true/false and 1/4 threads, runs each tool
A/B interleaved with an untraced run, several times, and reports the ratio
of db_bench's ops/sec (median and spread) per tool, plus walscope's
collector CPU time.  Tools: walscope --mode full|writes|sample|window (and
sample --sched: with the sched_switch programs; full-nostacks: full without
off-CPU stacks), strace -f and
perf trace on the same syscalls, and bpftrace with the same uprobes as
--mode full; and untraced-again, an untraced run against an untraced run,
whose spread is the noise floor any other figure must be read against.

    sudo bench/overhead.py [--reps 3] [-o bench/results]

Writes overhead.json and overhead.md (the table) to the output folder.
"""
from __future__ import annotations

import argparse
import atexit
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402
from bench.cells import MANY_CORE  # noqa: E402
from bench.idle import IdleError, add_option, poll_before_halt  # noqa: E402

in_venv(str(ROOT / "trace_wal.py"), __file__)   # sudo bench/x.py: .venv's Python
from collectors.session import SAFE_PATH  # noqa: E402
from runfolder.files import RUNS_DIR  # noqa: E402
# traced runs' folders: the plain command's place (its working directory
# is ROOT), this process's own names
RUNS = ROOT / RUNS_DIR
RUN_PREFIX = f"bench-overhead-{os.getpid()}-"
PY = sys.executable   # .venv's where setup.sh made one (trace_wal.py moves there)
SYSCALLS = "write,pwrite64,writev,pwritev,fsync,fdatasync,sync_file_range,openat,close,unlink,ftruncate"
LIB = "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8"

WORKLOADS = {  # name: db_bench args (num per thread sized for ~1-3 s untraced)
    "sync-on-1t": ["--sync=true", "--threads=1", "--num=6000"],
    "sync-on-4t": ["--sync=true", "--threads=4", "--num=3000"],
    "sync-off-1t": ["--sync=false", "--threads=1", "--num=200000"],
    "sync-off-4t": ["--sync=false", "--threads=4", "--num=100000"],
    # seed 004's load (runners/workloads/sqlite_tpcc): 2 client processes, FULL sync,
    # DELETE and WAL journals; tpmC is the throughput, 4 s per --scale
    "sqlite-delete-2c": ["--journal-mode=delete", "--clients=2", "--duration=4"],
    "sqlite-wal-2c": ["--journal-mode=wal", "--clients=2", "--duration=4"],
    # low-rate synced writers, as a server's clients commit: db_bench's rate
    # limiter holds them to ~300 writes/s (34800 B/s of 116 B writes) for
    # ~5 s, traced or not: the ratio is ~1 by construction, what the cell
    # shows is what the default records of them
    "sync-on-300ps-1t": ["--sync=true", "--threads=1", "--num=1500",
                         "--benchmark_write_rate_limit=34800"],
    "sync-on-300ps-4t": ["--sync=true", "--threads=4", "--num=375",
                         "--benchmark_write_rate_limit=34800"],
}
TWO_CORE = list(WORKLOADS)
WORKLOADS.update(MANY_CORE)
# tools this slow get at most this many reps (strace: ~100x on sync=false)
SLOW_TOOLS = {"strace": 3}

# the uprobes of --mode full as attached by default (AddRecord, the inner
# WriteToWAL and the single-stepped crc32c::Extend are not), each timed
BPFTRACE_FULL = """
uprobe:{lib}:_ZN7rocksdb6DBImpl9WriteImplE*, uprobe:{lib}:*JoinBatchGroup*,
uprobe:{lib}:*AwaitState*, uprobe:{lib}:*DBImpl10WriteToWALERKNS_11WriteThread10WriteGroup*,
uprobe:{lib}:*WriteBatchInternal10InsertInto*
/comm == "db_bench"/ {{ @s[tid, probe] = nsecs; }}
uretprobe:{lib}:_ZN7rocksdb6DBImpl9WriteImplE*, uretprobe:{lib}:*JoinBatchGroup*,
uretprobe:{lib}:*AwaitState*, uretprobe:{lib}:*DBImpl10WriteToWALERKNS_11WriteThread10WriteGroup*,
uretprobe:{lib}:*WriteBatchInternal10InsertInto*
/comm == "db_bench"/ {{ @n[probe] = count(); }}
uprobe:{lib}:*EnterAsBatchGroupLeader* /comm == "db_bench"/ {{ @leaders = count(); }}
""".format(lib=LIB)


def ops_per_sec(out: str) -> float:
    """db_bench's ops/sec, or the TPC-C-like driver's tpmC."""
    m = re.search(r"fillrandom\s+:.*?(\d+) ops/sec", out) or \
        re.search(r"^tpmC (\d+)", out, re.M)
    if not m:
        raise RuntimeError("no ops/sec or tpmC in the workload's output:\n" + out[-800:])
    return float(m.group(1))


def scaled(wl: list[str], scale: float) -> list[str]:
    """The workload made --scale times longer (--num or --duration)."""
    out = []
    for a in wl:
        k, _, v = a.partition("=")
        if k in ("--num", "--duration"):
            a = f"{k}={max(1, round(float(v) * scale))}"
        out.append(a)
    return out


def threads_of(wl: list[str]) -> int:
    return int(next((a.split("=")[1] for a in wl
                     if a.startswith(("--threads=", "--clients="))), "1"))


def median_ci(xs: list[float], level: float = 0.95) -> tuple[float, float] | None:
    """A distribution-free confidence interval for the median: the order
    statistics x(k) and x(n+1-k) with the largest k such that a Binomial(n,
    1/2) falls below k with probability at most (1 - level) / 2.  None when
    n is too small for any k (n < 6 at 95%)."""
    n = len(xs)
    tail, k, cum = (1 - level) / 2, 0, 0.0
    while True:   # cum = P(B <= k) after the loop body
        cum += math.comb(n, k) / 2 ** n
        if cum > tail:
            break
        k += 1
    if k == 0:
        return None
    v = sorted(xs)
    return v[k - 1], v[n - k]


def cell(r: dict) -> str:
    """A table cell: the median, and its 95% interval (the range when
    there are too few pairs for one)."""
    ci = median_ci(r["ratios"])
    lo, hi = ci if ci else (min(r["ratios"]), max(r["ratios"]))
    return f"{r['median']:.2f} [{lo:.2f}, {hi:.2f}]" + ("" if ci else " (range)")


def added_cell(r: dict) -> str:
    """A cell of the added-latency table ("-" for cells measured before it)."""
    xs = r.get("added_us")
    if not xs:
        return "-"
    ci = median_ci(xs)
    lo, hi = ci if ci else (min(xs), max(xs))
    return f"{statistics.median(xs):.1f} [{lo:.1f}, {hi:.1f}]" + ("" if ci else " (range)")


def workload(db: str, args: list[str]) -> list[str]:
    if any(a.startswith("--journal-mode") for a in args):
        return ["python3", "-m", "runners.workloads.sqlite_tpcc", f"--db={db}/tpcc.db",
                f"--template-dir={db}-template", "--synchronous=full",
                "--warehouses=1", "--scale=0.02", *args]
    return ["db_bench", "--benchmarks=fillrandom", f"--db={db}", *args]


def disk_counters() -> list[str]:
    """Every block device's I/O counters (/proc/diskstats), loop and ram
    devices aside."""
    with open("/proc/diskstats") as f:
        return [l for l in f if not l.split()[2].startswith(("loop", "ram"))]


def settle(quiet_s: float = 1.0, limit_s: float = 60.0) -> None:
    """Until the disks have done nothing for quiet_s (at most limit_s): the
    last run's deleted files are discarded and its journal committed before
    the next run starts, whichever arm it is: the untraced arm starts at
    once, the traced one only after the tracer's set-up.  (It did not
    explain why traced synced runs measure faster: bench/results/NOTES.md.)"""
    end = time.monotonic() + limit_s
    before = disk_counters()
    while time.monotonic() < end:
        time.sleep(quiet_s)
        now = disk_counters()
        if now == before:
            return
        before = now


def run_tool(tool: str, wl: list[str], tmp: Path, settled: bool = True
             ) -> tuple[float, dict]:
    db = str(tmp / "db")
    shutil.rmtree(db, ignore_errors=True)
    # the last traced run's folder (~6 MB) too, before the disks settle:
    # freed during the next run (a discard-mounted file system), it would
    # load the traced arm's syncs alone
    for old in [*tmp.glob("run-*"), *RUNS.glob(f"{RUN_PREFIX}*")]:
        shutil.rmtree(old, ignore_errors=True)
    os.makedirs(db)
    os.sync()  # the last run's dirty pages are written back now, not during this run
    if settled:
        settle()
    cmd = workload(db, wl)
    extra: dict = {}
    bg = None
    if tool in ("untraced", "untraced-again"):  # the second: A/A noise control
        # the PATH trace_wal.py gives its workload: "python3" must be the
        # same interpreter (and SQLite library) traced and untraced
        p = subprocess.run(cmd, capture_output=True, text=True,
                           env={**os.environ, "PATH": SAFE_PATH})
        out = p.stdout
    elif tool.startswith("walscope-"):
        mode = tool.split("-")[1]
        flags = ["--sched"] if tool.endswith("-sched") else \
            ["--no-offcpu-stacks"] if tool.endswith("-nostacks") else []
        if mode == "everywrite":   # the default's every-write state, kept all run
            mode, flags = "budget", ["--budget", "50"]
        elif mode.startswith("budget") and mode[6:]:   # walscope-budget1: --budget 1
            mode, flags = "budget", ["--budget", mode[6:]]
        # where the plain command puts it (runs/ under the working
        # directory), not beside the database: on this VM's journal-less
        # ext4 a run folder beside an fsync-bound database cost it 2-4%
        # (bench/results/NOTES.md, eleventh session)
        rd = RUNS / f"{RUN_PREFIX}{mode}"
        p = subprocess.run([PY, str(ROOT / "trace_wal.py"), "-q", "--mode", mode, *flags,
                            "-o", str(rd), "--", *cmd], capture_output=True, text=True)
        out = (rd / "command.log").read_text()
        s = json.loads((rd / "summary.json").read_text())
        extra = {"collector_cpu_s": (s["collector"].get("cpu_user_s") or 0)
                 + (s["collector"].get("cpu_sys_s") or 0),
                 "lost": sum(s["lost_events"].values()),
                 "probe_hits": s["probe_hits"]["uprobe"] + s["probe_hits"]["uretprobe"]}
        if s.get("budget"):   # the default mode: what it recorded
            extra["every_write"] = bool(s["budget"]["every_write"])
            extra["recorded_share"] = s["budget"]["share"]
    elif tool == "strace":
        p = subprocess.run(["strace", "-f", "-qq", "-o", str(tmp / "strace.out"),
                            "-e", f"trace={SYSCALLS}", *cmd], capture_output=True, text=True)
        out = p.stdout
    elif tool == "perf-trace":
        p = subprocess.run(["perf", "trace", "-o", str(tmp / "perf.out"),
                            "-e", SYSCALLS, "--", *cmd], capture_output=True, text=True)
        out = p.stdout
    elif tool == "bpftrace":
        script = tmp / "full.bt"
        script.write_text(BPFTRACE_FULL)
        bg = subprocess.Popen(["bpftrace", str(script)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        for _ in range(200):  # wait until attached
            time.sleep(0.1)
            if bg.poll() is not None:
                break
            if "bpftrace" in subprocess.run(["bpftool", "perf", "list"],
                                            capture_output=True, text=True).stdout:
                time.sleep(1)
                break
        p = subprocess.run(cmd, capture_output=True, text=True)
        out = p.stdout
        bg.send_signal(2)
        bg.communicate(timeout=60)
    else:
        raise ValueError(tool)
    return ops_per_sec(out), extra


def save_merged(path: Path, results: dict) -> None:
    """Update overhead.json's cells with these."""
    merged = json.loads(path.read_text()) if path.exists() else {}
    for wname, per in results.items():
        merged.setdefault(wname, {}).update(per)
    merged = {w: merged[w] for w in WORKLOADS if w in merged}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(merged, indent=2) + "\n")
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3,
                    help="pairs per cell (0 with --merge: only render overhead.md "
                         "again from overhead.json)")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--tools", default="untraced-again,walscope-budget,walscope-full,"
                                       "walscope-writes,walscope-sample,"
                                       "walscope-sample-sched,walscope-window,strace,"
                                       "perf-trace,bpftrace")
    ap.add_argument("--workloads", default=",".join(TWO_CORE))
    ap.add_argument("--scale", type=float, default=1.0,
                    help="make each workload this many times longer (window mode "
                         "needs runs of seconds: its windows are seconds apart)")
    ap.add_argument("--merge", action="store_true",
                    help="update the cells measured into the output folder's "
                         "overhead.json instead of replacing it")
    add_option(ap)
    ap.add_argument("--no-settle", action="store_true",
                    help="start each run right after the sync, without waiting "
                         "for the disks to go quiet (how runs before 2026-11-24 "
                         "(second session) were made)")
    a = ap.parse_args(argv)
    if os.geteuid() != 0:
        print("overhead.py: run as root", file=sys.stderr)
        return 1
    try:
        with poll_before_halt(a.idle_poll_us * 1000):
            return measure(a, ap.get_default("tools").split(","))
    except IdleError as e:
        print(f"overhead.py: {e}", file=sys.stderr)
        return 1


def measure(a: argparse.Namespace, default_tools: list[str]) -> int:
    tools = a.tools.split(",")
    os.chdir(ROOT)   # the SQLite workload is a module of this repository
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    a.output.mkdir(parents=True, exist_ok=True)
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="walscope-bench-") as t:
        tmp = Path(t)
        atexit.register(lambda: [shutil.rmtree(d, ignore_errors=True)
                                 for d in RUNS.glob(f"{RUN_PREFIX}*")])
        for wname in a.workloads.split(","):
            wl = scaled(WORKLOADS[wname], a.scale)
            for tool in tools:
                ratios, extras, bases, added = [], [], [], []
                threads = threads_of(wl)
                for rep in range(min(a.reps, SLOW_TOOLS.get(tool, a.reps))):
                    # A/B interleaved, the order alternating so that a
                    # drift between the two runs of a pair cancels out
                    if rep % 2 == 0:
                        base, _ = run_tool("untraced", wl, tmp, not a.no_settle)
                        val, extra = run_tool(tool, wl, tmp, not a.no_settle)
                    else:
                        val, extra = run_tool(tool, wl, tmp, not a.no_settle)
                        base, _ = run_tool("untraced", wl, tmp, not a.no_settle)
                    ratios.append(val / base)
                    extras.append(extra)
                    bases.append(base)
                    # what the tool adds to each write's latency (ops/sec is
                    # all threads'): comparable across disks, where the ratio
                    # depends on how long the untraced write takes
                    added.append(threads * (1 / val - 1 / base) * 1e6)
                    print(f"{wname:16} {tool:16} rep {rep}: {val:9.0f} / {base:9.0f} "
                          f"= {val / base:.3f}", flush=True)
                if not ratios:   # --reps 0: nothing measured
                    continue
                results.setdefault(wname, {})[tool] = {
                    "ratios": ratios, "median": statistics.median(ratios),
                    "spread": max(ratios) - min(ratios),
                    "untraced_ops": bases, "added_us": added,
                    "added_us_median": statistics.median(added),
                    "collector_cpu_s": statistics.median(
                        [e.get("collector_cpu_s", 0) for e in extras]) if extras[0] else None,
                    "lost": sum(e.get("lost", 0) for e in extras),
                    "scale": a.scale, "settled": not a.no_settle, "commit": commit,
                    "run_folder": "runs",
                    **({"idle_poll_us": a.idle_poll_us} if a.idle_poll_us else {})}
                shares = [e["recorded_share"] for e in extras
                          if e.get("recorded_share") is not None]
                if shares:   # the default mode: how much of each run it recorded
                    results[wname][tool].update(
                        every_write_runs=sum(bool(e.get("every_write")) for e in extras),
                        recorded_share_median=statistics.median(shares))
                if a.merge:   # each cell kept as it is measured: a stop loses no other
                    save_merged(a.output / "overhead.json", {wname: {tool: results[wname][tool]}})
    old_json = a.output / "overhead.json"
    if a.merge and old_json.exists():
        merged = json.loads(old_json.read_text())
        for wname, per in results.items():
            merged.setdefault(wname, {}).update(per)
        results = {w: merged[w] for w in WORKLOADS if w in merged}
    tools = [t for t in default_tools if any(t in per for per in results.values())] + \
        [t for t in tools if t not in default_tools]
    lines = ["| workload | " + " | ".join(tools) + " |",
             "|---|" + "---|" * len(tools)]
    for wname, per in results.items():
        cells = [cell(per[t]) if t in per else "-" for t in tools]
        lines.append(f"| {wname} | " + " | ".join(cells) + " |")
    lines += ["", "Latency added to each write, us (threads / traced ops/s - threads / "
              "untraced ops/s, per pair; median [95% interval]), and the untraced "
              "ops/s of the pairs (median):", "",
              "| workload | untraced ops/s | " + " | ".join(tools) + " |",
              "|---|---|" + "---|" * len(tools)]
    for wname, per in results.items():
        bases = [b for t in tools if t in per for b in per[t].get("untraced_ops", [])]
        cells = [added_cell(per[t]) if t in per else "-" for t in tools]
        lines.append(f"| {wname} | {statistics.median(bases):.0f} | " if bases else
                     f"| {wname} | - | ")
        lines[-1] += " | ".join(cells) + " |"
    lines += ["", "What the default (walscope-budget) recorded: the runs that recorded "
              "every write, and the median share of the run's writes recorded:", "",
              "| workload | every write | recorded |", "|---|---|---|"]
    for wname, per in results.items():
        r = per.get("walscope-budget", {})
        if r.get("recorded_share_median") is not None:
            lines.append(f"| {wname} | {r['every_write_runs']} of {len(r['ratios'])} runs | "
                         f"{r['recorded_share_median'] * 100:.1f}% |")
    table = "\n".join(lines)
    print("\nthroughput traced / untraced, median [95% interval of the median], "
          "pairs per cell in overhead.json; untraced-again is an untraced run against "
          "an untraced run (the noise floor)\n" + table)
    (a.output / "overhead.json").write_text(json.dumps(results, indent=2) + "\n")
    (a.output / "overhead.md").write_text(table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
