"""walscope serve's retention (runners/command/retention.py) on constructed
records in a spool folder: which records a slow write keeps, that each
segment holds a record once, that an exemplar's name finds its write, that
SIGHUP's rotation leaves a pending write in the folder its exemplar names,
that the spool's blocks are given back, that the disk cap removes the
oldest folders first, and the folders' modes.  serve's own end-to-end
test, against a real PostgreSQL and Prometheus, is tests/test_serve.py."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from runfolder import records as R
from runfolder.files import RunFolder
from runners.command import retention as RT
from runners.command.retention import Retainer, RetentionError, Threshold
from tests.conftest import GOLDEN, golden_folder

MS = 1_000_000
US = 1_000
T0 = 10_000 * MS        # the records' clock (CLOCK_MONOTONIC) at the start
TYPES = GOLDEN.enum_values("ws_rec_type")
# a step this long after a write's start: its records written, by the wall's
# clock, whatever the records read (a write here lasts under 10 ms)
LATER = 10 * MS + RT.CONTEXT_NS + RT.LAG_NS + RT.STALL_NS


def recs(struct: str, n: int, **fields: object) -> np.ndarray:
    a = np.zeros(n, dtype=GOLDEN.struct_dtype(struct))
    tag = "WS_REC_" + struct[len("ws_"):-len("_rec")].upper()
    a["rec_type"] = TYPES[tag]
    for k, v in fields.items():
        a[k] = v
    return a


def writes(starts_ns: list[int], durs_ns: list[int], tid: int = 7) -> np.ndarray:
    return recs("ws_write_rec", len(starts_ns), pid=7, tid=tid, start_ns=starts_ns,
                dur_ns=durs_ns, engine=1)


def rows(w: np.ndarray) -> pd.DataFrame:
    """The feeder's frame of the write records (compensation aside)."""
    return pd.DataFrame({"start_ns": w["start_ns"].astype(np.int64),
                         "dur_ns": w["dur_ns"].astype(np.int64),
                         "dur_adj_ns": w["dur_ns"].astype(np.float64),
                         "tid": w["tid"].astype(np.int64)})


def spool(tmp_path: Path) -> Path:
    d = golden_folder(tmp_path / "out" / "spool")
    RunFolder(d).run_json.write_text(json.dumps({"summary": {"pid": 7}}))
    return d


def retainer(tmp_path: Path, keep: str = "1ms", max_disk: int = 1 << 30, **kw) -> Retainer:
    sp = spool(tmp_path)
    return Retainer(sp.parent, sp, GOLDEN, Threshold.parse(keep), max_disk, **kw)


def feed(r: Retainer, w: np.ndarray, io: np.ndarray | None = None) -> pd.DataFrame:
    r.add("ws_write_rec", w)
    if io is not None:
        r.add("ws_io_rec", io)
    return r.judge(rows(w))


def kept(folder: Path, struct: str) -> np.ndarray:
    return R.read_records(folder, struct)


def test_thresholds_and_sizes_parse_or_say_why():
    assert Threshold.parse("5ms").ns == 5 * MS
    assert Threshold.parse("200us").ns == 200 * US
    assert Threshold.parse("2").ns == 2 * MS          # ms without a unit
    assert Threshold.parse("p99.9").quantile == pytest.approx(0.999)
    assert RT.parse_size("500M") == 500 << 20 and RT.parse_size("2G") == 2 << 30
    assert RT.parse_size(str(32 << 20)) == 32 << 20
    for bad in ("fast", "p100", "p0", "-3ms", "5 parsecs"):
        with pytest.raises(RetentionError, match="--keep-slower"):
            Threshold.parse(bad)
    for bad in ("0", "lots", "-1G", "512K", "15M"):
        with pytest.raises(RetentionError, match="--max-disk"):
            RT.parse_size(bad)


def test_a_slow_write_keeps_what_overlaps_it_and_nothing_else(tmp_path):
    """A 5 ms write among 100 us ones keeps itself, the write beside it
    (its group), the syscalls that overlap it, a run-queue wait stamped at
    its end inside it; not the writes and syscalls a second away.  Its
    records are written once the records read have passed its end by
    LAG_NS (the records' own clock), not before."""
    r = retainer(tmp_path)
    w = writes([T0, T0 + 1 * MS], [5 * MS, 100 * US])
    w["tid"][1] = 8
    io = recs("ws_io_rec", 2, pid=7, tid=7, ts_ns=[T0 + 2 * MS, T0 - 3 * MS],
              lat_ns=[1 * MS, 2_500 * US], nr=75, kind=1)
    r.add("ws_sched_rec", recs("ws_sched_rec", 1, pid=7, tid=7, ts_ns=T0 + 7 * MS,
                               dur_ns=3 * MS))
    slow = feed(r, w, io)
    assert list(slow["start_ns"]) == [T0]
    seg = r.segment.dir
    assert list(slow["kept"]) == [f"{seg.name}/7/{T0}"]
    r.step({}, now_ns=T0 + 10 * MS)          # its records may still come
    assert len(kept(seg, "ws_write_rec")) == 0
    # a second later: a write, a syscall, a wait of their own
    far = feed(r, writes([T0 + 1000 * MS], [100 * US]),
               recs("ws_io_rec", 1, pid=7, tid=7, ts_ns=T0 + 900 * MS, lat_ns=1 * MS))
    r.add("ws_sched_rec", recs("ws_sched_rec", 1, pid=7, tid=7, ts_ns=T0 + 500 * MS,
                               dur_ns=10 * US))
    assert far.empty
    r.step({}, now_ns=T0 + 10 * MS)          # the records read are past its end + LAG_NS
    assert sorted(kept(seg, "ws_write_rec")["start_ns"]) == [T0, T0 + 1 * MS]
    # the one at +2 ms, and the one that ended 0.5 ms into the write
    assert sorted(kept(seg, "ws_io_rec")["ts_ns"]) == [T0 - 3 * MS, T0 + 2 * MS]
    assert list(kept(seg, "ws_sched_rec")["ts_ns"]) == [T0 + 7 * MS]
    # the exemplar's name finds its write in the folder
    folder, tid, start = slow["kept"].iloc[0].split("/")
    got = kept(r.out_dir / folder, "ws_write_rec")
    assert len(got[(got["tid"] == int(tid)) & (got["start_ns"] == int(start))]) == 1


class Failing:
    """A segment's file whose first `fail` writes fail as a full disk
    does (after writing part of what they were given)."""

    def __init__(self, f, fail: int) -> None:
        self.f, self.fail, self.calls = f, fail, 0

    def write(self, data: bytes) -> int:
        self.calls += 1
        if self.calls <= self.fail:
            self.f.write(data[:len(data) // 2])
            raise OSError(28, "No space left on device")
        return self.f.write(data)

    def __getattr__(self, name: str):
        return getattr(self.f, name)


def test_a_write_that_fails_leaves_its_interval_for_the_next_step(tmp_path, capsys):
    """A folder's file that cannot be written (a full disk) is cut back to
    what it held, said once, and the slow write's interval stays pending:
    the next step writes it, each record once.  One that keeps failing is
    given up after WRITE_TRIES steps (counted as lost), and each step
    still gives the spool back."""
    r = retainer(tmp_path)
    assert len(feed(r, writes([T0], [5 * MS]))) == 1
    seg = r.segment
    seg.files["ws_write_rec"] = Failing(seg.files["ws_write_rec"], 1)
    r.step({}, now_ns=T0 + LATER)
    assert len(r.pending) == 1 and len(kept(seg.dir, "ws_write_rec")) == 0
    r.step({}, now_ns=T0 + LATER)
    assert not r.pending
    assert list(kept(seg.dir, "ws_write_rec")["start_ns"]) == [T0]
    r.step({}, now_ns=T0 + LATER)
    assert len(kept(seg.dir, "ws_write_rec")) == 1
    assert capsys.readouterr().err.count("No space left on device") == 1
    # never written: given up, the spool given back at each step
    slow = feed(r, writes([T0 + 2000 * MS], [5 * MS]))
    assert len(slow) == 1
    seg.files["ws_write_rec"] = Failing(seg.files["ws_write_rec"].f, 99)
    sp = r.spool.records("ws_write_rec")
    sp.write_bytes(b"\1" * (1 << 16))
    for k in range(RT.WRITE_TRIES):
        assert r.pending
        r.step({"ws_write_rec": (k + 1) << 12}, now_ns=T0 + 2000 * MS + LATER)
    assert not r.pending and r.lost == 1
    assert len(kept(seg.dir, "ws_write_rec")) == 1
    assert sp.read_bytes()[:RT.WRITE_TRIES << 12] == bytes(RT.WRITE_TRIES << 12)


def test_a_record_that_comes_after_its_interval_was_written_is_added(tmp_path):
    """A syscall that began inside the slow write and ended 2 s later comes
    after the write's records were written: it is added to that folder,
    once."""
    r = retainer(tmp_path)
    feed(r, writes([T0], [3 * MS]))
    r.step({}, now_ns=T0 + LATER)
    seg = r.segment.dir
    assert len(kept(seg, "ws_write_rec")) == 1 and len(kept(seg, "ws_io_rec")) == 0
    r.add("ws_io_rec", recs("ws_io_rec", 1, pid=7, tid=9, ts_ns=T0 + 1 * MS,
                            lat_ns=2_000 * MS))
    r.step({}, now_ns=T0 + LATER + 10 * MS)
    r.step({}, now_ns=T0 + LATER + 20 * MS)
    assert list(kept(seg, "ws_io_rec")["tid"]) == [9]
    assert len(kept(seg, "ws_write_rec")) == 1


def test_a_folder_holds_every_open_of_the_life_before_its_end(tmp_path):
    """A WAL file opened long before the slow write (outside its interval):
    the folder still names its fd; an open after the write does not go."""
    r = retainer(tmp_path)
    r.add("ws_open_rec", recs("ws_open_rec", 2, pid=7, tid=7, ts_ns=[T0 - 9_000 * MS,
                                                                     T0 + 9_000 * MS],
                              ret=[12, 13], path=[b"/db/000042.log", b"/db/later.log"]))
    feed(r, writes([T0], [2 * MS]))
    r.close()
    got = kept(r.closed[0], "ws_open_rec")
    assert [p.decode() for p in got["path"]] == ["/db/000042.log"]


def test_records_that_stop_coming_leave_the_interval_to_the_wall_clock(tmp_path):
    r = retainer(tmp_path)
    feed(r, writes([T0], [2 * MS]))
    r.step({}, now_ns=T0 + RT.STALL_NS)               # nothing read since: not yet
    assert len(kept(r.segment.dir, "ws_write_rec")) == 0
    r.step({}, now_ns=T0 + 3 * MS + RT.CONTEXT_NS + RT.LAG_NS + RT.STALL_NS)
    assert len(kept(r.segment.dir, "ws_write_rec")) == 1


def test_overlapping_slow_writes_keep_each_record_once(tmp_path):
    r = retainer(tmp_path)
    w = writes([T0, T0 + 2 * MS], [3 * MS, 3 * MS])
    io = recs("ws_io_rec", 1, pid=7, tid=7, ts_ns=T0 + 2_500 * US, lat_ns=100 * US)
    assert len(feed(r, w, io)) == 2
    r.step({}, now_ns=T0 + LATER)
    # and a later batch's slow write next to them: written, not the others again
    w2 = writes([T0 + 6 * MS], [2 * MS])
    assert len(feed(r, w2)) == 1
    r.step({}, now_ns=T0 + LATER + 10 * MS)
    seg = r.segment.dir
    assert len(kept(seg, "ws_write_rec")) == 3
    assert len(kept(seg, "ws_io_rec")) == 1


def test_rotation_leaves_a_pending_write_where_its_exemplar_points(tmp_path):
    """SIGHUP (rotate()) between a slow write and the moment its records
    are written: the write still lands in the folder its exemplar named,
    which then closes; the next slow write opens another."""
    r = retainer(tmp_path)
    first = feed(r, writes([T0], [2 * MS]))
    r.rotate()
    r.step({}, now_ns=T0 + 3 * MS)        # not yet written: the folder waits
    assert r.segment is None and len(r.closing) == 1
    second = feed(r, writes([T0 + 5 * MS], [2 * MS], tid=9))
    r.step({}, now_ns=T0 + LATER)
    a, b = (s.split("/")[0] for s in (first["kept"].iloc[0], second["kept"].iloc[0]))
    assert a != b
    assert list(kept(r.out_dir / a, "ws_write_rec")["tid"]) == [7]
    assert list(kept(r.out_dir / b, "ws_write_rec")["tid"]) == [9]
    closed = json.loads((r.out_dir / a / "run.json").read_text())["summary"]["retained"]
    assert closed["slow_writes"] == 1 and closed["writes_kept"] == 1
    assert (r.out_dir / a / "collector.json").exists() and r.closed == [r.out_dir / a]


def test_a_quantile_keeps_nothing_until_the_minute_holds_enough(tmp_path):
    r = retainer(tmp_path, keep="p99")
    durs = [100 * US] * 50 + [9 * MS]
    none = feed(r, writes([T0 + i * MS for i in range(51)], durs))   # 51 < 100
    assert none.empty and "kept" in none       # (the feeder reads the column regardless)
    w = writes([T0 + (100 + i) * MS for i in range(60)], [100 * US] * 59 + [8 * MS])
    slow = feed(r, w)
    assert list(slow["dur_ns"]) == [8 * MS]


def test_the_spool_is_given_back_as_it_is_read(tmp_path):
    r = retainer(tmp_path)
    path = r.spool.records("ws_io_rec")
    data = recs("ws_io_rec", 4096, ts_ns=T0, lat_ns=1).tobytes()
    path.write_bytes(data)
    os.sync()
    before = path.stat().st_blocks
    r.step({"ws_io_rec": len(data)}, now_ns=T0)
    after = path.stat()
    if after.st_blocks == before:
        pytest.skip("this file system keeps punched blocks")
    assert after.st_size == len(data) and after.st_blocks < before / 10
    assert len(R.read_records(r.spool.dir, "ws_io_rec")) == 0     # zeros: no record


def test_the_cap_removes_the_oldest_folders_first(tmp_path):
    """Slow writes that fill a folder (an eighth of the cap) every two:
    the oldest folders go, the newest stay, and the whole stays under the
    cap."""
    cap = 2 << 20
    r = retainer(tmp_path, max_disk=cap)
    names = []
    for i in range(24):
        t = T0 + i * 100 * MS
        w = writes([t], [2 * MS])
        # 128 KiB of syscalls each: 3 MiB in all, a folder closed every two
        io = recs("ws_io_rec", (128 << 10) // GOLDEN.struct_dtype("ws_io_rec").itemsize + 1,
                  pid=7, tid=7, ts_ns=t + MS, lat_ns=1)
        names.append(feed(r, w, io)["kept"].iloc[0].split("/")[0])
        r.step({}, now_ns=t + LATER)
    assert r.removed > 0
    assert r.used() <= cap
    made = list(dict.fromkeys(names))             # in the order they were opened
    left = {p.name for p in r.out_dir.iterdir() if p.name.startswith("slow-")}
    assert left and set(made[-len(left):]) == left, (made, left)


def test_folders_are_root_and_the_groups_only(tmp_path):
    gid = os.getgid()
    r = retainer(tmp_path, gid=gid)
    feed(r, writes([T0], [2 * MS]))
    r.close()
    seg = r.closed[0]
    assert stat.S_IMODE(seg.stat().st_mode) == 0o750 and seg.stat().st_gid == gid
    for f in seg.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o640, f
        assert f.stat().st_gid == gid
