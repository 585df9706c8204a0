"""pgbench against a running cluster, as its owner, and what its report
says.  It runs in a working folder of its own, where `-l` writes its
per-transaction logs (pgbench_log.<pid>[.<thread>])."""
from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from runners.workloads.postgres import binaries
from runners.workloads.postgres.owner import Owner

DATABASE = "bench"      # the database prepare loads, and pgbench's default here

# pgbench 15's report (stdout), one figure a line
PATTERNS: dict[str, str] = {
    "transaction_type": r"^transaction type: (.+)$",
    "scaling_factor": r"^scaling factor: (\d+)$",
    "clients": r"^number of clients: (\d+)$",
    "threads": r"^number of threads: (\d+)$",
    "failed": r"^number of failed transactions: (\d+)",
    "latency_average_ms": r"^latency average = ([\d.]+) ms$",
    "latency_stddev_ms": r"^latency stddev = ([\d.]+) ms$",
    "initial_connection_time_ms": r"^initial connection time = ([\d.]+) ms$",
    "tps": r"^tps = ([\d.]+) \(without initial connection time\)$",
}
PROCESSED = r"^number of transactions actually processed: (\d+)(?:/(\d+))?$"


@dataclass(frozen=True)
class Outcome:
    argv: list[str]
    returncode: int
    processed: int | None        # transactions pgbench counts as done
    expected: int | None         # ... of this many (-t runs; None for -T)
    report: dict[str, Any]       # the other figures of PATTERNS it printed
    stdout: str
    stderr: str
    cwd: str
    t0_ns: int                   # monotonic ns just before pgbench started
    t1_ns: int                   # ... and just after it exited

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def error_line(self) -> str:
        """pgbench's first error message, else its last line of stderr."""
        lines = [ln.strip() for ln in self.stderr.splitlines() if ln.strip()]
        errors = [ln for ln in lines if "error" in ln.lower() or "fatal" in ln.lower()]
        return (errors or lines or ["(no message)"])[0]


def parse(stdout: str) -> tuple[int | None, int | None, dict[str, Any]]:
    processed = expected = None
    report: dict[str, Any] = {}
    for line in stdout.splitlines():
        line = line.strip()
        m = re.match(PROCESSED, line)
        if m:
            processed = int(m.group(1))
            expected = int(m.group(2)) if m.group(2) else None
            continue
        for key, pat in PATTERNS.items():
            m = re.match(pat, line)
            if m:
                v = m.group(1)
                report[key] = float(v) if "." in v else int(v) if v.isdigit() else v
    return processed, expected, report


def command(data_dir: Path, port: int, args: list[str]) -> list[str]:
    """Ours first (-n: no vacuum before the run; the socket), then the
    user's, which override ours."""
    return [binaries.program("pgbench"), "-n", "-h", str(data_dir), "-p", str(port),
            *args]


def run(data_dir: Path, port: int, owner: Owner, args: list[str], cwd: Path) -> Outcome:
    """pgbench to completion (killed if this process is interrupted).
    PGDATABASE=bench and PGUSER=postgres unless the environment or args
    say otherwise."""
    argv = command(data_dir, port, args)
    defaults = {"PGDATABASE": DATABASE, "PGUSER": "postgres"}
    env = {k: v for k, v in defaults.items() if not os.environ.get(k)}
    t0 = time.monotonic_ns()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd,
                            env=owner.env(env), **owner.popen_kw())
    try:
        out, err = proc.communicate()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    t1 = time.monotonic_ns()
    processed, expected, report = parse(out)
    return Outcome(argv=argv, returncode=proc.returncode, processed=processed,
                   expected=expected, report=report, stdout=out, stderr=err,
                   cwd=str(cwd), t0_ns=t0, t1_ns=t1)


def initialize(data_dir: Path, port: int, owner: Owner, scale: int) -> subprocess.CompletedProcess:
    """pgbench -i -s scale bench (its tables, loaded; vacuumed)."""
    return subprocess.run(command(data_dir, port, ["-i", "-s", str(scale), "-q",
                                                  "-U", "postgres", DATABASE]),
                          capture_output=True, text=True, cwd=data_dir,
                          stdin=subprocess.DEVNULL, env=owner.env(), **owner.popen_kw())
