"""A sample's callers: the user stack each sample copies, unwound at the
tracer by the objects' .eh_frame (collectors/unwind.py).  The truth is a
program whose call graph is known: stripped, built without frame
pointers, its work in static functions it names no symbol for, and in
libc's memcpy (which libc names none for either)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from analysis.sampling import classify_frames, function_name
from analysis.symbols import RunSymbols
from runfolder import records as R
from tests.conftest import run_trace

PROGRAM = r"""
#include <alloca.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static char src[1 << 20], dst[1 << 20];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the work: named by nothing once stripped */
__attribute__((noinline)) static unsigned long hidden_inner(unsigned long x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

/* a frame of its own between the work and a name: an alloca of a size
 * known only at run time, so the compiler keeps a frame pointer here and
 * the call frame information finds the caller from rbp, not rsp */
__attribute__((noinline)) static unsigned long hidden_middle(unsigned long x)
{
	volatile unsigned long *pad = alloca(sizeof(*pad) * (8 + (x & 1)));

	for (int i = 0; i < 8; i++)
		pad[i] = hidden_inner(x + i);
	return pad[3] ^ pad[5];
}

__attribute__((noinline)) void named_outer(void)
{
	sink += hidden_middle(sink);
}

__attribute__((noinline)) void named_copier(void)
{
	memcpy(dst, src, sizeof(dst));
	sink += dst[sink & 1023];
}

int main(int argc, char **argv)
{
	double secs = atof(argv[1]), t0 = now();

	while (now() - t0 < secs)
		named_outer();
	t0 = now();
	while (now() - t0 < secs)
		named_copier();
	return 0;
}
"""


def test_rules_name_functions_and_the_innermost_named_frame_wins():
    assert function_name("rocksdb::DBImpl::WriteToWAL(rocksdb::WriteThread::WriteGroup const&,"
                         " unsigned long*)") == "rocksdb::DBImpl::WriteToWAL"
    assert function_name("rocksdb::MemTable::KeyComparator::operator()(char const*, "
                         "char const*) const") == "rocksdb::MemTable::KeyComparator::operator() const"
    assert function_name("[libc.so.6]") == "[libc.so.6]"
    assert function_name("f(int) [clone .cold]") == "f"
    # a lambda's enclosing parameters, a template's arguments: not the function
    assert function_name("rocksdb::DBImpl::WriteImpl(rocksdb::PostMemTableCallback*)::"
                         "{lambda()#1}::operator()() const") == \
        "rocksdb::DBImpl::WriteImpl::{lambda#1}::operator() const"
    assert function_name("void rocksdb::InlineSkipList<rocksdb::MemTableRep::KeyComparator"
                         " const&>::Insert<false>(char const*)") == \
        "void rocksdb::InlineSkipList::Insert"
    assert function_name("x::(anonymous namespace)::g(int)") == "x::(anonymous namespace)::g"
    assert function_name("a::operator<<(int)") == "a::operator<<"
    # its parameter names a write-thread type; it is the WAL's
    assert classify_frames(["rocksdb::DBImpl::WriteToWAL(rocksdb::WriteThread::WriteGroup"
                            " const&, unsigned long*)"])[0] == "wal_append"
    # an unnamed leaf takes its caller's part; a named one keeps its own
    leaf = "[librocksdb.so.7.8.3]"
    assert classify_frames([leaf, "[libc.so.6]", "rocksdb::MemTable::Add(unsigned long)",
                            "rocksdb::DBImpl::WriteImpl()"]) == \
        ("memtable", "rocksdb::MemTable::Add(unsigned long)")
    assert classify_frames(["rocksdb::crc32c::Extend", "rocksdb::MemTable::Add"])[0] == "crc"
    assert classify_frames([leaf, "main"]) == ("other", leaf)


@pytest.mark.root
def test_samples_name_the_callers_of_stripped_functions(tmp_path: Path):
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc, "gcc is needed"
    (tmp_path / "prog.c").write_text(PROGRAM)
    prog = tmp_path / "prog"
    subprocess.run([cc, "-O2", "-fomit-frame-pointer", "-fno-inline-functions",
                    "-rdynamic", "-o", str(prog), str(tmp_path / "prog.c")], check=True)
    subprocess.run(["strip", "--strip-all", str(prog)], check=True)
    syms = subprocess.run(["nm", "-D", "--defined-only", str(prog)], capture_output=True,
                          text=True, check=True).stdout
    assert "named_outer" in syms and "hidden_inner" not in syms
    # hidden_middle's frame is found from rbp (the walk's other rule)
    cfi = subprocess.run(["readelf", "--debug-dump=frames-interp", "-W", str(prog)],
                         capture_output=True, text=True).stdout
    assert re.search(r"^\s*[0-9a-f]+ rbp\+16 ", cfi, re.M), "no rbp-based frame"
    # the plain command (the default mode samples all run long)
    p = run_trace(["-q", "--sample-hz", "499", "--allow-empty",
                   "-o", str(tmp_path / "o"), "--", str(prog), "1.0"], timeout=300)
    assert p.returncode == 0, p.stderr
    run = tmp_path / "o"
    s = R.read_records(run, "ws_sample_rec")
    sym = RunSymbols(run)
    rows = [(sym.user(int(pid), int(ip)), sym.callers(int(pid), int(tid), int(ts)))
            for pid, tid, ts, ip in zip(s["pid"], s["tid"], s["ts_ns"], s["ip"])
            if ip and sym.user(int(pid), int(ip)) != "[unknown]"]
    df = pd.DataFrame(rows, columns=["leaf", "callers"])
    # the program's own unnamed code: hidden_inner, under hidden_middle
    mine = df[df["leaf"] == "[prog]"]
    assert len(mine) >= 100, df["leaf"].value_counts().head()
    chains = mine["callers"].map(lambda c: tuple(c[:3]))
    want = ("[prog]", "named_outer", "main")
    assert (chains == want).mean() >= 0.95, chains.value_counts().head()
    # libc's memcpy (its variants are local symbols, stripped) under named_copier
    libc = df[df["leaf"].str.startswith("[libc")]
    assert len(libc) >= 100, df["leaf"].value_counts().head()
    first = libc["callers"].map(lambda c: c[0] if c else "")
    assert (first == "named_copier").mean() >= 0.95, first.value_counts().head()
    # the copies of the process's stack did not stay in the folder
    assert not s["stack"].any() and s["stack_words"].any()
