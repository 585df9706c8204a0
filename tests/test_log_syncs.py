"""Every log sync counted, windows or not (collectors/log_syncs.py): the
attach lines for libc's fdatasync and fsync, and, end to end, the count
against RocksDB's own statistics on a run the default mode windows."""
from __future__ import annotations

import json

import pytest
from elftools.elf.elffile import ELFFile

from collectors import log_syncs
from collectors.loader import vaddr_to_offset
from probepoints.elf import is_emulated_site
from tests.conftest import GOLDEN, db_bench_stats, run_trace

LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
LIBZ = "/lib/x86_64-linux-gnu/libz.so.1"


def offset_of(path: str, name: str) -> int:
    with open(path, "rb") as f:
        elf = ELFFile(f)
        sym = elf.get_section_by_name(".dynsym").get_symbol_by_name(name)[0]
        return vaddr_to_offset(elf, sym["st_value"])


def test_libc_gives_its_two_syncs_and_nothing_else_does():
    """libc: one "always" line each for fdatasync and fsync, at a site the
    uprobe emulates (Debian 12's glibc: the jump after the entry's
    RIP-relative compare, 7 bytes in), with the cookie the BPF side
    counts; an object that only imports them (libz: none) gives none."""
    cookie = GOLDEN.enum_values("ws_cookie")["WS_COOKIE_LOG_SYNC"]
    lines = log_syncs.sync_lines(LIBC)
    want = []
    for n in log_syncs.SYNCS:
        entry = offset_of(LIBC, n)
        site = entry if is_emulated_site(LIBC, entry) else entry + 7
        want.append(("always", str(cookie), str(site), LIBC, n))
    assert [tuple(x.split("\t")) for x in lines] == want
    assert log_syncs.sync_lines(LIBZ) == []
    assert log_syncs.sync_lines("/nonexistent") == []


@pytest.mark.root
def test_every_wal_sync_of_a_windowed_run_is_rocksdbs_count(tmp_path):
    """db_bench, 4 synced threads, the plain command: the default mode
    records a part of the writes (windows: on this VM tracing every write
    would cost ~22%), and the log syncs counted at libc over the run equal
    rocksdb.wal.synced exactly."""
    out = tmp_path / "o"
    p = run_trace(["-q", "-o", str(out), "--", "db_bench", "--benchmarks=fillrandom",
                   "--sync=true", "--threads=4", "--num=3000", f"--db={tmp_path / 'db'}",
                   "--statistics"])
    assert p.returncode == 0, p.stderr[-3000:]
    s = json.loads((out / "summary.json").read_text())
    stats = db_bench_stats((out / "command.log").read_text())
    assert s["wal"]["sync"]["every_count"] == stats["rocksdb.wal.synced"]
    if not s["budget"]["every_write"]:      # as here: ~22% to trace every write
        assert s["wal"]["sync"]["count"] < stats["rocksdb.wal.synced"]   # the windows' part


def test_a_site_the_uprobe_would_single_step_is_not_taken(tmp_path):
    """An entry that is neither emulated nor the compare-then-jump glibc
    begins with (here a mov) gives no site: a single-stepped hit costs
    ~10 us a sync."""
    f = tmp_path / "code"
    f.write_bytes(bytes.fromhex("803d01c90d000074") + b"\x05" + bytes.fromhex("89f8c3") +
                  bytes.fromhex("55"))
    assert log_syncs.cheap_site(str(f), 0) == 7
    assert log_syncs.cheap_site(str(f), 9) is None      # mov eax, edi
    assert log_syncs.cheap_site(str(f), 12) == 12       # push rbp
    cet = tmp_path / "cet"          # endbr64 first (a glibc built with CET)
    cet.write_bytes(log_syncs.ENDBR64 + bytes.fromhex("803d01c90d00007405") +
                    log_syncs.ENDBR64 + bytes.fromhex("89f8"))
    assert log_syncs.cheap_site(str(cet), 0) == 11
    assert log_syncs.cheap_site(str(cet), 13) is None
