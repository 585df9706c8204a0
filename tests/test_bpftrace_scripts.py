"""probes/*.bt: each one loads, and one agrees with trace_wal.py on a real run."""
from __future__ import annotations

import re
import subprocess

import pytest

from tests.conftest import ROOT, TRACE, ensure_tracefs, start_bpftrace

SCRIPTS = sorted((ROOT / "probes").glob("*.bt"))


def test_every_script_has_a_header():
    assert len(SCRIPTS) >= 3
    for s in SCRIPTS:
        head = s.read_text()[:1500]
        for field in ("USAGE:", "MEASURES:", "OVERHEAD:"):
            assert field in head, f"{s.name} lacks {field}"


@pytest.mark.root
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_compiles(script):
    ensure_tracefs()
    p = subprocess.run(["bpftrace", "-d", str(script), "1"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-1500:]


@pytest.mark.root
def test_write_groups_matches_trace_wal(tmp_path):
    bt = start_bpftrace([str(ROOT / "probes" / "write_groups.bt")])
    p = subprocess.run(TRACE + ["-q", "--mode", "full", "-o", str(tmp_path / "o"), "--", "db_bench",
                                f"--db={tmp_path}/db", "--benchmarks=fillrandom",
                                "--num=701", "--threads=3", "--sync=true"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    bt.send_signal(2)
    out = bt.communicate(timeout=30)[0]
    counts = {k: int(v) for k, v in re.findall(r"@(\w+): (\d+)", out)}
    s = __import__("json").loads((tmp_path / "o" / "summary.json").read_text())
    assert counts["writes"] == s["writes"]["count"] == 2103
    assert counts["leaders"] == s["groups"]["leaders"]


NESTING_RUNS = [
    ["--sync=true", "--threads=4", "--num=1500", "--write_buffer_size=65536",
     "--enable_pipelined_write=false"],
    ["--sync=false", "--threads=2", "--num=30000", "--write_buffer_size=262144",
     "--enable_pipelined_write=true"],
]


@pytest.mark.root
@pytest.mark.parametrize("run", NESTING_RUNS, ids=["sync-4t", "nosync-pipelined"])
def test_unprobed_wal_calls_run_inside_the_probed_one(tmp_path, run):
    """The resolver leaves log::Writer::AddRecord and the inner
    WriteToWAL(const WriteBatch&) unprobed: inside a write they only run
    within the group-level WriteToWAL or ConcurrentWriteToWAL, which are
    probed in the same phase.  bpftrace counts their calls by where they
    run, on runs that switch memtables (small write buffers)."""
    import os
    from probepoints.elf import demangle, function_symbols
    ensure_tracefs()
    lib = os.path.realpath("/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8")
    syms = function_symbols(lib)
    names = demangle([m for m, _ in syms])
    offs = {d: off for d, (_, off) in zip(names, syms) if "[clone" not in d}

    def sites(*prefixes: str) -> list[int]:
        return sorted({o for d, o in offs.items() if d.startswith(prefixes)})
    write = sites("rocksdb::DBImpl::WriteImpl(")
    outer = sites("rocksdb::DBImpl::WriteToWAL(rocksdb::WriteThread::WriteGroup",
                  "rocksdb::DBImpl::WriteGroupToWAL(", "rocksdb::DBImpl::ConcurrentWriteToWAL(")
    inner = sites("rocksdb::log::Writer::AddRecord(",
                  "rocksdb::DBImpl::WriteToWAL(rocksdb::WriteBatch const&")
    assert write and outer and len(inner) >= 2
    # neither call nests in itself: in or out, not a depth
    prog = "".join(f"uprobe:{lib}:{o:#x} {{ @w[tid] = 1 }} uretprobe:{lib}:{o:#x} {{ @w[tid] = 0 }} "
                   for o in write)
    prog += "".join(f"uprobe:{lib}:{o:#x} {{ @g[tid] = 1 }} uretprobe:{lib}:{o:#x} {{ @g[tid] = 0 }} "
                    for o in outer)
    prog += "".join(f"uprobe:{lib}:{o:#x} {{ @c[@w[tid] > 0, @g[tid] > 0] = count() }} "
                    for o in inner)
    prog += "END { clear(@w); clear(@g); }"
    cmd = " ".join(["/usr/bin/db_bench", "--benchmarks=fillrandom",
                    f"--db={tmp_path}/db", *run])
    p = subprocess.run(["bpftrace", "-e", prog, "-c", cmd], capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-1500:]
    counts = {(int(a), int(b)): int(n)
              for a, b, n in re.findall(r"@c\[(\d), (\d)\]: (\d+)", p.stdout)}
    assert counts.get((1, 1), 0) > 100, counts       # they did run in writes
    assert counts.get((1, 0), 0) == 0, counts        # never outside the probed call
