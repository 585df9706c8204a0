"""Seed 000: RocksDB WAL sync on/off on a hybrid CPU, threads pinned to P
cores, to E cores, or not pinned."""
from __future__ import annotations

import math

from collectors import topology
from runners.experiments.studies.judge import (Comparison, attribution, compare, judged, ops,
                                               pct, reading, top_growth, traced_note)
from runners.experiments.studies.model import (HELD, NOT_HELD, PARTLY, UNTESTABLE, Claim, Metric,
                                               Study, Verdict)
from runners.experiments.studies.results import CellResult, Results

SYNC_WAIT = ("wal_sync_io", "queue")
ON_CPU = ("memtable", "wal_append", "crc", "other")
BENCHES = ("fillrandom", "overwrite")
COLLAPSE = 2.0   # sync=false over sync=true, the whole interval: a collapse
# where the core types are the kernel's own word, not a declaration or a guess
KERNEL_TYPES = {"intel-hybrid-pmu": "perf's hybrid PMUs (cpu_core, cpu_atom)",
                "cpu_capacity": "the kernel's cpu_capacity"}
DECLARED = "P:0,E:1"   # this VM's split when the kernel names no types


def declared_split() -> str | None:
    """None where the kernel tells P from E (the study then pins to the
    real types); elsewhere the split the cells are declared with."""
    return None if topology.detect().source in KERNEL_TYPES else DECLARED


def cell(r: Results, sync: bool, pin: str) -> CellResult:
    return r.cell(sync=sync, pin=pin)


def cmp(r: Results, a: tuple[bool, str], b: tuple[bool, str],
        bench: str = "fillrandom") -> Comparison:
    """The rule on fillrandom throughput, cell a over cell b."""
    return compare(cell(r, *a).stat("ops_sec", bench), cell(r, *b).stat("ops_sec", bench))


def cpus(r: Results, kind: str) -> str:
    ids = [str(i) for i, t in enumerate(r.environment.get("cpu_types", "")) if t == kind]
    return ("CPU " if len(ids) == 1 else "CPUs ") + ",".join(ids) if ids else "no CPU"


def types_untestable(r: Results) -> str | None:
    """Why P and E are not core types in these runs, or None when the
    kernel named them."""
    src = r.environment.get("cpu_types_source")
    if src in KERNEL_TYPES:
        return None
    if src == "declared":
        return (f"\"P\" ({cpus(r, 'P')}) and \"E\" ({cpus(r, 'E')}) are labels declared "
                "for the runs (--cpu-types), not core types: the study declares them only "
                "where the kernel names none (no hybrid PMUs), as on this machine, whose "
                "cores are alike")
    if src == "cpufreq-max":
        return ("the types were inferred from the CPUs' maximum frequencies (cpufreq), "
                "which also differ between favoured cores of one type")
    return f"the kernel named no core types (source: {src or 'not recorded'})"





def irq_cpus(r: Results) -> str:
    """Where the disk's interrupts landed (run_matrix's block_irqs), e.g.
    ' (the disk's interrupts, virtio1-req.0, land on CPU 1: 0 and 32,401,191)'."""
    irqs = r.environment.get("block_irqs") or {}
    if not irqs:
        return ""
    name, counts = max(irqs.items(), key=lambda kv: sum(kv[1]))
    if not sum(counts):
        return ""
    top = max(range(len(counts)), key=counts.__getitem__)
    return (f"; the disk's interrupts ({name}) land on CPU {top} "
            f"({', '.join(f'{n:,}' for n in counts)} by CPU when the matrix began), so a "
            f"synced write's completion wakes its waiter there")


def identical(c: Comparison, r: Results | None = None) -> str:
    """A P/E comparison on identical cores: what the rule makes of two cells
    that cannot differ by core type (its false-positive check)."""
    if c.sign == "?":
        return ""
    irq = irq_cpus(r) if r is not None else ""
    if c.sign in "<>":
        return ("; the rule calls a difference between two cores of one kind: a false "
                "positive, or something other than core type that differs between the two "
                "CPUs (what else runs there, where the disk's interrupts land)" + irq)
    lo, hi = c.band or (1.0, 1.0)
    if lo <= c.ratio <= hi:
        return "; two cores of one kind, and the rule calls no difference, as it should"
    return ("; the rule calls no difference, though the median ratio lies outside the A/A "
            "band: only the interval reaches into it. Whatever separates the two CPUs "
            "here is not their type" + irq)


def pe(r: Results, sync: bool) -> tuple[CellResult, CellResult, Comparison]:
    p, e = cell(r, sync, "P"), cell(r, sync, "E")
    return p, e, compare(p.stat("ops_sec", "fillrandom"), e.stat("ops_sec", "fillrandom"))


def pe_text(r: Results, sync: bool) -> str:
    p, e, c = pe(r, sync)
    return (f"sync={str(sync).lower()}, fillrandom: pinned to P ({cpus(r, 'P')}) "
            f"{ops(p, 'fillrandom')}, to E ({cpus(r, 'E')}) {ops(e, 'fillrandom')}; "
            + judged("P/E", c, "P faster", "E faster"))


def no_rows(c: CellResult) -> str:
    return (f"`{c.name}` has no traced rows ("
            f"{c.no_rows or 'its results.json predates the recorded reason'})")


def collapse(c: Comparison) -> str:
    if c.sign == ">":
        return ("a collapse" if c.lo >= COLLAPSE else
                f"faster, but not {COLLAPSE:.0f}x over the whole interval")
    return reading(c, "", "sync=true faster")


def sync_collapses(r: Results) -> Verdict:
    on, off = cell(r, True, "none"), cell(r, False, "none")
    pairs = [(off.name, on.name)]
    parts, fell = [], 0
    for bench in BENCHES:
        c = cmp(r, (False, "none"), (True, "none"), bench)
        if c.sign == "?":
            return Verdict(UNTESTABLE, f"{bench}, unpinned: {ops(off, bench)} with "
                           f"sync=false, {ops(on, bench)} with sync=true; "
                           + judged("false/true", c, "", "") + ".",
                           "throughput.png", pairs)
        fell += c.sign == ">" and c.lo >= COLLAPSE
        parts.append(f"{bench}: {ops(off, bench)} with sync=false, {ops(on, bench)} with "
                     f"sync=true; false/true {c.text()} ({collapse(c)})")
    ev = "Unpinned, " + "; ".join(parts) + ". "
    if not on.writes:
        ev += f"Whether the fdatasync dominates is not measured: {no_rows(on)}."
        return Verdict(PARTLY if fell == 2 else NOT_HELD, ev, "throughput.png", pairs)
    share = on.share(SYNC_WAIT)
    ev += (f"In the traced sync=true run the WAL sync and the queue behind it take "
           f"{pct(share)} of the mean write ({on.mean_us:.0f} us).")
    held = (fell == 2) + (share > 0.5)
    return Verdict(HELD if held == 2 else PARTLY if held else NOT_HELD, ev, "throughput.png",
                   pairs)


def sync_hides_cores(r: Results) -> Verdict:
    p, e, c = pe(r, True)
    pairs = [(p.name, e.name)]
    why = types_untestable(r)
    if why:
        return Verdict(UNTESTABLE, f"{why[0].upper()}{why[1:]}. What two such cores differ by: "
                       f"{pe_text(r, True)}{identical(c, r)}.", "throughput.png", pairs)
    if c.sign == "?":
        return Verdict(UNTESTABLE, f"{pe_text(r, True)}.",
                       "throughput.png", pairs)
    if c.sign == "~":
        return Verdict(HELD, f"{pe_text(r, True)}: no difference above the noise; a smaller "
                       "one, inside the A/A band, could not show.",
                       "throughput.png", pairs)
    _, _, a = pe(r, False)
    smaller = a.sign in "<>" and abs(math.log(a.ratio)) > abs(math.log(c.ratio))
    return Verdict(PARTLY if smaller else NOT_HELD,
                   f"{pe_text(r, True)}: the core types differ with sync=true too"
                   + (f", but less than with sync=false ({a.text()})." if smaller else "."),
                   "throughput.png", pairs)


def cpu_bound(c: CellResult) -> str:
    """How much of an unsynced write is the CPU's: on-CPU work and waiting
    for a CPU, against the WAL's write(2)."""
    if not c.writes:
        return f"whether the CPU dominates is not measured: {no_rows(c)}"
    return (f"unpinned, the traced write is {pct(c.share(ON_CPU))} on-CPU work "
            f"(memtable, WAL append, CRC, other), {pct(c.share(('sched_runq',)))} waiting "
            f"for a CPU, {pct(c.share(('queue',)))} queued for the write group and "
            f"{pct(c.share(('wal_write_io',)))} the WAL's write(2)")


def async_shows_cores(r: Results) -> Verdict:
    p, e, c = pe(r, False)
    pairs = [(p.name, e.name)]
    cpu = cpu_bound(cell(r, False, "none"))
    why = types_untestable(r)
    if why:
        return Verdict(UNTESTABLE, f"{why[0].upper()}{why[1:]}. What two such cores differ by: "
                       f"{pe_text(r, False)}{identical(c, r)}. What a core's speed would act "
                       f"on: {cpu}.", "breakdown.png", pairs)
    if c.sign == "?":
        return Verdict(UNTESTABLE, f"{pe_text(r, False)}.",
                       "breakdown.png", pairs)
    ev = f"{pe_text(r, False)}; {cpu}."
    return Verdict(HELD if c.sign == ">" else NOT_HELD, ev, "breakdown.png", pairs)


def pinning_limits(r: Results) -> Verdict:
    why = types_untestable(r)
    pairs = [(cell(r, sync, "P").name, cell(r, sync, "none").name) for sync in (False, True)]
    parts, held = [], 0
    for sync in (False, True):
        free, pin = cell(r, sync, "none"), cell(r, sync, "P")
        c = cmp(r, (sync, "none"), (sync, "P"))
        if c.sign == "?":
            return Verdict(UNTESTABLE, f"sync={str(sync).lower()}, fillrandom: unpinned "
                           f"{ops(free, 'fillrandom')}, P {ops(pin, 'fillrandom')}; "
                           + judged("unpinned/P", c, "", "") + ".", "throughput.png", pairs)
        held += c.sign == ">"
        parts.append(f"sync={str(sync).lower()}: unpinned {ops(free, 'fillrandom')}, P "
                     f"{ops(pin, 'fillrandom')}; "
                     + judged("unpinned/P", c, "unpinned faster", "pinned faster"))
        if not why:
            e = cmp(r, (sync, "P"), (sync, "E"))
            held += e.sign == ">"
            parts.append(judged("P/E", e, "P faster", "E faster"))
    ev = "fillrandom, " + "; ".join(parts) + "."
    if not why:
        return Verdict(HELD if held == 4 else PARTLY if held else NOT_HELD, ev,
                       "throughput.png", pairs)
    # only the unpinned-over-pinned half can be judged
    n_p, n = len(cpus(r, "P").split(",")), len(r.environment.get("cpu_types", ""))
    ev += (f" \"P\" here is {cpus(r, 'P')} of this machine's {n}, so that half is {n_p} "
           f"core{'s' if n_p > 1 else ''} against all {n}; that P beats E cannot be tested "
           "here (claim 2).")
    return Verdict(PARTLY if held else NOT_HELD, ev, "throughput.png", pairs)


def migrations(free: CellResult, pin: CellResult) -> str:
    """Migrations per 1000 writes, where the rows recorded them."""
    got = [c for c in (free, pin) if "migrations_per_1000" in c.extra]
    if not got:
        return ("Migrations in the middle of a write were not recorded: these runs' rows "
                "have no migrations column.")
    return "Migrations between cores in the middle of a write: " + ", ".join(
        f"{c.extra['migrations_per_1000']:.1f} per 1000 writes "
        f"{'unpinned' if c is free else 'pinned'}" for c in got) + "."


def runq(c: CellResult, tail: bool = False) -> str:
    """sched_runq's share of the mean write (or of the p99 tail)."""
    return pct(c.share(("sched_runq",), tail))


def findings(r: Results) -> list[str]:
    out = []
    on = cell(r, True, "none")
    if on.writes:
        name, m, t = top_growth(on)
        out.append(f"**What makes the sync=true tail.** Unpinned, the mean write takes "
                   f"{on.mean_us:.0f} us and the p99 {on.p99_us:.0f} us; the component that "
                   f"grows most from the mean to the slowest 1% is `{name}` ({m:.0f} -> "
                   f"{t:.0f} us). ({traced_note(on)}.)")
    else:
        out.append(f"**What makes the sync=true tail.** Not measured: {no_rows(on)}.")
    f = on.extra
    if f.get("follower_mean_us"):
        out.append(f"**Followers wait for the leader's fdatasync.** {f['followers']:,} of "
                   f"{(f['followers'] or 0) + (f['leaders'] or 0):,} writes joined a group "
                   f"another thread led; a follower's mean latency is "
                   f"{f['follower_mean_us']:.0f} us, of which "
                   f"{f['follower_behind_sync_us']:.0f} us "
                   f"({pct(f['follower_behind_sync_us'] / f['follower_mean_us'])}) is spent "
                   "queued while the leader's WAL sync runs. The averages only show that the "
                   "sync is slow; the rows show that most writes pay for somebody else's.")
    free, pin = cell(r, False, "none"), cell(r, False, "P")
    n_p = len(cpus(r, "P").split(","))
    head = (f"**What pinning does to an unsynced write.** Four threads pinned to {n_p} "
            f"core{'s' if n_p > 1 else ''} (P) against free on all "
            f"{len(r.environment.get('cpu_types', ''))}: ")
    empty = [c for c in (free, pin) if not c.writes]
    if empty:
        out.append(head + "not measured: " + "; ".join(map(no_rows, empty)) + ".")
        return out
    out.append(head + f"`sched_runq` (runnable, waiting for the CPU) is {runq(pin)} of the "
               f"mean write and {runq(pin, True)} of the p99 tail pinned, against "
               f"{runq(free)} and {runq(free, True)} unpinned; the queue for the write group "
               f"is {pct(pin.share(('queue',)))} against {pct(free.share(('queue',)))}. "
               + migrations(free, pin))
    return out


def answer(r: Results) -> str:
    on, off = cell(r, True, "none"), cell(r, False, "none")
    c = cmp(r, (False, "none"), (True, "none"))
    lead = {">": "costs most of the throughput" if c.lo >= COLLAPSE else "costs throughput",
            "<": "did not cost throughput here",
            "~": "cost no throughput above the noise here"}.get(c.sign)
    s = ((f"Syncing the WAL on every write {lead}" if lead else
          "Whether syncing the WAL costs throughput, these runs cannot tell")
         + f": unpinned fillrandom runs at {ops(off, 'fillrandom')} with sync=false and "
         f"{ops(on, 'fillrandom')} with sync=true ("
         + judged("false/true", c, "sync=false faster", "sync=true faster") + ")")
    if on.writes:
        s += (f"; in the traced sync=true run the WAL's fdatasync and the queue behind it are "
              f"{pct(on.share(SYNC_WAIT))} of the {on.mean_us:.0f} us mean write")
        d = r.diff(off.name, on.name)
        if d and "delta_mean_ns" in d:
            delta = d["delta_mean_ns"] / 1e3
            at = attribution(off, on, delta, delta, "fillrandom")
            s += (f" (walscope diff: sync=true adds {delta:,.0f} us to the "
                  f"mean write, {d['residual_ns'] / 1e3:,.1f} us of it unattributed; "
                  f"{at.gap_text()})")
    why = types_untestable(r)
    if not r.has(sync=True, pin="E"):
        s += ". The E cells were not run, so the core type is not answered here"
    else:
        ps, pa = pe(r, True)[2], pe(r, False)[2]
        if why:
            s += (f". Whether the core type matters cannot be answered on this machine: "
                  f"{why}. What two cores of one kind differ by here, on fillrandom: ")
        else:
            s += (f". The core types as {KERNEL_TYPES[r.environment['cpu_types_source']]} "
                  "name them, on fillrandom: ")
        s += (judged("with sync=true P/E", ps, "P faster", "E faster") + "; "
              + judged("with sync=false P/E", pa, "P faster", "E faster"))
    u = cmp(r, (False, "none"), (False, "P"))
    s += (f". Pinning the four threads to P ({cpus(r, 'P')}) rather than leaving them "
          f"unpinned, sync=false: "
          + judged("unpinned/P", u, "unpinned faster", "pinned faster") + ".")
    return s


SEED_SAYS = (
    "Slides (Korean, 2026-01-21) by four members of a RocksDB study group. Machine: an "
    "ASUS Vivobook S16 OLED laptop, Intel Core Ultra 7 155H (6 P, 8 E and 2 low-power E "
    "cores, 22 threads), 16 GB RAM, a 1 TB PCIe 4 QLC SSD (Micron MTFDKBA1T0QFM), Windows "
    "11 running Ubuntu 24.04 in WSL2, limited to 4 processors in .wslconfig. Workload: "
    "`db_bench --benchmarks=fillrandom,overwrite --num=50000 --threads=4 "
    "--sync=true|false` with key 16 B, value 100 B, 256 MiB write buffer, 1 GiB cache, 8 "
    "background jobs, snappy. \"Pinning\", as the slides show it, was the Windows "
    "processor affinity of the WSL2 VM's process (vmmemWSL) set to chosen host CPUs, not "
    "the threads inside Linux. The script shown runs each scenario once, and the slides do "
    "not say how many runs stand behind a figure. The results (throughput per sync mode, "
    "fillrandom against overwrite, latency against throughput, average against p99, "
    "throughput per processor choice with and without sync) are charts whose values the "
    "text does not carry, so none of the seed's numbers can be quoted here; its only "
    "tables are the CPU's specification and clocks and a list of the WAL's bottlenecks "
    "(the fdatasync wait, the leader/follower writer queue, CRC32C per record, flush "
    "frequency, contention with SST flush and compaction). Hypotheses: sync on and off "
    "differ by their bottleneck; with sync on the disk dominates, so the core type matters "
    "little; ranking P > unpinned > E. Conclusions: sync=true collapses throughput (fsync "
    "dominates, I/O bound); sync=false is bound by CPU and scheduling, where P/E "
    "differences show; pinning helps control but limits performance, because Windows "
    "spreads work onto idle cores; the measured order was unpinned > P > E, not the P > "
    "unpinned > E it expected.")


STUDY = Study(
    id="000", slug="wal-sync-pe",
    title="WAL sync on/off, threads pinned to P cores, E cores, or not pinned",
    seed="000_5f67184b7e84c176.txt",
    question="How much does WAL synchronisation cost RocksDB writes, and does the type of "
             "core the writers run on (performance or efficiency) matter when the WAL is "
             "synced and when it is not?",
    scenario="wal_sync_pe.toml",
    setup="db_bench fillrandom then overwrite, 4 threads, key 16 B, value 100 B, 256 MiB "
          "write buffer, snappy, as in the seed (without its 1 GiB cache and 8 background "
          "jobs: at these sizes nothing is flushed or compacted, so neither acts). The seed "
          "ran 50,000 writes per thread; here 20,000 (so that the sync=true cells take "
          "seconds, not minutes). Where the kernel names the core types (hybrid PMUs), "
          "\"P\" and \"E\" pin the threads (`taskset`) to those cores; on a machine whose "
          "cores are identical, such as this 2-core VM, they are declared (`--cpu-types "
          "P:0,E:1`): pinning to P means `taskset -c 0`, to E `taskset -c 1`, so those cells "
          "measure one core against another of the same kind, and either against both. "
          "The seed pinned the whole WSL2 VM to host CPUs instead.",
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
    quick={"fixed": {"num": 5000}, "repeats": 1,
           "axes": {"sync": [True, False], "pin": ["none", "P"]}},
    cpu_types=declared_split(),
    flames=lambda r: [r.cell(sync=True, pin="none").name, r.cell(sync=False, pin="P").name],
    seed_says=SEED_SAYS,
    answer=answer,
)
