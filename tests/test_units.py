"""Unit tests: record layouts from BTF, topology, compensation arithmetic."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from probepoints import modes
from runfolder import records as R
from collectors import topology as T
from analysis.compensation import Calibration
from analysis.io import io_frame
from analysis.summary import summarize
from analysis.writes import writes_frame
from tests.conftest import GOLDEN, golden_folder

ROOT = Path(__file__).resolve().parent.parent


def test_dtypes_match_header_sizes(tmp_path):
    """The BTF-derived dtypes have the sizes the C compiler gives the header."""
    src = tmp_path / "sizes.c"
    src.write_text('#include <stdio.h>\n#include <linux/types.h>\n#include "walscope.h"\n'
                   'int main(void){printf("%zu %zu %zu %zu %zu %zu %zu %zu\\n",'
                   'sizeof(struct ws_write_rec),sizeof(struct ws_io_rec),'
                   'sizeof(struct ws_sched_rec),sizeof(struct ws_open_rec),'
                   'sizeof(struct ws_sample_rec),sizeof(struct ws_task_rec),'
                   'sizeof(struct ws_offcpu_ent),sizeof(struct ws_stack_ent));'
                   'return 0;}\n')
    exe = tmp_path / "sizes"
    subprocess.run(["cc", "-I", str(ROOT / "probes"), str(src), "-o", str(exe)], check=True)
    sizes = [int(x) for x in subprocess.run([str(exe)], capture_output=True,
                                            text=True).stdout.split()]
    names = ["ws_write_rec", "ws_io_rec", "ws_sched_rec", "ws_open_rec", "ws_sample_rec",
             "ws_task_rec", "ws_offcpu_ent", "ws_stack_ent"]
    assert sizes == [GOLDEN.struct_dtype(n).itemsize for n in names]
    assert GOLDEN.struct_dtype("ws_write_rec")["mig"].shape == (4, 4)


def test_component_names_come_from_the_header():
    """Each engine's components are its header's enum, in slot order."""
    import engines
    for e in engines.ENGINES:
        header = (ROOT / "probes" / f"{e.name}.h").read_text()
        names = re.findall(rf"\t{e.comp_prefix}(\w+) = \d+,", header)
        assert GOLDEN.components(e.name) == [n.lower() for n in names if n != "NR"], e.name
        assert GOLDEN.components(e.name)[0] == "other"
        assert GOLDEN.components(e.name)[7] == "sched_runq"   # the scheduler's shared slot


def test_phase_components_come_from_the_header():
    """One table (WS_PHASE_COMPS) feeds the BPF program and Python."""
    assert [GOLDEN.phase_component(p) for p in ("PH_WRITE", "PH_QUEUE", "PH_CRC", "PH_WAL",
                                            "PH_MEMTABLE")] == \
        ["other", "queue", "crc", "wal_append", "memtable"]
    assert GOLDEN.phase_component("PH_SQL_STEP", "sqlite") == "sql_exec"
    assert GOLDEN.phase_component("PH_CHECKPOINT", "sqlite") == "checkpoint"
    assert GOLDEN.phase_component("PH_LEADER") is None   # a marker opens nothing


def test_file_kind_rules(tmp_path):
    """file_kind.h, compiled for user space, classifies like the docs say."""
    cases = {"/db/000012.log": "wal", "/x/t.db-wal": "wal", "/db/LOG": "other",
             "/db/LOG.old.123": "other", "/db/000009.sst": "sst",
             "/db/MANIFEST-000005": "manifest", "/x/t.db-journal": "journal",
             "/x/t.db": "db", "/x/a.sqlite3": "db", "/db/OPTIONS-000007": "other",
             "/db/CURRENT": "other", "/a/b.log.txt": "other", "/x/app.log": "other",
             # PostgreSQL: segments in pg_wal (pg_xlog before 10), relative
             # to the data directory too; a segment being made is not one
             "/d/pg_wal/000000010000000000000003": "wal",
             "pg_wal/00000001000000000000000A": "wal",
             "/d/pg_xlog/000000010000000000000003": "wal",
             "pg_wal/xlogtemp.1234": "other", "/d/pg_wal/archive_status": "other",
             "/d/base/5/16397": "other", "/d/xpg_wal/000000010000000000000003": "other",
             "/d/pg_wal/00000002.history": "other",
             # InnoDB's redo log (MariaDB; MySQL 8.0.30 on in #innodb_redo/)
             "/var/lib/mysql/ib_logfile0": "wal", "/m/#innodb_redo/#ib_redo12": "wal",
             "/var/lib/mysql/ibdata1": "other", "/m/ib_buffer_pool": "other"}
    src = tmp_path / "fk.c"
    src.write_text('#include <stdio.h>\n#include <linux/types.h>\n#include "walscope.h"\n'
                   '#include "file_kind.h"\nint main(int c,char**v){char b[WS_PATH_LEN]={0};'
                   'for(int i=1;i<c;i++){snprintf(b,sizeof b,"%s",v[i]);'
                   'printf("%d\\n",ws_file_kind(b,0));}return 0;}\n')
    exe = tmp_path / "fk"
    subprocess.run(["cc", "-I", str(ROOT / "probes"), str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe), *cases], capture_output=True, text=True).stdout.split()
    kinds = GOLDEN.file_kinds()
    assert {p: kinds[int(k)] for p, k in zip(cases, out)} == cases



def test_log_file_rules_name_a_wal_before_the_engines(tmp_path):
    """--log-file's globs (collectors/log_files.py), as file_kind.h reads
    them in user space (the collector at -p attach; the BPF side takes the
    same rules as read-only data): a named file is a WAL, another an
    engine's rule decides."""
    from collectors import log_files
    rules = log_files.rules(["app*.dat", "*.redo", "/x/wal/*.log", "journal"])
    init = ",".join(
        "{%d,%d,%d,%d,%d,%d,%d,0}" % (int.from_bytes(r.prefix, "big"),
                                     int.from_bytes(r.suffix, "big"),
                                     int.from_bytes(r.dir, "big"), len(r.prefix),
                                     len(r.suffix), len(r.dir), r.exact) for r in rules)
    src = tmp_path / "fk.c"
    src.write_text('#include <stdio.h>\n#include <linux/types.h>\n#include "walscope.h"\n'
                   '#include "file_kind.h"\nint main(int c,char**v){char b[WS_PATH_LEN]={0};'
                   f'struct ws_log_rule r[] = {{{init}}};'
                   'for(int i=1;i<c;i++){snprintf(b,sizeof b,"%s",v[i]);'
                   'printf("%d\\n",ws_file_kind_rules(b,0,r,4));}return 0;}\n')
    exe = tmp_path / "fk"
    subprocess.run(["cc", "-I", str(ROOT / "probes"), str(src), "-o", str(exe)], check=True)
    cases = {"/d/app.dat": "wal", "/d/app1234567.dat": "wal", "/d/ap.dat": "other",
             "/d/app.data": "other", "/d/x.redo": "wal", "/d/.redo": "wal",
             "/a/wal/app.log": "wal", "/a/wals/app.log": "other",
             "/a/b/x.log": "other", "/j/journal": "wal", "/j/journal2": "other",
             "/j/t.db-journal": "journal",    # SQLite's rule: no user rule named it
             "/db/000012.log": "wal", "/db/000009.sst": "sst"}
    out = subprocess.run([str(exe), *cases], capture_output=True, text=True).stdout.split()
    kinds = GOLDEN.file_kinds()
    assert {p: kinds[int(k)] for p, k in zip(cases, out)} == cases
    for bad in ("*", "a*b*", "x?.log", "a*/b.log", "averyverylongname", "/x/" + "d" * 9 + "/a*"):
        with pytest.raises(log_files.LogFileError):
            log_files.parse(bad)
    with pytest.raises(log_files.LogFileError):
        log_files.rules(["a*"] * 5)
    assert log_files.parse("/x/wal/*.log").option() == "/2e6c6f67/77616c/0"

def test_topology_declaration():
    t = T.parse_declaration("P:0-1,E:2-3", 4)
    assert t.letters() == "PPEE" and t.hybrid and t.cpus("E") == [2, 3]
    assert T.parse_declaration("P:0", 2).letters() == "PU"
    for bad in ("Q:0", "0-1", "P:5", "P:a"):
        with pytest.raises(T.TopologyError):
            T.parse_declaration(bad, 4)


def test_topology_detection(tmp_path):
    (tmp_path / "cpu_core").mkdir()
    (tmp_path / "cpu_atom").mkdir()
    (tmp_path / "cpu_core" / "cpus").write_text("0-1\n")
    (tmp_path / "cpu_atom" / "cpus").write_text("2-3\n")
    assert T.detect(tmp_path, 4).letters() == "PPEE"
    other = tmp_path / "arm"
    for i, cap in enumerate([1024, 1024, 512]):
        d = other / "system" / "cpu" / f"cpu{i}"
        d.mkdir(parents=True)
        (d / "cpu_capacity").write_text(f"{cap}\n")
    t = T.detect(other, 3)
    assert t.letters() == "PPE" and t.source == "cpu_capacity"
    uni = tmp_path / "uni"
    for i in range(2):
        d = uni / "system" / "cpu" / f"cpu{i}"
        d.mkdir(parents=True)
        (d / "cpu_capacity").write_text("1024\n")
    assert T.detect(uni, 2).letters() == "UU"
    # one design, boost bins apart (Intel's favoured cores): not P and E
    binned = tmp_path / "binned"
    for i, khz in enumerate([4_900_000, 4_700_000, 4_700_000, 4_800_000]):
        d = binned / "system" / "cpu" / f"cpu{i}" / "cpufreq"
        d.mkdir(parents=True)
        (d / "cpuinfo_max_freq").write_text(f"{khz}\n")
    assert T.detect(binned, 4).letters() == "UUUU"
    # a prime, two big and a little core: only the little one is E
    tiers = tmp_path / "tiers"
    for i, cap in enumerate([1024, 900, 900, 380]):
        d = tiers / "system" / "cpu" / f"cpu{i}"
        d.mkdir(parents=True)
        (d / "cpu_capacity").write_text(f"{cap}\n")
    assert T.detect(tiers, 4).letters() == "PPPE"


def _synthetic_writes(tmp_path: Path) -> None:
    golden_folder(tmp_path)
    dt = GOLDEN.struct_dtype("ws_write_rec")
    a = np.zeros(2, dtype=dt)
    a["rec_type"] = GOLDEN.enum_values("ws_rec_type")["WS_REC_WRITE"]
    a["engine"] = GOLDEN.enum_values("ws_engine")["WS_ENGINE_ROCKSDB"]
    comps = GOLDEN.components("rocksdb")
    qi, ci, oi = comps.index("queue"), comps.index("crc"), comps.index("other")
    a["comp_ns"][0, qi], a["comp_ns"][0, ci], a["comp_ns"][0, oi] = 50_000, 12_000, 3_000
    a["hits_in"][0, ci] = 1      # one crc pair inside the write
    a["hits_par"][0, oi] = 1     # ... opened from "other"
    a["hits_in"][0, oi] = 1      # the write's own pair
    a["dur_ns"][0] = 65_000
    a["comp_ns"][1, qi] = 1_000
    a["hits_one"][1, qi] = 1
    a["dur_ns"][1] = 1_000
    a["flags"][0] = 1
    (tmp_path / "writes.bin").write_bytes(a.tobytes() + b"\x01\x02")  # torn tail


def test_each_folder_is_read_with_its_own_layout(tmp_path):
    """A folder's records are read with its layout.json, whatever folder was
    read before and whatever the build's is: two folders whose layouts
    number the file kinds differently, read in turn, each name an io
    record's file kind by their own."""
    import json
    from analysis.io import io_frame
    from runfolder.files import RunFolder
    raw = json.loads(GOLDEN.path.read_text())
    kinds = next(t for t in raw["types"] if t.get("name") == "ws_file_kind")
    vals = {v["name"]: v for v in kinds["values"]}
    vals["FK_WAL"]["val"], vals["FK_SST"]["val"] = vals["FK_SST"]["val"], vals["FK_WAL"]["val"]
    a, b = golden_folder(tmp_path / "a"), tmp_path / "b"
    b.mkdir()
    RunFolder(b).layout_json.write_text(json.dumps(raw))
    io = np.zeros(1, GOLDEN.struct_dtype("ws_io_rec"))
    io["rec_type"] = GOLDEN.enum_values("ws_rec_type")["WS_REC_IO"]
    io["nr"], io["kind"] = 1, GOLDEN.enum_values("ws_file_kind")["FK_WAL"]
    for d in (a, b):
        RunFolder(d).records("ws_io_rec").write_bytes(io.tobytes())
    assert [io_frame(d)["kind"][0] for d in (a, b, a)] == ["wal", "sst", "wal"]
    assert R.Layout.of(a).path == RunFolder(a).layout_json
    assert R.Layout.of(b).file_kinds() != GOLDEN.file_kinds()
    assert R.Layout.of(tmp_path / "none") == R.Layout.build()   # no layout.json


def test_compensation_arithmetic(tmp_path):
    _synthetic_writes(tmp_path)
    cal = Calibration(pair_in_ns=10_000, pair_out_ns=1_000, one_ns=4_000)
    w = writes_frame(tmp_path, cal)
    assert len(w) == 2  # the torn tail is dropped
    # crc: 12 us raw - one pair inside (10 us) = 2 us
    assert w.loc[0, "crc_adj_ns"] == 2_000
    # other: 3 us - write pair inside (10 us) - crc pair outside (1 us) -> 0, never negative
    assert w.loc[0, "other_adj_ns"] == 0
    assert w.loc[0, "queue_adj_ns"] == 50_000
    assert w.loc[1, "queue_adj_ns"] == 0   # 1 us - 4 us entry-only probe -> 0
    s = summarize(w, io_frame(tmp_path), {}, cal, layout=GOLDEN)
    assert "crc" in s["unreliable_components"] and "other" in s["unreliable_components"]
    # queue: one 4 us entry-only hit in 51 us raw: compensated, not flagged
    assert "queue" not in s["unreliable_components"]
    assert s["components"]["queue"]["overhead_fraction"] == pytest.approx(4_000 / 51_000)
    assert s["components"]["crc"]["sum_ns"] == 2_000
    assert s["components_raw"]["crc"]["sum_ns"] == 12_000
    assert s["groups"] == {"leaders": 1, "followers": 1, "source": "EnterAsBatchGroupLeader"}


def test_cold_hits_are_charged_the_cold_cost(tmp_path):
    """Each write is charged between the warm and the cold calibration by its
    share of cold probe hits (long after the thread's previous hit)."""
    _synthetic_writes(tmp_path)
    a = np.frombuffer((tmp_path / "writes.bin").read_bytes()[:-2],
                      dtype=GOLDEN.struct_dtype("ws_write_rec")).copy()
    a["cold_hits"][0] = 1      # 1 of the 4 hits of write 0 (2 pairs)
    a["cold_hits"][1] = 1      # the only hit of write 1
    (tmp_path / "writes.bin").write_bytes(a.tobytes())
    cal = Calibration.from_dict({
        "pair_in_ns": 99, "pair_out_ns": 99, "one_ns": 99,
        "warm": {"pair_in_ns": 1_000, "pair_out_ns": 200, "one_ns": 500, "sys_ns": 0},
        "cold": {"pair_in_ns": 3_000, "pair_out_ns": 600, "one_ns": 1_500, "sys_ns": 0}})
    w = writes_frame(tmp_path, cal)
    assert list(w["cold_hit_share"]) == [0.25, 1.0]
    # crc: one pair inside at 1000 + 0.25 * 2000
    assert w.loc[0, "crc_overhead_ns"] == 1_500
    assert w.loc[0, "other_overhead_ns"] == 1_500 + 300    # write pair in, crc pair out
    assert w.loc[1, "queue_overhead_ns"] == 1_500           # all cold: the entry-only cost
    # without warm and cold figures, the midpoints above apply
    mid = writes_frame(tmp_path, Calibration(pair_in_ns=2_000, pair_out_ns=400, one_ns=1_000))
    assert mid.loc[0, "crc_overhead_ns"] == 2_000


def test_generated_docs_are_current():
    """README.md's and docs/'s generated blocks are what the code says (the
    record layout's with the golden layout, which is the build's)."""
    from runners import docs
    assert docs.stale(layout=GOLDEN) == [], "run `make docs`"


@pytest.mark.root
def test_run_folder_keeps_its_schema_and_analyses_offline(traced):
    """A full-mode run has the Parquet columns, types and summary keys runs
    had before the layers were split (tests/golden/run_schema.json), the
    documented columns are the real ones, and the folder, copied and
    stripped of what the analysis writes, is analysed again as nobody with
    no build in reach into the same summary."""
    import json
    import shutil
    import tempfile
    from tests import schema
    r = traced("--benchmarks=fillrandom", "--num=1500", "--threads=2", "--sync=true",
               "--enable_pipelined_write=false")
    schema.check(r.dir, "full")
    text = (ROOT / "docs" / "run-folder.md").read_text()
    for f, row in (("writes", "writes.parquet (RocksDB)"), ("io", "io.parquet"),
                   ("sched", "sched.parquet")):   # the run is RocksDB's
        line = next(l for l in text.splitlines() if l.startswith(f"| {row} | `"))
        assert re.findall(r"`(\w+)`", line) == [c for c, _ in
                                                schema.schema_of(r.dir)["parquet"][f"{f}.parquet"]]
    base = Path(tempfile.mkdtemp(prefix="walscope-offline-"))   # nobody can reach it
    try:
        copy = base / "copy"
        shutil.copytree(r.dir, copy, ignore=shutil.ignore_patterns(
            "*.parquet", "*.folded", "*.svg", "summary.json", "report.html"))
        subprocess.run(["chown", "-R", "nobody", str(base)], check=True)
        code = ("import sys; sys.path.insert(0, sys.argv[1]); "
                "from runfolder import records as R; R.BTF_JSON = R.Path('/nonexistent'); "
                "from analysis.__main__ import main; sys.exit(main(['-q', sys.argv[2]]))")
        p = subprocess.run(["runuser", "-u", "nobody", "--",
                            str(ROOT / ".venv" / "bin" / "python"), "-c", code, str(ROOT),
                            str(copy)], capture_output=True, text=True, cwd="/", timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        assert json.loads((copy / "summary.json").read_text()) == r.summary
    finally:
        shutil.rmtree(base)


def test_stepped_sites_cost_more(tmp_path):
    """A component whose probe site is single-stepped is compensated at that cost."""
    _synthetic_writes(tmp_path)
    cal = Calibration(pair_in_ns=600, pair_out_ns=700, one_ns=600,
                      stepped_pair_in_ns=10_000, stepped_components=("crc",))
    w = writes_frame(tmp_path, cal)
    assert w.loc[0, "crc_adj_ns"] == 12_000 - 10_000
    assert w.loc[0, "other_adj_ns"] == 3_000 - 600 - 700


@pytest.mark.root
def test_probe_site_classes():
    from engines.rocksdb import resolve as RR
    from probepoints.elf import is_emulated_site, stepped_phases
    lib = "/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8"
    res = RR.resolve([lib], modes.FULL)
    stepped = stepped_phases(res.probes)
    assert "PH_WRITE" not in stepped  # push %rbp: emulated
    ext = [p for p in res.probes if p.name.startswith("rocksdb::crc32c::Extend(")]
    assert ext and not is_emulated_site(ext[0].path, ext[0].offset)  # jmp *mem
    # the inner WriteToWAL(const WriteBatch&) runs inside the group-level one
    wal = [p.name for p in res.probes if p.name.startswith("rocksdb::DBImpl::WriteToWAL(")]
    assert len(wal) == 1 and "WriteGroup const&" in wal[0], wal
    assert not res.groups_unprobed and "memtable" not in res.sampled_split


@pytest.mark.root
def test_writes_mode_probes_boundaries_and_wal_calls_only():
    """--mode writes: WriteImpl and the WAL calls; group roles and queue
    come from syscalls, memtable and a waiter's spin from samples."""
    from engines.rocksdb import resolve as RR
    from engines.sqlite import resolve as SR
    res = RR.resolve(["/usr/lib/x86_64-linux-gnu/librocksdb.so.7.8"], modes.WRITES)
    assert {p.spec.phase for p in res.probes} == {"PH_WRITE", "PH_WAL"}
    assert {p.name.split("(")[0] for p in res.probes} == {
        "rocksdb::DBImpl::WriteImpl", "rocksdb::DBImpl::WriteToWAL",
        "rocksdb::DBImpl::ConcurrentWriteToWAL", "rocksdb::DBImpl::SyncWAL",
        "rocksdb::DBImpl::FlushWAL"}
    assert res.groups_unprobed
    assert res.sampled_split == {"crc": "wal_append", "memtable": "other", "queue": "other"}


def test_sqlite_compensation_uses_its_pair_and_syscall_costs(tmp_path):
    dt = GOLDEN.struct_dtype("ws_write_rec")
    a = np.zeros(1, dtype=dt)
    a["rec_type"] = GOLDEN.enum_values("ws_rec_type")["WS_REC_WRITE"]
    a["engine"] = GOLDEN.enum_values("ws_engine")["WS_ENGINE_SQLITE"]
    comps = GOLDEN.components("sqlite")
    ex, oth, jw = comps.index("sql_exec"), comps.index("other"), comps.index("journal_write_io")
    a["comp_ns"][0, ex], a["comp_ns"][0, oth], a["comp_ns"][0, jw] = 20_000, 5_000, 7_000
    a["dur_ns"][0] = 32_000
    a["hits_in"][0, ex] = 3      # BEGIN, INSERT, COMMIT steps
    a["hits_par"][0, oth] = 2    # the two opened from the application's time
    a["sys_in"][0, jw] = 4       # four journal writes ...
    a["sys_par"][0, ex] = 4      # ... issued from inside steps
    a["sys_ign"][0, ex] = 5      # and five untraced ones (pread...)
    a["flags"][0] = 0x10
    (golden_folder(tmp_path) / "writes.bin").write_bytes(a.tobytes())
    cal = Calibration(pair_in_ns=99_999,
                      pairs=(("sql_pair_in_ns", 2_000), ("sql_pair_out_ns", 1_500)),
                      sys_in_ns=100, sys_out_ns=400, sys_ign_ns=50)
    w = writes_frame(tmp_path, cal, "sqlite")
    # a traced syscall's slow path (sys_ign_ns) lands outside its window too
    assert w.loc[0, "sql_exec_adj_ns"] == 20_000 - 3 * 2_000 - 4 * (400 + 50) - 5 * 50
    assert w.loc[0, "untraced_syscalls"] == 5
    assert w.loc[0, "other_adj_ns"] == 5_000 - 2 * 1_500
    assert w.loc[0, "journal_write_io_adj_ns"] == 7_000 - 4 * 100
    assert bool(w.loc[0, "explicit"]) and w.loc[0, "engine"] == "sqlite"
    # a RocksDB reading of the same file finds no RocksDB writes
    assert len(writes_frame(tmp_path, cal, "rocksdb")) == 0


def test_a_sqlite_pair_whose_inside_read_more_than_the_pair_is_split_as_uprobes_are():
    """walscope-calibrate's SQLite transaction read 21 us inside a 2 us
    pair on one VM (3 rounds, spread 37 us), and compensation took 120 us
    from a 156 us read-only transaction (tests/test_matrix.py's SQLite
    matrix: 0.24 of its untraced mean).  The inside is part of the pair:
    a reading outside [0, pair] is split as the uprobe pair's is."""
    from analysis.compensation import derived_costs
    m = {"pair_ns": 1813.0, "pair_in_ns": 851.5, "sql_pair_ns": 2008.0,
         "sql_pair_in_ns": 21117.0}
    got = derived_costs(m)
    assert got["sql_pair_in_ns"] == pytest.approx(2008 * 851.5 / 1813)
    assert got["sql_pair_in_ns"] + got["sql_pair_out_ns"] == pytest.approx(2008)
    sane = derived_costs({**m, "sql_pair_in_ns": 900.0})
    assert sane["sql_pair_in_ns"] == 900 and sane["sql_pair_out_ns"] == 1108


def test_transactions_labelled_by_the_workload_log():
    from analysis.writes import by_type, label_transactions
    w = pd.DataFrame({"tid": [7, 7, 8, 7], "start_ns": [100, 300, 310, 900],
                      "dur_ns": [50, 60, 70, 10], "dur_adj_ns": [40, 50, 60, 5],
                      "x_adj_ns": [1, 2, 3, 4]})
    log = pd.DataFrame({"tid": [7, 7, 8], "start_ns": [90, 290, 305],
                        "end_ns": [160, 370, 390], "type": ["a", "b", "a"]})
    out = label_transactions(w, log)
    assert list(out["txn_type"]) == ["a", "b", "a", ""]   # 900: after every span
    assert list(out["app_latency_ns"]) == [70, 80, 85, 0]
    bt = by_type(out)
    assert bt["a"]["count"] == 2 and bt["a"]["components"]["x"] == 2.0


@pytest.mark.root
def test_sqlite_symbols_of_the_system_library():
    from collectors.symbols import candidate_objects_for_command
    from engines.sqlite import resolve as SR
    objs = candidate_objects_for_command("/usr/bin/python3", [])
    res = SR.resolve(objs, modes.FULL)
    assert res.engine == "sqlite" and res.object_path and "libsqlite3" in res.object_path
    step = next(p for p in res.probes if p.spec.phase == "PH_SQL_STEP")
    assert step.arg > 0 and not res.notes          # zSql found in sqlite3_sql
    assert {p.spec.phase for p in res.probes} == {"PH_SQL_STEP", "PH_CHECKPOINT"}
    assert SR.resolve(objs, modes.SAMPLE).probes == []
    assert SR.decode_sql_offset("/dev/null", 0) == 0
    # and autoCommit's offset in a connection, the connection's in a Vdbe
    # (bits 16.. and 32.. of the argument): both non-zero where decoded
    assert step.arg >> 16 & 0xffff and SR.decode_autocommit_offset("/dev/null", 0) == 0


def test_sqlite_transaction_state_offsets_decode_from_their_accessors(tmp_path):
    """sqlite3_get_autocommit is ``movzbl disp(%rdi),%eax; ret`` and
    sqlite3_db_handle ``[test; je;] mov disp(%rdi),%rax; ret``: their
    displacements, 8- or 32-bit; anything else decodes to unknown."""
    from engines.sqlite import resolve as SR
    code = tmp_path / "code"
    cases = [(b"\x0f\xb6\x47\x65\xc3", SR.decode_autocommit_offset, 0x65),
             (b"\x0f\xb6\x87\x10\x01\x00\x00\xc3", SR.decode_autocommit_offset, 0x110),
             (b"\x31\xc0\xc3", SR.decode_autocommit_offset, 0),
             (b"\x48\x85\xff\x74\x0b\x48\x8b\x07\xc3", SR.decode_db_offset, 0),
             (b"\x48\x8b\x47\x08\xc3", SR.decode_db_offset, 8),
             (b"\x31\xc0\xc3", SR.decode_db_offset, None)]
    for raw, decode, want in cases:
        code.write_bytes(b"\x90" * 16 + raw)
        assert decode(str(code), 16) == want, (raw, want)
    code.write_bytes(b"\x0f\xb6\x47\x65\xc3" + b"\x48\x8b\x47\x08\xc3")
    assert SR.in_txn_arg(str(code), {"sqlite3_get_autocommit": 0,
                                     "sqlite3_db_handle": 5}) == 0x65 << 16 | 8 << 32
    assert SR.in_txn_arg(str(code), {"sqlite3_get_autocommit": 0}) == 0


def test_the_runs_engine_is_the_earliest_found_in_the_registry(tmp_path):
    """A process with SQLite met before RocksDB (Python's own sqlite3) is
    a RocksDB run; objects of one engine: the first met names it."""
    from collectors.objects import ObjectFollower
    from probepoints.points import Resolution
    f = ObjectFollower(modes.FULL, False, tmp_path)
    f.found = [Resolution(object_path="/a/libsqlite3.so", engine="sqlite"),
               Resolution(object_path="/b/librocksdb.so", engine="rocksdb"),
               Resolution(object_path="/c/librocksdb.so", engine="rocksdb")]
    res = f.merged()
    assert (res.engine, res.object_path) == ("rocksdb", "/b/librocksdb.so")
    f.found = f.found[:1]
    assert f.merged().engine == "sqlite"


def test_sampled_split_moves_a_share_of_the_parent():
    from analysis.sampling import split_fractions
    from analysis.writes import apply_split
    samples = pd.DataFrame({
        "in_write": [True] * 40 + [False] * 10,
        "phase_comp": ["wal_append"] * 30 + ["memtable"] * 10 + ["wal_append"] * 10,
        "component": ["crc"] * 6 + ["wal_append"] * 24 + ["crc"] * 20})
    f = split_fractions(samples, {"crc": "wal_append"})
    assert f["crc"]["samples"] == 30 and f["crc"]["fraction"] == 0.2 and f["crc"]["applied"]
    w = pd.DataFrame({"crc_ns": [0, 0], "crc_adj_ns": [0, 0],
                      "wal_append_ns": [1000, 50], "wal_append_adj_ns": [800, 40]})
    w = apply_split(w, f)
    assert list(w["crc_ns"]) == [200, 10] and list(w["wal_append_ns"]) == [800, 40]
    # the share is of the parent as measured (probe handling was sampled
    # too): the same time leaves the compensated parent
    assert list(w["crc_adj_ns"]) == [200, 10] and list(w["wal_append_adj_ns"]) == [600, 30]
    few = split_fractions(samples.head(5), {"crc": "wal_append"})
    assert not few["crc"]["applied"] and few["crc"]["fraction"] == 0.0


def test_two_sampled_shares_of_one_parent_are_taken_from_it_as_measured():
    """--mode writes splits memtable and a waiting writer's spin (queue)
    out of other: both shares are of the same samples, so both apply to
    other as measured, not one after the other; queue counts only the
    waiting symbols, not a leader's WriteThread:: bookkeeping."""
    from analysis.sampling import split_fractions
    from analysis.writes import apply_split
    syms = (["rocksdb::MemTable::Add"] * 20 + ["rocksdb::WriteThread::AwaitState"] * 10
            + ["rocksdb::WriteThread::ExitAsBatchGroupLeader"] * 5 + ["[kernel]"] * 15)
    samples = pd.DataFrame({
        "in_write": [True] * 50, "phase_comp": ["other"] * 50, "symbol": syms,
        "component": ["memtable"] * 20 + ["queue"] * 15 + ["kernel"] * 15})
    f = split_fractions(samples, {"memtable": "other", "queue": "other"})
    assert f["memtable"]["fraction"] == 0.4 and f["queue"]["fraction"] == 0.2
    w = pd.DataFrame({c: [0] for c in ("memtable_ns", "memtable_adj_ns",
                                        "queue_ns", "queue_adj_ns")})
    w["other_ns"], w["other_adj_ns"], w["queue_ns"] = [1000], [900], [300]
    w = apply_split(w, f)
    assert int(w["memtable_ns"][0]) == 400 and int(w["queue_ns"][0]) == 500
    assert int(w["other_ns"][0]) == 400 and int(w["other_adj_ns"][0]) == 300
    # a compensated parent smaller than the shares: nothing goes negative
    w2 = pd.DataFrame({"memtable_ns": [0], "memtable_adj_ns": [0], "queue_ns": [0],
                       "queue_adj_ns": [0], "other_ns": [1000], "other_adj_ns": [500]})
    w2 = apply_split(w2, f)
    assert int(w2["other_adj_ns"][0]) == 0 and int(w2["queue_adj_ns"][0]) == 100


def test_samples_in_io_syscalls_take_the_engines_components():
    from analysis.sampling import classify_symbol, syscall_component

    def sc(nr: int, kind: str, engine: str = "rocksdb") -> str | None:
        return syscall_component(nr, kind, engine, GOLDEN)
    assert sc(75, "wal") == "wal_sync_io"
    assert sc(1, "wal") == "wal_write_io"
    assert sc(75, "dir") == "wal_sync_io"   # RocksDB syncs the WAL's dir
    assert sc(1, "other") is None           # e.g. stdout
    assert sc(202, "wal") is None           # futex
    assert sc(75, "journal", "sqlite") == "journal_sync_io"
    assert sc(18, "wal", "sqlite") == "journal_write_io"
    assert sc(74, "db", "sqlite") == "db_sync_io"
    assert sc(74, "dir", "sqlite") == "dir_sync_io"
    assert sc(1, "other", "sqlite") is None
    assert classify_symbol("sqlite3VdbeExec") == "sql_exec"
    assert classify_symbol("[libsqlite3.so.0]") == "sql_exec"
    assert classify_symbol("rocksdb::MemTable::Add") == "memtable"


def test_median_interval_of_the_overhead_benchmark():
    """bench/overhead.py's interval for a median: order statistics whose
    exact binomial coverage is at least 95%, and the narrowest such."""
    import importlib.util
    import math
    spec = importlib.util.spec_from_file_location("overhead", ROOT / "bench" / "overhead.py")
    o = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(o)

    def below(n: int, k: int) -> float:   # P(Binomial(n, 1/2) < k)
        return sum(math.comb(n, i) for i in range(k)) / 2 ** n
    assert o.median_ci([1.0] * 5) is None          # too few for 95%
    for n in range(6, 41):
        xs = [float(i) for i in range(n)]           # x(j) = j - 1
        lo, hi = o.median_ci(list(reversed(xs)))
        k = int(lo) + 1
        assert hi == n - k
        assert 1 - 2 * below(n, k) >= 0.95
        assert 1 - 2 * below(n, k + 1) < 0.95
    assert o.cell({"median": 0.95, "ratios": [0.9, 1.0, 0.95]}) == "0.95 [0.90, 1.00] (range)"
