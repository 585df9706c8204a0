"""Shared fixtures: real traced db_bench runs, cached per configuration.

Two tiers: tests marked ``root`` are end-to-end (root, a live kernel, the
build); the others need only requirements.txt (``pytest -m "not root"``).
The unit tier reads records with tests/golden/layout.json (``GOLDEN``; a
folder a test writes records into gets it with ``golden_folder``, as a
traced run gets the build's), which a root-tier test keeps equal to the
build's (``make golden`` rewrites it).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import time
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TRACE = [str(ROOT / ".venv" / "bin" / "python"), str(ROOT / "trace_wal.py")]
GOLDEN_LAYOUT = ROOT / "tests" / "golden" / "layout.json"

from runfolder import records as _R  # noqa: E402
from runfolder.files import RunFolder as _RunFolder  # noqa: E402

GOLDEN = _R.Layout(GOLDEN_LAYOUT)


def golden_folder(path: Path) -> Path:
    """path made a run folder whose records are read with the golden layout
    (its layout.json), as the tracer gives a traced run the build's."""
    path.mkdir(parents=True, exist_ok=True)
    _RunFolder(path).layout_json.write_bytes(GOLDEN_LAYOUT.read_bytes())
    return path


def trace_known_offcpu(out: Path, mode_args: list[str], sleeps: int, sleep_s: float,
                       spin_s: float) -> subprocess.CompletedProcess:
    """Trace tests/offcpu_workload.py pinned to the last CPU, with an untraced
    competitor spinning on that CPU (which makes the traced spin runnable);
    the workload's own measurements land in out/m.json."""
    cpu = max(os.sched_getaffinity(0))
    hog = subprocess.Popen([sys.executable, "-c",
                            f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile 1: pass"])
    try:
        # a workload with no database: not an empty run by mistake
        return run_trace(["--mode", "full", *mode_args, "--allow-empty", "-o", str(out / "o"),
                          "--", "python3",
                          str(ROOT / "tests" / "offcpu_workload.py"), str(out / "m.json"),
                          str(cpu), str(sleeps), str(sleep_s), str(spin_s)], timeout=300)
    finally:
        hog.kill()
        hog.wait()


def wait_attached(out: Path, tracer: subprocess.Popen, timeout: float = 120) -> None:
    """Until a -p tracer writing to out has taken its process: the collector
    records the threads' baseline (tasks.bin) once the pid is in."""
    end = time.monotonic() + timeout
    tasks = out / "tasks.bin"
    while not (tasks.exists() and tasks.stat().st_size):
        if time.monotonic() >= end or tracer.poll() is not None:
            err = tracer.communicate()[1] if tracer.stderr else ""
            raise AssertionError(f"never attached: {(err or '')[-2000:]}")
        time.sleep(0.05)


def run_trace(args: list[str], timeout: float = 600, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(TRACE + args, capture_output=True, text=True,
                          timeout=timeout, **kw)


def db_bench_stats(log: str) -> dict[str, float]:
    """Tickers (COUNT) and histograms (COUNT, SUM) from --statistics output."""
    out: dict[str, float] = {}
    for line in log.splitlines():
        m = re.match(r"(rocksdb\.[\w.]+) COUNT : (\d+)$", line.strip())
        if m:
            out[m.group(1)] = int(m.group(2))
            continue
        m = re.match(r"(rocksdb\.[\w.]+) P50 .* COUNT : (\d+) SUM : (\d+)", line.strip())
        if m:
            out[m.group(1) + ".count"] = int(m.group(2))
            out[m.group(1) + ".sum"] = int(m.group(3))
    return out


class TracedRun:
    def __init__(self, run_dir: Path, proc: subprocess.CompletedProcess):
        self.dir = run_dir
        self.proc = proc
        self.summary = json.loads((run_dir / "summary.json").read_text())
        self.log = (run_dir / "command.log").read_text()
        self.stats = db_bench_stats(self.log)


@pytest.fixture(scope="session")
def traced(tmp_path_factory):
    cache: dict[tuple, TracedRun] = {}

    def get(*db_bench_args: str, mode: str = "full", extra: tuple = ()) -> TracedRun:
        key = (db_bench_args, mode, extra)
        if key not in cache:
            d = tmp_path_factory.mktemp("run")
            db = d / "db"
            args = ["-q", "-o", str(d / "out"), "--mode", mode, *extra, "--",
                    "db_bench", f"--db={db}", "--statistics", *db_bench_args]
            p = run_trace(args)
            assert p.returncode == 0, p.stderr[-2000:]
            cache[key] = TracedRun(d / "out", p)
        return cache[key]

    return get


def ensure_tracefs() -> None:
    if not os.path.exists("/sys/kernel/tracing/events"):
        subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"],
                       check=False)


def start_bpftrace(args: list[str], timeout: float = 60,
                   out: Path | None = None) -> subprocess.Popen:
    """bpftrace, returned once it says its probes are attached.  A script
    that prints an event at a time must write to a file (out): a pipe that
    nobody reads until the end fills, bpftrace blocks on it and its perf
    buffer drops the events after the first ~64 KB."""
    import select
    import time
    if out is not None:
        with open(out, "w") as f:
            bt = subprocess.Popen(["bpftrace", *args], stdout=f,
                                  stderr=subprocess.STDOUT, text=True)
        end = time.monotonic() + timeout
        while time.monotonic() < end and bt.poll() is None and \
                "Attaching" not in out.read_text():
            time.sleep(0.1)
        time.sleep(0.5)  # attached, and the first probes armed
        return bt
    bt = subprocess.Popen(["bpftrace", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([bt.stdout], [], [], 0.5)
        if r:
            line = bt.stdout.readline()
            if not line or line.startswith("Attaching"):
                break
        elif bt.poll() is not None:
            break
    time.sleep(0.5)  # attached, and the first probes armed
    return bt


def records_lost(summary: dict) -> int:
    """Records the kernel dropped (summary.json lost_events), stack-map
    misses aside: a stack the map could not store (a hash-bucket collision,
    which depends on the boot's kernel addresses) loses no record, and
    tests/test_offcpu.py checks that such misses are counted and shown."""
    return sum(v for k, v in summary.get("lost_events", {}).items() if k != "stack")


class BpftraceTotals:
    """bpftrace summing into aggregate maps (`names`), read while it runs.

    The script is given an interval probe that prints the maps, then a line
    "tick", every 100 ms.  totals() waits for two ticks after its call: the
    maps printed between them were read after the call, so they hold every
    event of a workload that ended before it.  bpftrace is then stopped
    (SIGINT, and SIGKILL if it has not exited in 30 s): its exit, which has
    once taken over 300 s in a CI clone, decides nothing."""

    TICK = "tick"

    def __init__(self, script: str, names: tuple[str, ...], out: Path,
                 args: tuple[str, ...] = ()):
        """script: bpftrace's program text (a .bt file's too); args: its
        positional parameters ($1...)."""
        self.names = names
        self.out = out
        prints = " ".join(f"print(@{n});" for n in names)
        self.bt = start_bpftrace(
            ["-e", f"{script}\ninterval:ms:100 {{ {prints} printf(\"{self.TICK}\\n\"); }}",
             *args], out=out)

    def _ticks(self) -> list[int]:
        text = self.out.read_text()
        return [m.start() for m in re.finditer(rf"^{self.TICK}$", text, re.M)]

    def totals(self, timeout: float = 120) -> dict[str, int]:
        seen = len(self._ticks())
        end = time.monotonic() + timeout
        while len(self._ticks()) < seen + 2:
            if time.monotonic() >= end or self.bt.poll() is not None:
                self.stop()
                raise AssertionError(f"bpftrace printed no totals: {self.out.read_text()[-2000:]}")
            time.sleep(0.05)
        text = self.out.read_text()
        ticks = self._ticks()
        block = text[ticks[seen]:ticks[seen + 1]]
        self.stop()
        got = {}
        for n in self.names:
            m = re.search(rf"^@{n}: (\d+)$", block, re.M)
            # a map never set prints nothing: 0; one whose print was lost
            # would read 0 too, so a lost event fails here
            assert m or "Lost" not in text, text[-2000:]
            got[n] = int(m.group(1)) if m else 0
        return got

    def stop(self) -> None:
        if self.bt.poll() is None:
            self.bt.send_signal(2)
            try:
                self.bt.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.bt.kill()
                self.bt.wait()


# what the fault tests observed, for docs/faults.md (`make docs`): a build
# output, never a tracked file
FAULTS_JSON = ROOT / ".output" / "faults.json"
_faults: dict[str, dict] = {}


def record_fault(fault: str, survived: bool, lost: int, left: int) -> None:
    """One row of the fault table (tests/test_faults.py)."""
    _faults[fault] = {"fault": fault, "survived": bool(survived),
                      "records_lost": int(lost), "probes_left": int(left)}


def pytest_sessionfinish(session, exitstatus):
    if not _faults:
        return
    try:
        old = {r["fault"]: r for r in json.loads(FAULTS_JSON.read_text())}
    except (OSError, ValueError):
        old = {}
    old.update(_faults)
    FAULTS_JSON.parent.mkdir(parents=True, exist_ok=True)
    FAULTS_JSON.write_text(json.dumps(sorted(old.values(), key=lambda r: r["fault"]),
                                      indent=1) + "\n")
