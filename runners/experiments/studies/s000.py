"""Seed 000: RocksDB WAL sync on/off on a hybrid CPU, threads pinned to P
cores, to E cores, or not pinned."""
from __future__ import annotations

from typing import Callable

from collectors import topology
from runners.experiments.studies.judge import (Comparison, alike, compare, composition, differ,
                                               direction, pct, top_growth, traced_note)
from runners.experiments.studies.model import UNTESTABLE, Claim, Metric, Part, Study, Verdict
from runners.experiments.studies.results import CellResult, Results

SYNC_WAIT = ("wal_sync_io", "queue")
ON_CPU = ("memtable", "wal_append", "crc", "other")
BENCHES = ("fillrandom", "overwrite")
COLLAPSE = 2.0   # sync=false over sync=true, the whole interval: a collapse
DOMINATES = 0.5  # "dominates": half or more of the traced mean write
TRACED_OFF = 1.5  # a traced run this far off its untraced median either way is noted
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
    """The rule on throughput (fillrandom unless bench says), cell a over cell b."""
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
                "for two alike cores (--cpu-types), not core types: the kernel names none "
                "here (no hybrid PMUs)")
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
        return ("; a difference between two cores of one kind: a false positive, or "
                "something other than core type that differs between the two CPUs" + irq)
    lo, hi = c.band or (1.0, 1.0)
    if lo <= c.ratio <= hi:
        return "; two cores of one kind, and the rule calls no difference, as it should"
    return ("; the rule calls no difference, though the median ratio lies outside the A/A "
            "band: only the interval reaches into it. Whatever separates the two CPUs "
            "here is not their type" + irq)


def pe(r: Results, sync: bool) -> tuple[CellResult, CellResult, Comparison]:
    p, e = cell(r, sync, "P"), cell(r, sync, "E")
    return p, e, compare(p.stat("ops_sec", "fillrandom"), e.stat("ops_sec", "fillrandom"))


def no_rows(c: CellResult) -> str:
    return (f"`{c.name}` has no traced rows ("
            f"{c.no_rows or 'its results.json predates the recorded reason'})")


def dominates(name: str, c: CellResult, comps: tuple[str, ...]) -> Part:
    """The named components are half or more of the cell's traced mean
    write, read from its trusted lens (judge.composition)."""
    if not c.writes:
        return Part(name, UNTESTABLE, no_rows(c))
    named, total = c.lens_part(comps)
    return composition(name, named, total, DOMINATES, c.trusted, c.lens, c.round_shares(comps))


def sync_dominates(r: Results) -> Part:
    return dominates("the WAL sync and the queue behind it are half or more of the synced "
                     "write (unpinned)", cell(r, True, "none"), SYNC_WAIT)


def core_type(r: Results, sync: bool, judge: Callable[[str, Comparison], Part]) -> Part:
    """The P/E part of claims 2 and 3 on fillrandom: judged where the kernel
    names the core types; elsewhere it cannot be tested, and says what the
    two labelled CPUs differed by (the rule's false-positive check)."""
    _, _, c = pe(r, sync)
    name = f"core type, sync={str(sync).lower()} (P/E fillrandom throughput)"
    why = types_untestable(r)
    if why:
        seen = "the rule cannot tell" if c.sign == "?" else c.text()
        return Part(name, UNTESTABLE, f"{why}; the two CPUs: {seen}{identical(c, r)}")
    return judge(name, c)


def sync_collapses(r: Results) -> Verdict:
    on, off = cell(r, True, "none"), cell(r, False, "none")
    cs = {b: cmp(r, (False, "none"), (True, "none"), b) for b in BENCHES}
    parts = [direction(f"sync=false faster than sync=true, {b} (false/true throughput, "
                       "unpinned)", c, ">") for b, c in cs.items()]
    parts.append(sync_dominates(r))
    # how large the fall is, the rule does not test: a note, not a part
    if all(c.sign == ">" for c in cs.values()):
        note = ("Both intervals lie above 2x: a collapse." if all(
            c.lo >= COLLAPSE for c in cs.values()) else
            f"Not a collapse, though: not every interval lies above {COLLAPSE:.0f}x.")
        note += " (How large a fall is, the rule does not test.)"
    else:
        note = ""
    return Verdict.of(parts, "throughput.png", [(off.name, on.name)], note)


def sync_hides_cores(r: Results) -> Verdict:
    p, e, _ = pe(r, True)
    return Verdict.of([sync_dominates(r), core_type(r, True, alike)], "throughput.png",
                      [(p.name, e.name)])


def async_shows_cores(r: Results) -> Verdict:
    p, e, _ = pe(r, False)
    cpu = dominates("on-CPU work (memtable, WAL append, CRC, other) and waiting for a CPU "
                    "are half or more of the unsynced write (unpinned)",
                    cell(r, False, "none"), ON_CPU + ("sched_runq",))
    return Verdict.of([cpu, core_type(r, False, differ)], "breakdown.png", [(p.name, e.name)])


def pinning_limits(r: Results) -> Verdict:
    why = types_untestable(r)
    pairs = [(cell(r, sync, "P").name, cell(r, sync, "none").name) for sync in (False, True)]
    parts = [direction(f"unpinned faster than P, sync={str(sync).lower()}, {b} "
                       "(unpinned/P throughput)", cmp(r, (sync, "none"), (sync, "P"), b), ">")
             for sync in (False, True) for b in BENCHES]
    if why:
        parts.append(Part("P faster than E", UNTESTABLE, why))
    else:
        parts += [direction(f"P faster than E, sync={str(sync).lower()} (P/E fillrandom "
                            "throughput)", pe(r, sync)[2], ">") for sync in (False, True)]
    n_p, n = len(cpus(r, "P").split(",")), len(r.environment.get("cpu_types", ""))
    note = (f"\"P\" here is {cpus(r, 'P')}: four threads on {n_p} of this machine's {n} "
            "CPUs against all of them unpinned." if why else "")
    return Verdict.of(parts, "throughput.png", pairs, note)


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


def not_trusted(*cells: CellResult) -> str:
    """'not measured: the traced runs of `a`, `b` failed their self-check
    ...' for the cells whose lens is not trusted, or ''."""
    bad = [c.name for c in cells if not c.trusted]
    if not bad:
        return ""
    many = len(bad) > 1
    return ("not measured: the traced run" + ("s" if many else "") + " of "
            + ", ".join(f"`{n}`" for n in bad)
            + f" failed {'their' if many else 'its'} self-check (the notes under the table), "
            f"so {'their' if many else 'its'} components are not the workload's and are not "
            "given here.")


def findings(r: Results) -> list[str]:
    out = []
    on = cell(r, True, "none")
    if not on.writes:
        out.append(f"**What makes the sync=true tail.** Not measured: {no_rows(on)}.")
    elif not on.trusted:
        out.append("**What makes the sync=true tail.** N" + not_trusted(on)[1:])
    else:
        name, m, t = top_growth(on)
        out.append(f"**What makes the sync=true tail.** Unpinned, the mean write takes "
                   f"{on.mean_us:.0f} us and the p99 {on.p99_us:.0f} us; the component that "
                   f"grows most from the mean to the slowest 1% is `{name}` ({m:.0f} -> "
                   f"{t:.0f} us). ({traced_note(on)}.)")
    f = on.extra
    if on.trusted and f.get("follower_mean_us"):
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
    elif not (free.trusted and pin.trusted):
        out.append(head + not_trusted(free, pin))
    else:
        out.append(head + f"`sched_runq` (runnable, waiting for the CPU) is {runq(pin)} of "
                   f"the mean write and {runq(pin, True)} of the p99 tail pinned, against "
                   f"{runq(free)} and {runq(free, True)} unpinned; the queue for the write "
                   f"group is {pct(pin.share(('queue',)))} against "
                   f"{pct(free.share(('queue',)))}. " + migrations(free, pin))
    return out


def traced_off(r: Results) -> list[str]:
    """A sentence for each traced run whose throughput is off its cell's
    untraced median by TRACED_OFF or more either way (000's unpinned
    unsynced overwrite ran 1.98x): its rows are of another run than the
    untraced ones the verdicts rest on."""
    out = []
    for c in r.cells:
        for bench, tr in c.traced_ops.items():
            s = c.stat("ops_sec", bench)
            if not s or not s.median or not tr or 1 / TRACED_OFF < tr / s.median < TRACED_OFF:
                continue
            where = ("inside the untraced runs' range" if s.lo <= tr <= s.hi else
                     f"outside all {s.n} untraced runs ({s.lo:,.0f}-{s.hi:,.0f})")
            trust = ("It failed its self-check too, so no claim rests on its components."
                     if not c.trusted else
                     "Its components are this run's, which the untraced ones did not "
                     "reproduce.")
            out.append(f"(The traced run of `{c.name}` ran {bench} at {tr:,.0f} ops/s, "
                       f"{tr / s.median:.2f}x its untraced median and {where}: "
                       + ("tracing did not slow it, and these runs do not say what made it "
                          "faster. " if tr > s.median else
                          "the probes slowed it that much, or something else did; these runs "
                          "do not say which. ") + f"{trust})")
    return out


def sig(v: float) -> str:
    """Two significant figures, with thousands separators: 140,391 -> '140,000'."""
    return f"{float(f'{v:.2g}'):,.0f}" if v >= 10 else f"{v:.2g}"


def times(v: float) -> str:
    """A ratio to two significant figures: '15x', '1.3x'."""
    return f"{sig(v)}x"


def moved(c: Comparison, what: str) -> str:
    """What a change did to `what`, c being after over before, in a clause."""
    return {">": f"made {what} {times(c.ratio)} faster",
            "<": f"made {what} {times(1 / c.ratio) if c.ratio else 'infinitely'} slower",
            "~": f"left {what} within the noise"}.get(
        c.sign, f"did to {what} what these runs cannot tell")


def irq_cpu(r: Results) -> int | None:
    """The CPU that takes most of the disk's interrupts, where recorded."""
    irqs = r.environment.get("block_irqs") or {}
    if not irqs:
        return None
    counts = max(irqs.values(), key=sum)
    return max(range(len(counts)), key=counts.__getitem__) if sum(counts) else None


def answer(r: Results) -> str:
    on, off = cell(r, True, "none"), cell(r, False, "none")
    c = cmp(r, (False, "none"), (True, "none"))
    o = cmp(r, (False, "none"), (True, "none"), "overwrite")
    fo, fn = sig(off.value("ops_sec", "fillrandom")), sig(on.value("ops_sec", "fillrandom"))
    if c.sign == ">":
        s = ("Syncing every write costs most of the throughput" if c.lo >= COLLAPSE
             else "Syncing every write costs throughput")
        s += (f": unpinned fillrandom fell from about {fo} writes/s to {fn}, "
              f"{times(c.ratio)}" + (f" (overwrite: {times(o.ratio)}). " if o.sign == ">"
                                     else ". "))
    elif c.sign == "~":
        s = (f"Syncing every write cost no throughput above this machine's noise "
             f"(unpinned fillrandom about {fo} writes/s unsynced, {fn} synced). ")
    elif c.sign == "<":
        s = (f"Syncing every write did not cost throughput here: unpinned fillrandom ran at "
             f"about {fn} writes/s synced, {fo} unsynced. ")
    else:
        s = f"What syncing the WAL costs, these runs cannot tell ({c.why}). "
    if on.writes and on.trusted:
        named, total = on.lens_part(SYNC_WAIT)
        s += (f"In the traced runs the fdatasync and its queue are {pct(named / total)} of "
              f"a {sig(total)} us synced write")
        if off.writes and off.trusted:
            n2, t2 = off.lens_part(ON_CPU + ("sched_runq",))
            s += (f"; on-CPU work and waiting for a CPU {pct(n2 / t2)} of a {sig(t2)} us "
                  "unsynced one")
        s += ". "
    elif on.writes:
        s += ("The traced synced run failed its self-check, so what a synced write waits "
              "on is not measured here. ")
    why = types_untestable(r)
    p_, e_ = (cpus(r, "P"), cpus(r, "E")) if why else ("the P cores", "the E cores")
    ran_e = r.has(sync=True, pin="E") and r.has(sync=False, pin="E")
    if not ran_e:
        s += "The E cells were not run, so the core type is not answered here. "
    elif why:
        s += (f"The core type cannot be tested: this VM's cores are alike (\"P\" is {p_}, "
              f"\"E\" {e_}). ")
    # E over P, and pinned over unpinned: (synced, unsynced)
    ep = [compare(e.stat("ops_sec", "fillrandom"), p.stat("ops_sec", "fillrandom"))
          for p, e, _ in (pe(r, True), pe(r, False))] if ran_e else []
    pu = [compare(cell(r, sync, "P").stat("ops_sec", "fillrandom"),
                  cell(r, sync, "none").stat("ops_sec", "fillrandom")) for sync in (True, False)]
    irq = irq_cpu(r)
    takes = (", which takes the disk's interrupts," if why and irq is not None
             and e_ == f"CPU {irq}" else "")
    move = f"moving the threads from {p_} to {e_}{takes} "
    pin = f"pinning all four to {p_} alone "
    s += ("Synced, " + (move + moved(ep[0], "writes") + "; " if ep else "")
          + pin + moved(pu[0], "them" if ep else "writes") + ". ")
    if all(x.sign == "~" for x in (*ep[1:], pu[1])):
        s += "Unsynced, " + ("neither change showed above the noise" if ep else
                             "pinning stayed within the noise")
    else:
        s += ("Unsynced, " + (f"the move {moved(ep[1], 'writes')} and " if ep else "")
              + "pinning " + moved(pu[1], "them" if ep else "writes"))
    s += "."
    if off.writes and not off.trusted:
        s += (" The unsynced traced runs failed their self-check, so where such a write's "
              "time goes is not measured.")
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
          "ran 50,000 writes per thread; here 20,000 synced and 100,000 unsynced (so that "
          "every run takes seconds: a synced one ~4 s, an unsynced one ~3 s; runs of half a "
          "second read up to 2.8x apart between two runs of one cell). Where the kernel names the core types (hybrid PMUs), "
          "\"P\" and \"E\" pin the threads (`taskset`) to those cores; on a machine whose "
          "cores are identical, such as this 2-core VM, they are declared (`--cpu-types "
          "P:0,E:1`): pinning to P means `taskset -c 0`, to E `taskset -c 1`, so those cells "
          "measure one core against another of the same kind, and either against both. "
          "On this VM, then, a \"P\" cell is all 4 writer threads on 1 vCPU, against 2 vCPUs "
          "unpinned: claim 4's unpinned-over-P is one core against two, not a choice of "
          "cores of a type. The seed pinned the whole WSL2 VM (4 processors) to host CPUs "
          "instead.",
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
    full={"fixed": {"num": 20000}, "fixed_by": {"sync": {"false": {"num": 100000}}},
          "repeats": 5},
    quick={"fixed": {"num": 5000}, "repeats": 1,
           "axes": {"sync": [True, False], "pin": ["none", "P"]}},
    cpu_types=declared_split(),
    flames=lambda r: [r.cell(sync=True, pin="none").name, r.cell(sync=False, pin="P").name],
    seed_says=SEED_SAYS,
    answer=answer,
    table_notes=traced_off,
)
