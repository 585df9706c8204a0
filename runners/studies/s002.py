"""Seed 002: disable_wal on/off for fillseq, fillrandom and readrandom."""
from __future__ import annotations

from runners.studies.judge import order, ops, pct, traced_note, x
from runners.studies.model import HELD, NOT_HELD, PARTLY, UNTESTABLE, Claim, Metric, Study, Verdict
from runners.studies.results import WAL_PARTS, Results

WRITE_BENCHES = ("fillseq", "fillrandom")


def cell(r: Results, disable: bool, bench: str):
    return r.cell(disable_wal=disable, benchmarks=bench)


def wal_costs(r: Results) -> Verdict:
    parts, held = [], 0
    for b in WRITE_BENCHES:
        off, on = cell(r, True, b), cell(r, False, b)
        faster = order(off.stat("ops_sec"), on.stat("ops_sec")) == ">"
        lower = order(off.stat("micros_op"), on.stat("micros_op")) == "<"
        held += faster and lower
        parts.append(f"{b}: WAL off {ops(off)}, on {ops(on)} "
                     f"({x(off.value('ops_sec'), on.value('ops_sec'))}); avg "
                     f"{off.value('micros_op'):.2f} vs {on.value('micros_op'):.2f} us/op")
    return Verdict(HELD if held == 2 else PARTLY if held else NOT_HELD,
                   "; ".join(parts) + ". (The seed: 3.5x on fillseq, 2.1x on fillrandom, "
                   "in MB/s.)", "throughput.png")


def waf_unchanged(r: Results) -> Verdict:
    parts, same = [], 0
    for b in WRITE_BENCHES:
        off, on = cell(r, True, b), cell(r, False, b)
        a, c = off.stat("sst_write_amplification"), on.stat("sst_write_amplification")
        if a is None or c is None or not (a.median or c.median):
            parts.append(f"{b}: no flush or compaction happened, so no SST bytes to compare")
            continue
        same += abs(a.median - c.median) <= 0.1 * max(a.median, c.median, 1e-9) \
            or order(a, c) == "~"
        parts.append(f"{b}: SST write amplification {a.median:.2f} with the WAL off, "
                     f"{c.median:.2f} on (WAL bytes, not counted there: "
                     f"{on.value('wal_bytes') / 1e6:.1f} MB)")
    if not any("SST write amplification" in x for x in parts):
        return Verdict(UNTESTABLE, "; ".join(parts) + ".")
    return Verdict(HELD if same == 2 else PARTLY if same else NOT_HELD,
                   "; ".join(parts) + ". The seed: WAF 2 and 1.7 either way.", None)


def wal_is_io(r: Results) -> Verdict:
    on = cell(r, False, "fillrandom")
    if not on.writes:
        return Verdict(UNTESTABLE, "no write of the traced run fell inside a window")
    io = on.comp_mean_us.get("wal_write_io", 0) + on.comp_mean_us.get("wal_sync_io", 0)
    cpu = on.comp_mean_us.get("wal_append", 0) + on.comp_mean_us.get("crc", 0)
    return Verdict(HELD if io > cpu else NOT_HELD,
                   f"fillrandom with the WAL: its write(2)s take {io:.2f} us of the mean "
                   f"write, building the record (CRC and append into RocksDB's buffer) "
                   f"{cpu:.2f} us; the WAL as a whole {pct(on.share(WAL_PARTS))} of a "
                   f"{on.mean_us:.2f} us write.", "breakdown.png")


def findings(r: Results) -> list[str]:
    out = []
    for b in WRITE_BENCHES:
        off, on = cell(r, True, b), cell(r, False, b)
        wal = sum(on.comp_mean_us.get(c, 0) for c in WAL_PARTS)
        out.append(
            f"**What disable_wal removes ({b}).** The traced write takes {on.mean_us:.2f} us "
            f"with the WAL and {off.mean_us:.2f} us without ({on.mean_us - off.mean_us:+.2f} "
            f"us); the WAL's own components in the first are {wal:.2f} us: "
            + ", ".join(f"{c} {on.comp_mean_us.get(c, 0):.2f}" for c in WAL_PARTS)
            + f". Memtable insert: {on.comp_mean_us.get('memtable', 0):.2f} vs "
            f"{off.comp_mean_us.get('memtable', 0):.2f} us. At p99 the WAL is "
            f"{pct(on.share(WAL_PARTS, tail=True))} of the tail against "
            f"{pct(on.share(WAL_PARTS))} of the mean. ({traced_note(on)}.)")
    return out


STUDY = Study(
    id="002", slug="disable-wal",
    title="disable_wal on/off: fillseq, fillrandom, readrandom",
    seed="002_0f83ef2c81bb6d43.txt",
    question="What does the WAL cost RocksDB's writes (throughput, latency, write "
             "amplification), and where in the write does that cost sit?",
    scenario="disable_wal.toml",
    setup="db_bench, 1 thread, 400,000 operations per benchmark (the seed does not give "
          "its sizes and ran 10 times on a Core i9 with a SATA SSD): fillseq, fillrandom, "
          "and fillseq followed by readrandom, each with the WAL on and off. A 4 MiB write "
          "buffer (RocksDB's default is 64 MiB) makes this many writes flush and compact, "
          "as the seed's larger runs did. Write amplification is RocksDB's flush plus "
          "compaction bytes over the bytes written (--statistics); the WAL's bytes are "
          "given apart.",
    metrics=[Metric("ops_sec", "ops/s", "{:,.0f}"), Metric("micros_op", "avg us/op", "{:.2f}"),
             Metric("p99_us", "p99 us", "{:.1f}"),
             Metric("sst_write_amplification", "SST WAF", "{:.2f}")],
    claims=[
        Claim("Enabling the WAL lowers throughput and raises latency.", wal_costs),
        Claim("The WAL does not change write amplification (SAF/WAF equal on and off).",
              waf_unchanged),
        Claim("The WAL's cost is its I/O: WriteToWAL ends in write/pwrite calls.", wal_is_io),
    ],
    findings=findings,
    full={"fixed": {"num": 400000, "write_buffer_size": 4 << 20}, "repeats": 5},
    quick={"fixed": {"num": 50000}, "repeats": 1,
           "axes": {"disable_wal": [True, False], "benchmarks": ["fillrandom"]}},
    flames=lambda r: [cell(r, False, "fillrandom").name, cell(r, True, "fillrandom").name],
)
