#!/usr/bin/env python3
"""Interleaved rounds: an untraced run and any number of traced arms of one
workload, each round in a rotated order, the disks settled before every
run, each run timed by the workload's own clock.

bench/overhead.py pairs one tool with untraced runs, all of one tool's
pairs before the next tool's; comparing two tools there compares two
batches, which on this VM drift 2-4% apart.  Here every arm runs in
every round, so arm against arm is a per-round ratio too.

An arm is NAME=SPEC, SPEC one of:
  trace_wal.py's flags ("" the plain command), the run folder where the
  plain command puts it (runs/ under the checkout); before the flags,
  "beside:" puts it beside the database, "shm:" on /dev/shm, "at:DIR:"
  under DIR
  "bpftrace:PROGRAM": bpftrace running PROGRAM beside an untraced run

Workloads: bench/overhead.py's, and sqlite-delete-1c (bench/sqlite_commits.py:
one client, 4 s, its pairs spread ~2% where two clients' spread ±7%).

    sudo bench/rotation.py --rounds 30 --workload sqlite-delete-1c \\
        default= nosampling="--sample-hz 0" folder-beside-db=beside: -o out.json

--idle-poll-us N has the guest poll N us before it halts an idle vCPU for
the rotation (bench/idle.py): on this VM an fsync-bound workload runs
faster traced than untraced while idle vCPUs halt at once.

Prints each round and, per arm, the median and quartiles of arm /
untraced and of arm / every other arm, per round; writes them as JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from runners.command.entry import in_venv  # noqa: E402

in_venv(str(ROOT / "trace_wal.py"), __file__)   # sudo bench/x.py: .venv's Python
from bench.idle import IdleError, add_option, poll_before_halt  # noqa: E402
from bench.overhead import PY, RUNS, WORKLOADS, ops_per_sec, settle, workload  # noqa: E402
from collectors.session import SAFE_PATH  # noqa: E402

ONE_CLIENT = "sqlite-delete-1c"
SHM = Path("/dev/shm")


def command(wname: str, db: Path, result: Path) -> list[str]:
    """The workload's command line; its rate is read back by rate()."""
    if wname == ONE_CLIENT:   # the interpreter trace_wal.py's PATH finds
        return ["python3", str(ROOT / "bench" / "sqlite_commits.py"), str(db / "c.db"),
                "--result", str(result)]
    return workload(str(db), WORKLOADS[wname])


def rate(wname: str, result: Path, out: str) -> float:
    if wname == ONE_CLIENT:
        return json.loads(result.read_text())["commits_per_s"]
    return ops_per_sec(out)


def run_folder(spec: str, work: Path) -> tuple[Path, str]:
    """Where a traced arm's run folder goes, and its trace_wal.py flags."""
    if spec.startswith("shm:"):
        return SHM / f"walscope-rotation-{os.getpid()}", spec[4:]
    if spec.startswith("at:"):
        where, _, flags = spec[3:].partition(":")
        return Path(where) / f"walscope-rotation-{os.getpid()}", flags
    if spec.startswith("beside:"):
        return work / "run", spec[7:]
    return RUNS / f"rotation-{os.getpid()}", spec


def remove_run_folders(arms: dict[str, str], work: Path) -> None:
    """The traced arms' run folders (the others run walscope nowhere)."""
    for spec in arms.values():
        if spec != "untraced" and not spec.startswith("bpftrace:"):
            shutil.rmtree(run_folder(spec, work)[0], ignore_errors=True)


def run_arm(spec: str, wname: str, work: Path, name: str, arms: dict[str, str]) -> float:
    db, result = work / "db", work / "result.json"
    remove_run_folders(arms, work)   # every arm's leftovers, before the settle
    shutil.rmtree(db, ignore_errors=True)
    result.unlink(missing_ok=True)
    db.mkdir()
    os.sync()
    settle()
    cmd = command(wname, db, result)
    bg = None
    if spec == "untraced" or spec.startswith("bpftrace:"):
        if spec != "untraced":
            bg = subprocess.Popen(["bpftrace", "-e", spec.removeprefix("bpftrace:")],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            assert bg.stdout is not None
            bg.stdout.readline()   # "Attaching N probes..."
            time.sleep(0.5)
        p = subprocess.run(cmd, capture_output=True, text=True,
                           env={**os.environ, "PATH": SAFE_PATH})
        out = p.stdout
        if bg is not None:
            bg.send_signal(2)
            bg.communicate(timeout=60)
    else:
        folder, flags = run_folder(spec, work)
        subprocess.run([PY, str(ROOT / "trace_wal.py"), "-q", *shlex.split(flags), "-o", str(folder),
                        "--", *cmd], capture_output=True, text=True)
        log = folder / "command.log"
        out = log.read_text() if log.exists() else ""
    try:
        return rate(wname, result, out)
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        print(f"rotation.py: {name}: no rate ({e})", file=sys.stderr)
        return float("nan")


def spread(xs: list[float]) -> dict:
    xs = sorted(x for x in xs if x == x)
    if len(xs) < 4:
        return {"median": statistics.median(xs) if xs else None, "n": len(xs)}
    q = statistics.quantiles(xs, n=4)
    return {"median": round(statistics.median(xs), 4), "q1": round(q[0], 4),
            "q3": round(q[2], 4), "n": len(xs)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("arms", nargs="+", metavar="NAME=SPEC")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--workload", default=ONE_CLIENT,
                    choices=[ONE_CLIENT, *WORKLOADS])
    ap.add_argument("--db-dir", type=Path, default=Path("/var/tmp"),
                    help="where the database (and a run folder beside it) is made")
    add_option(ap)
    ap.add_argument("-o", "--output", type=Path, required=True, help="JSON results")
    a = ap.parse_args(argv)
    if os.geteuid() != 0:
        print("rotation.py: run as root", file=sys.stderr)
        return 1
    arms = {"untraced": "untraced"}
    for arm in a.arms:
        name, sep, spec = arm.partition("=")
        if not sep or not name or name in arms:
            ap.error(f"{arm}: expected NAME=SPEC with a new NAME")
        arms[name] = spec
    names = list(arms)
    work = a.db_dir / f"walscope-rotation-{os.getpid()}"
    work.mkdir(parents=True)
    rates: dict[str, list[float]] = {n: [] for n in names}
    try:
        with poll_before_halt(a.idle_poll_us * 1000) as idle:
            rounds(a, arms, names, work, rates)
    except IdleError as e:
        print(f"rotation.py: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
        remove_run_folders(arms, work)
    ratios = {f"{x}/{y}": spread([p / q for p, q in zip(rates[x], rates[y])])
              for x in names[1:] for y in names if x != y}
    for key, s in ratios.items():
        print(key, s)
    a.output.write_text(json.dumps({"workload": a.workload, "arms": arms, "rounds": a.rounds,
                                    "idle": idle, "rates": rates, "ratios": ratios},
                                   indent=1) + "\n")
    return 0


def rounds(a: argparse.Namespace, arms: dict[str, str], names: list[str], work: Path,
           rates: dict[str, list[float]]) -> None:
    for i in range(a.rounds):
        order = names[i % len(names):] + names[:i % len(names)]
        got = {n: run_arm(arms[n], a.workload, work, n, arms) for n in order}
        for n in names:
            rates[n].append(got[n])
        print(i, {n: round(got[n] / got["untraced"], 3) for n in names[1:]},
              round(got["untraced"]), flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
