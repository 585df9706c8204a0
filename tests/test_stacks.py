"""On-CPU stacks: frame-pointer detection, method choice, a real dwarf run."""
from __future__ import annotations

import pytest

import json
import subprocess
from pathlib import Path

from analysis import stacks
from collectors import frame_pointers
from tests.conftest import run_trace

SRC = """
#include <stdio.h>
__attribute__((noinline)) long leaf(long x) { for (int i = 0; i < 100; i++) x = x * 31 + i; return x; }
__attribute__((noinline)) long mid(long x) { long y = leaf(x); for (int i = 0; i < 50; i++) y ^= leaf(y + i); return y; }
__attribute__((noinline)) long top(long x) { long y = 0; for (int i = 0; i < 40; i++) y += mid(x + i) * leaf(i); return y; }
__attribute__((noinline)) long more(long x) { long y = top(x); for (int i = 0; i < 30; i++) y -= mid(y); return y; }
__attribute__((noinline)) long yet(long x) { long y = more(x); for (int i = 0; i < 20; i++) y += top(y ^ i); return y; }
int main(int argc, char **argv) { printf("%ld\\n", yet(argc) + more(argc) + top(argc)); return 0; }
"""


def build(tmp: Path, flags: list[str]) -> str:
    src = tmp / "p.c"
    src.write_text(SRC)
    exe = tmp / ("fp" if "-fno-omit-frame-pointer" in flags else "nofp")
    subprocess.run(["cc", "-O2", *flags, str(src), "-o", str(exe)], check=True)
    return str(exe)


@pytest.mark.root
def test_frame_pointer_detection(tmp_path):
    fp = build(tmp_path, ["-fno-omit-frame-pointer"])
    nofp = build(tmp_path, ["-fomit-frame-pointer"])
    assert frame_pointers.frame_pointer_share(fp) > frame_pointers.frame_pointer_share(nofp)
    assert frame_pointers.choose("auto", [nofp]) == "dwarf"
    assert frame_pointers.choose("bpf", [nofp]) == "bpf"
    # Debian's librocksdb keeps no frame pointers: auto takes dwarf
    assert frame_pointers.choose("auto", ["/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8"]) == "dwarf"
    assert frame_pointers.frame_pointer_share("/nonexistent") == 0.0


def test_truncation_rule():
    assert not stacks.is_truncated(["_start", "main", "f"])
    assert not stacks.is_truncated(["clone3", "start_thread", "f"])
    assert not stacks.is_truncated(["[db_bench]", "main", "f"])   # stripped _start
    assert stacks.is_truncated(["rocksdb::DBImpl::WriteImpl", "f"])
    assert stacks.is_truncated(["[unknown]", "f"])
    assert stacks.is_truncated([])


def dwarf_run(tmp_path: Path, mode: str, num: int = 60000) -> tuple[dict, str]:
    out = tmp_path / mode
    p = run_trace(["-q", "-o", str(out), "--mode", mode, "--stacks", "dwarf", "--",
                   "db_bench", f"--db={tmp_path}/db-{mode}", "--benchmarks=fillrandom",
                   f"--num={num}"], timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    s = json.loads((out / "summary.json").read_text())
    assert (out / "flame-oncpu-stacks.svg").stat().st_size > 1000
    return s["oncpu_stacks"], (out / "oncpu-stacks.folded").read_text()


@pytest.mark.root
def test_dwarf_stacks_of_db_bench(tmp_path):
    # no uprobes: perf unwinds through librocksdb (no frame pointers) to the
    # thread's entry point
    st, folded = dwarf_run(tmp_path, "sample", 300000)   # ~1.5 s at 49 Hz
    assert st["method"] == "dwarf" and st["samples"] > 20 and "note" not in st
    assert st["truncated"] < st["samples"] / 2
    assert "rocksdb::DBImpl::WriteImpl" in folded
    assert any(l.startswith("db_bench;") for l in folded.splitlines())
    # return probes: stacks end at the trampoline, counted and explained
    st, folded = dwarf_run(tmp_path, "full")
    assert st["truncated"] > st["samples"] / 2 and "uretprobe" in st["note"]
