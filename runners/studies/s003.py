"""Seed 003: time-aware tiered storage under a Zipfian write load."""
from __future__ import annotations

from runners.studies.judge import order, ops, traced_note, x
from runners.studies.model import HELD, NOT_HELD, PARTLY, UNTESTABLE, Claim, Metric, Study, Verdict
from runners.studies.results import Results

ALPHAS = ("0.5", "0.9", "1.2")
PRECLUDES = ("0", "2", "5")


def cell(r: Results, alpha: str, preclude: str, preserve: str):
    return r.cell(alpha=alpha, preclude_last_level_data_seconds=preclude,
                  preserve_internal_time_seconds=preserve)


def alphas(r: Results) -> list[str]:
    return [a for a in ALPHAS if r.has(alpha=a, preclude_last_level_data_seconds="0",
                                       preserve_internal_time_seconds="0")]


def skew_faster(r: Results) -> Verdict:
    cs = [cell(r, a, "0", "0") for a in alphas(r)]
    if len(cs) < 2:
        return Verdict(UNTESTABLE, "needs two alphas or more")
    rising = all(order(b.stat("ops_sec", "fillzipf"), a.stat("ops_sec", "fillzipf")) == ">"
                 for a, b in zip(cs, cs[1:]))
    some = any(order(b.stat("ops_sec", "fillzipf"), a.stat("ops_sec", "fillzipf")) == ">"
               for a, b in zip(cs, cs[1:]))
    return Verdict(HELD if rising else PARTLY if some else NOT_HELD,
                   "Universal compaction without tiering: " + "; ".join(
                       f"alpha {c.values['alpha']}: {ops(c, 'fillzipf')}" for c in cs) + ".",
                   "throughput.png")


def tiering_costs_nothing(r: Results) -> Verdict:
    parts, same = [], 0
    for a in alphas(r):
        d, t = cell(r, a, "0", "0"), cell(r, a, "5", "5")
        o = order(t.stat("ops_sec", "fillzipf"), d.stat("ops_sec", "fillzipf"))
        same += o != "<"
        parts.append(f"alpha {a}: tiered (preclude=preserve=5 s) {ops(t, 'fillzipf')}, "
                     f"default {ops(d, 'fillzipf')} ({x(t.value('ops_sec', 'fillzipf'), d.value('ops_sec', 'fillzipf'))})")
    n = len(alphas(r))
    return Verdict(HELD if same == n else PARTLY if same else NOT_HELD,
                   "; ".join(parts) + ".", "throughput.png")


def preclude_empties_last_level(r: Results) -> Verdict:
    parts, held, tried = [], 0, 0
    for a in alphas(r):
        cs = [cell(r, a, p, "5") for p in PRECLUDES if r.has(
            alpha=a, preclude_last_level_data_seconds=p, preserve_internal_time_seconds="5")]
        vals = [c.value("last_level_stored_ratio", "fillzipf") for c in cs]
        if len(vals) < 2:
            continue
        tried += 1
        held += all(b <= a_ for a_, b in zip(vals, vals[1:])) and vals[-1] < vals[0]
        parts.append(f"alpha {a}: " + ", ".join(
            f"preclude {c.values['preclude_last_level_data_seconds']} s -> {v:.2f}"
            for c, v in zip(cs, vals)))
    return Verdict(HELD if tried and held == tried else PARTLY if held else NOT_HELD,
                   "Share of the stored bytes in the last level (preserve 5 s): "
                   + "; ".join(parts) + ".", None)


def preclude_lowers_waf(r: Results) -> Verdict:
    parts, held = [], 0
    for a in alphas(r):
        lo, hi = cell(r, a, "0", "5"), cell(r, a, PRECLUDES[-1], "5")
        w0, w1 = lo.value("write_amplification", "fillzipf"), hi.value("write_amplification", "fillzipf")
        o = order(hi.stat("ops_sec", "fillzipf"), lo.stat("ops_sec", "fillzipf"))
        held += w1 < 0.98 * w0 and o != "<"   # lower by more than rounding
        parts.append(f"alpha {a}: WAF {w0:.2f} -> {w1:.2f}, {ops(lo, 'fillzipf')} -> "
                     f"{ops(hi, 'fillzipf')}")
    n = len(alphas(r))
    return Verdict(HELD if held == n else PARTLY if held else NOT_HELD,
                   "preclude 0 -> 5 s (preserve 5 s): " + "; ".join(parts) + ".", None)


def findings(r: Results) -> list[str]:
    out = []
    for a in alphas(r):
        c = cell(r, a, "0", "0")
        f = c.extra
        if not f.get("overlap_writes"):
            continue
        n = f["overlap_writes"] + f["clear_writes"]
        if "overlap_mean_us" not in f:
            continue
        out.append(
            f"**alpha {a}: WAL writes against flush and compaction I/O.** "
            f"{f['overlap_writes']:,} of {n:,} traced writes"
            + (f" (1 in {f['row_step']} of the run's)" if f.get("row_step", 1) > 1 else "")
            + " ran while a flush or compaction "
            f"thread had a write(2) in flight. Those took {f['overlap_mean_us']:.1f} us on "
            f"average (p99 {f['overlap_p99_us']:.0f} us), their WAL I/O "
            f"{f['overlap_walio_us']:.2f} us; the others {f['clear_mean_us']:.1f} us (p99 "
            f"{f['clear_p99_us']:.0f} us), WAL I/O {f['clear_walio_us']:.2f} us. "
            f"({traced_note(c)}.)")
    if not out:
        out.append("No traced write overlapped a flush or compaction write(2) in these runs.")
    return out


STUDY = Study(
    id="003", slug="tiered-zipf",
    title="Time-aware tiered storage under a Zipfian write load",
    seed="003_9ffe940023659a4f.txt",
    question="Under a skewed (Zipfian) write load with universal compaction, what do "
             "time-aware tiered storage's preclude_last_level_data_seconds and "
             "preserve_internal_time_seconds do to write performance, write amplification "
             "and what ends up in the last (cold) level?",
    scenario="tiered_zipf.toml",
    setup="runners/zipf_writer (db_bench 7.8 has neither a Zipfian key chooser nor the "
          "tiering options): Puts of 100 B values over 200,000 keys with Zipf alpha 0.5, "
          "0.9 and 1.2, then 20,000 Gets; universal compaction, 4 MiB write buffer, "
          "last_level_temperature=cold on the same disk. The seed (RocksDB 10.2, 16 cores, "
          "one HDD) ran for minutes and set preclude = preserve from 0 to 120 s; here the "
          "load is 600,000 writes (seconds), so the times are scaled to 0, 2 and 5 s, and "
          "preserve is 0 or 5 s independently. Traced in full mode, not the default "
          "window mode: the question is how flush and compaction I/O lands on writes, "
          "which needs every write and every background write(2), not 2% of them (the "
          "traced/untraced column shows what that costs).",
    metrics=[Metric("ops_sec", "ops/s", "{:,.0f}"), Metric("micros_op", "avg us/op", "{:.2f}"),
             Metric("p99_us", "p99 us", "{:.1f}"),
             Metric("write_amplification", "WAF", "{:.2f}"),
             Metric("last_level_stored_ratio", "last-level bytes", "{:.2f}")],
    claims=[
        Claim("The higher alpha (the more skewed the load), the better the write performance.",
              skew_faster),
        Claim("Time-aware tiered storage performs about as plain universal compaction "
              "(no overhead).", tiering_costs_nothing),
        Claim("The larger preclude_last_level_data_seconds, the fewer SST bytes in the last "
              "level.", preclude_empties_last_level),
        Claim("A larger preclude lowers write amplification and raises write throughput, "
              "less so at high alpha.", preclude_lowers_waf),
    ],
    findings=findings,
    full={"repeats": 5},
    mode="full",
    quick={"fixed": {"keys": 20000, "writes": 100000}, "repeats": 1,
           "axes": {"alpha": [0.9], "preclude_last_level_data_seconds": [0, 5],
                    "preserve_internal_time_seconds": [0, 5]}},
    flames=lambda r: [cell(r, alphas(r)[0], "0", "0").name,
                      cell(r, alphas(r)[-1], "0", "0").name] if alphas(r) else [],
)
