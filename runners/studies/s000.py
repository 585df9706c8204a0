"""Seed 000: RocksDB WAL sync on/off on a hybrid CPU, threads pinned to P
cores, to E cores, or not pinned."""
from __future__ import annotations

from runners.studies.judge import order, ops, pct, top_growth, traced_note, x
from runners.studies.model import HELD, NOT_HELD, PARTLY, UNTESTABLE, Claim, Metric, Study, Verdict
from runners.studies.results import Results

SYNC_WAIT = ("wal_sync_io", "queue")


def sync_collapses(r: Results) -> Verdict:
    on, off = r.cell(sync=True, pin="none"), r.cell(sync=False, pin="none")
    a, b = on.stat("ops_sec", "fillrandom"), off.stat("ops_sec", "fillrandom")
    share = on.share(SYNC_WAIT)
    ev = (f"fillrandom, unpinned: {ops(off, 'fillrandom')} with sync=false against "
          f"{ops(on, 'fillrandom')} with sync=true ({x(b.median, a.median)}); in the traced "
          f"sync=true run the WAL sync and the queue behind it take {pct(share)} of the mean "
          "write.")
    ok = order(b, a) == ">" and b.median > 2 * a.median
    return Verdict(HELD if ok and share > 0.5 else PARTLY if ok else NOT_HELD, ev,
                   "throughput.png")


def pinned_gap(r: Results, sync: bool) -> str:
    p, e = r.cell(sync=sync, pin="P"), r.cell(sync=sync, pin="E")
    return (f"pinned to CPU 0 (\"P\") {ops(p, 'fillrandom')}, to CPU 1 (\"E\") "
            f"{ops(e, 'fillrandom')}: {x(p.value('ops_sec', 'fillrandom'), e.value('ops_sec', 'fillrandom'))}")


def sync_hides_cores(r: Results) -> Verdict:
    return Verdict(UNTESTABLE, "This VM's two cores are identical; P and E are declared "
                   "labels (--cpu-types P:0,E:1). With sync=true, " + pinned_gap(r, True)
                   + ", the difference two identical cores make.", "throughput.png")


def async_shows_cores(r: Results) -> Verdict:
    off = r.cell(sync=False, pin="P")
    runq = off.share(("sched_runq",))
    return Verdict(UNTESTABLE, "Identical cores again: with sync=false, "
                   + pinned_gap(r, False) + f". What a core's speed would act on is "
                   f"visible, though: pinned, on-CPU components and run-queue waits "
                   f"({pct(runq)} of the mean write) make up the write.", "breakdown.png")


def pinning_limits(r: Results) -> Verdict:
    parts, held = [], 0
    for sync in (False, True):
        free, pin = r.cell(sync=sync, pin="none"), r.cell(sync=sync, pin="P")
        o = order(free.stat("ops_sec", "fillrandom"), pin.stat("ops_sec", "fillrandom"))
        held += o == ">"
        parts.append(f"sync={str(sync).lower()}: unpinned {ops(free, 'fillrandom')}, one "
                     f"core {ops(pin, 'fillrandom')} "
                     f"({x(free.value('ops_sec', 'fillrandom'), pin.value('ops_sec', 'fillrandom'))})")
    return Verdict(HELD if held == 2 else PARTLY if held else NOT_HELD,
                   "; ".join(parts) + ". Here \"pinned\" means one of two cores, so the "
                   "comparison is two cores against one.", "throughput.png")


def findings(r: Results) -> list[str]:
    out = []
    on = r.cell(sync=True, pin="none")
    name, m, t = top_growth(on)
    out.append(f"**What makes the sync=true tail.** Unpinned, the mean write takes "
               f"{on.mean_us:.0f} us and the p99 {on.p99_us:.0f} us; the component that grows "
               f"most from the mean to the slowest 1% is `{name}` ({m:.0f} -> {t:.0f} us). "
               f"({traced_note(on)}.)")
    f = on.extra
    if f.get("follower_mean_us"):
        out.append(f"**Followers wait for the leader's fdatasync.** {f['followers']:,} of "
                   f"{(f['followers'] or 0) + (f['leaders'] or 0):,} writes joined a group "
                   f"another thread led; a follower's mean latency is "
                   f"{f['follower_mean_us']:.0f} us, of which {f['follower_behind_sync_us']:.0f} us "
                   f"({pct(f['follower_behind_sync_us'] / f['follower_mean_us'])}) is spent queued "
                   "while the leader's WAL sync runs. The averages only show that the sync is "
                   "slow; the rows show that most writes pay for somebody else's.")
    free, pin = r.cell(sync=False, pin="none"), r.cell(sync=False, pin="P")
    out.append(f"**What pinning does to an unsynced write.** Four threads on one core: "
               f"`sched_runq` (runnable, waiting for the CPU) is {pct(pin.share(('sched_runq',)))} "
               f"of the mean write and {pct(pin.share(('sched_runq',), tail=True))} of the p99 "
               f"tail, against {pct(free.share(('sched_runq',)))} and "
               f"{pct(free.share(('sched_runq',), tail=True))} on two cores; the queue for the "
               f"write group is {pct(pin.share(('queue',)))} against {pct(free.share(('queue',)))}. "
               f"Migrations between cores in the middle of a write: "
               f"{free.extra.get('migrations_per_1000', 0):.1f} per 1000 writes unpinned, "
               f"{pin.extra.get('migrations_per_1000', 0):.1f} pinned.")
    return out


STUDY = Study(
    id="000", slug="wal-sync-pe",
    title="WAL sync on/off, threads pinned to P cores, E cores, or not pinned",
    seed="000_5f67184b7e84c176.txt",
    question="How much does WAL synchronisation cost RocksDB writes, and does the type of "
             "core the writers run on (performance or efficiency) matter when the WAL is "
             "synced and when it is not?",
    scenario="wal_sync_pe.toml",
    setup="db_bench fillrandom then overwrite, 4 threads, key 16 B, value 100 B, 256 MiB "
          "write buffer, snappy, as in the seed. The seed ran 50,000 writes per thread on a "
          "Core Ultra 7 155H under WSL2 (4 vCPUs); here 20,000 per thread (so that the "
          "sync=true cells take seconds, not minutes) on a 2-core VM whose cores are "
          "identical. \"P\" and \"E\" are declared (`--cpu-types P:0,E:1`): pinning to P "
          "means `taskset -c 0`, to E `taskset -c 1`, so those cells measure one core "
          "against two, not core types.",
    metrics=[Metric("ops_sec", "ops/s", "{:,.0f}"), Metric("micros_op", "avg us/op", "{:.1f}"),
             Metric("p99_us", "p99 us", "{:.1f}")],
    claims=[
        Claim("sync=true makes throughput collapse: waiting for fsync (fdatasync) dominates.",
              sync_collapses),
        Claim("With sync=true the disk is the bottleneck, so the core type makes little "
              "difference.", sync_hides_cores),
        Claim("With sync=false the CPU and scheduling dominate, so P/E differences show.",
              async_shows_cores),
        Claim("Pinning helps control but limits performance: unpinned beats P, which beats E "
              "(the OS spreads work onto idle cores).", pinning_limits),
    ],
    findings=findings,
    full={"fixed": {"num": 20000}, "repeats": 5},
    quick={"fixed": {"num": 5000}, "repeats": 1, "axes": {"sync": [True, False], "pin": ["none", "P"]}},
    cpu_types="P:0,E:1",
    flames=lambda r: [r.cell(sync=True, pin="none").name, r.cell(sync=False, pin="P").name],
)
