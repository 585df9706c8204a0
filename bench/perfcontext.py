#!/usr/bin/env python3
"""Compensated components against RocksDB's own PerfContext (untraced).

    sudo bench/perfcontext.py [--num 30000] [--reps 3] [-o bench/results]
    sudo bench/perfcontext.py --cells sync-off-1t,sync-off-4t,sync-on-1t,sync-on-4t --reps 5

--cells: the plain command's headline (summary.json headline, whichever
lens it took) against PerfContext, per cell, untraced and traced runs
interleaved in a shuffled order each round (results: perfcontext-cells).
PerfContext's timers are wall-clock: a preempted or woken thread's wait
for a CPU lands in the span it was in, so the headline's sched_runq is
given back to the components it was waited in before the spans are
compared: by the untouched lens's runq_split (the component each sweep
that found a writer runnable had it in) where the headline is that lens,
else in proportion to the components' time (wal = crc + wal_append + wal_write_io + wal_sync_io;
memtable; queue: write_thread_wait_nanos).  db_bench prints one
PERF_CONTEXT, one thread's: its spans over a thread's writes.

db_bench fillrandom sync=false, 1 thread, pipelined writes off,
--perf_level=3: untraced, PerfContext's write_wal_time and
write_memtable_time per write are the reference; traced in full and writes
mode, walscope's compensated means of the same spans (wal = crc +
wal_append + wal_write_io + wal_sync_io; memtable) are set against them.
Medians over --reps runs.  Goals: within 25% (issue 3); window within 10% of
full and of PerfContext, or within its interval (issue 16).
"""
from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACE = [str(ROOT / ".venv" / "bin" / "python"), str(ROOT / "trace_wal.py")]
WAL_PARTS = ("crc", "wal_append", "wal_write_io", "wal_sync_io")


def args(db: Path, num: int) -> list[str]:
    return ["db_bench", f"--db={db}", "--benchmarks=fillrandom", f"--num={num}",
            "--threads=1", "--sync=false", "--enable_pipelined_write=false",
            "--perf_level=3"]


SPANS = ("wal", "memtable", "queue")


def perf_context(text: str, num: int) -> dict[str, float]:
    got = {k: int(v) for k, v in re.findall(r"(write_\w+) = (\d+)", text)}
    if "write_wal_time" not in got:
        raise SystemExit("perfcontext: db_bench printed no PERF_CONTEXT")
    return {"wal": got["write_wal_time"] / num, "memtable": got["write_memtable_time"] / num,
            "queue": got.get("write_thread_wait_nanos", 0) / num}


def traced(mode: str, tmp: Path, num: int, rep: int) -> dict[str, float]:
    out = tmp / f"{mode}{rep}"
    p = subprocess.run(TRACE + ["-q", "--mode", mode, "-o", str(out), "--",
                                *args(tmp / f"db-{mode}{rep}", num)],
                       capture_output=True, text=True, timeout=1200)
    if p.returncode != 0:
        raise SystemExit(f"perfcontext: trace failed: {p.stderr[-500:]}")
    s = json.loads((out / "summary.json").read_text())
    c = s["components"]
    got = {"wal": sum(c[k]["mean_ns"] for k in WAL_PARTS), "memtable": c["memtable"]["mean_ns"],
           "queue": c["queue"]["mean_ns"]}
    est = (s.get("windows") or {}).get("estimates")
    if est:   # window mode: the 95% interval across windows
        for span, parts in (("wal", WAL_PARTS), ("memtable", ("memtable",)),
                            ("queue", ("queue",))):
            got[f"{span}_lo"] = sum(est[k]["lo_ns"] for k in parts if k in est)
            got[f"{span}_hi"] = sum(est[k]["hi_ns"] for k in parts if k in est)
    return got


CELLS = {   # bench/truth.py's db_bench cells, with PerfContext on
    "sync-off-1t": ["--sync=false", "--threads=1", "--num=200000"],
    "sync-off-4t": ["--sync=false", "--threads=4", "--num=50000"],
    "sync-on-1t": ["--sync=true", "--threads=1", "--num=6000"],
    "sync-on-4t": ["--sync=true", "--threads=4", "--num=3000"],
}
PC_SPANS = {"wal": "write_wal_time", "memtable": "write_memtable_time",
            "queue": "write_thread_wait_nanos",
            "pre_post": "write_pre_and_post_process_time"}


def threads(cell: str) -> int:
    return int(next(a for a in CELLS[cell] if a.startswith("--threads=")).split("=")[1])


def cell_args(db: Path, cell: str) -> list[str]:
    return ["db_bench", f"--db={db}", "--benchmarks=fillrandom", "--perf_level=3",
            "--histogram", *CELLS[cell]]


def perf_sums(text: str, threads: int) -> dict[str, float]:
    """PerfContext's write spans a write, and db_bench's own mean write
    (its histogram).  db_bench 7.8 prints one thread's PERF_CONTEXT (the
    messages of the others are not merged): a thread's spans over a
    thread's writes (all / threads; each writes --num)."""
    out = {k: 0.0 for k in PC_SPANS}
    blocks = text.count("PERF_CONTEXT:")
    for k, name in PC_SPANS.items():
        out[k] = float(sum(int(v) for v in re.findall(rf"\b{name} = (\d+)", text)))
    n = re.search(r"Count: (\d+) Average: ([\d.]+)", text)
    if not n or not blocks or not out["wal"] and not out["memtable"]:
        raise SystemExit("perfcontext: db_bench printed no PERF_CONTEXT or histogram")
    writes = int(n.group(1)) * blocks / threads
    return {**{k: v / writes for k, v in out.items()}, "writes": int(n.group(1)),
            "op_mean": float(n.group(2)) * 1e3, "blocks": blocks}


def spread_runq(comps: dict[str, float], split: dict[str, float] | None = None
                ) -> dict[str, float]:
    """sched_runq given back to the components it was waited in: by the
    lens's runq_split where it has one (the component each runnable
    writer's sweep found it in), else by the components' time."""
    runq = comps.get("sched_runq", 0.0)
    rest = {c: v for c, v in comps.items() if c != "sched_runq"}
    if split:
        out = dict(rest)
        for c, f in split.items():
            out[c] = out.get(c, 0.0) + runq * f
        return out
    total = sum(rest.values())
    return {c: v * (1 + runq / total) for c, v in rest.items()} if total else rest


def spans_of(comps: dict[str, float], split: dict[str, float] | None = None
             ) -> dict[str, float]:
    c = spread_runq(comps, split)
    return {"wal": sum(c.get(k, 0.0) for k in WAL_PARTS), "memtable": c.get("memtable", 0.0),
            "queue": c.get("queue", 0.0)}


def headline_spans(summary: dict) -> dict:
    """The headline's spans, and each lens's (rows: the compensated
    component means; untouched: where the run had it)."""
    h = summary["headline"]
    u = summary.get("untouched") or {}
    rows = {c: v["mean_ns"] for c, v in summary["components"].items()}
    split = u.get("runq_split") if u.get("available") else None
    return {**spans_of(h["components"], split if h["lens"] == "untouched" else None),
            "mean": h["mean_ns"], "lens": h["lens"],
            "trusted": h["trusted"], "rows": spans_of(rows),
            "untouched": spans_of(u["components"], split) if u.get("available") else None,
            "untouched_by_time": spans_of(u["components"]) if u.get("available") else None,
            "runq_split": split}


def cells_main(a: argparse.Namespace) -> int:
    import random
    import shutil
    cells = a.cells.split(",")
    rng = random.Random(1)
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="walscope-pc-") as d:
        tmp = Path(d)
        for cell in cells:
            runs: dict[str, list] = {"untraced": [], "traced": []}
            for rep in range(a.reps):
                arms = ["untraced", "traced"]
                rng.shuffle(arms)
                for arm in arms:
                    db = tmp / "db"
                    shutil.rmtree(db, ignore_errors=True)
                    if arm == "untraced":
                        p = subprocess.run(cell_args(db, cell), capture_output=True,
                                           text=True, timeout=900)
                        runs[arm].append(perf_sums(p.stdout + p.stderr, threads(cell)))
                    else:
                        out = tmp / "run"
                        p = subprocess.run(TRACE + ["-q", "-o", str(out), "--force", "--",
                                                    *cell_args(db, cell)],
                                           capture_output=True, text=True, timeout=1800)
                        if p.returncode:
                            raise SystemExit(f"perfcontext: trace failed: {p.stderr[-500:]}")
                        s = json.loads((out / "summary.json").read_text())
                        own = perf_sums((out / "command.log").read_text(errors="replace"),
                                        threads(cell))
                        runs[arm].append({**headline_spans(s), "own": own})
                    print(f"perfcontext: {cell} round {rep + 1} {arm}", file=sys.stderr)
            results[cell] = {"runs": runs, "args": CELLS[cell], "reps": a.reps}
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / f"{a.name}.json").write_text(json.dumps(results, indent=1) + "\n")
    md = "# The headline's components vs PerfContext\n\n" + cells_table(results)
    (a.output / f"{a.name}.md").write_text(md)
    print(md)
    return 0


def cells_table(results: dict[str, dict]) -> str:
    """Per cell and span: PerfContext's untraced median a write, the
    headline's median (its sched_runq spread), their ratio; the spans over
    10% of the untraced mean write are the ones held to 20%."""
    lines = ["| cell | lens (runs) | untraced mean | span | PerfContext | headline | ratio "
             "| PerfContext A/A | ratio to its own run | runq by time |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for cell, r in results.items():
        u, t = r["runs"]["untraced"], r["runs"]["traced"]
        mean = statistics.median(x["op_mean"] for x in u)
        lenses = ", ".join(f"{k} {sum(x['lens'] == k for x in t)}"
                           for k in ("rows", "untouched") if any(x["lens"] == k for x in t))
        for span in ("wal", "memtable", "queue"):
            ref = statistics.median(x[span] for x in u)
            got = statistics.median(x[span] for x in t)
            # the untouched lens's runs, their run-queue time spread by time
            bt = [x["untouched_by_time"][span] for x in t
                  if x["lens"] == "untouched" and x.get("untouched_by_time")]
            by_time = f"{statistics.median(bt) / ref:.2f}" if bt and ref else "-"
            # the untraced runs' own spread, and each traced run's headline
            # against the PerfContext db_bench printed in that same run
            aa = f"[{min(x[span] for x in u) / ref:.2f}, {max(x[span] for x in u) / ref:.2f}]" \
                if ref else "-"
            own = [x[span] / x["own"][span] for x in t if x.get("own", {}).get(span)]
            own_txt = f"{statistics.median(own):.2f}" if own else "-"
            big = "**" if ref > 0.1 * mean else ""
            lines.append(f"| {cell} | {lenses} | {mean / 1e3:.1f} us | {big}{span}{big} | "
                         f"{ref / 1e3:.2f} us | {got / 1e3:.2f} us | "
                         f"{got / ref if ref else float('nan'):.2f} | {aa} | {own_txt} | "
                         f"{by_time} |")
    return "\n".join(lines) + ("\n\nMedians over the rounds; PerfContext per write "
                               "(one thread's block over a thread's writes); the "
                               "headline's sched_runq given back to the components it was "
                               "waited in (the untouched lens: by its runq_split; the rows: "
                               "by their time); PerfContext A/A: the untraced runs' "
                               "lowest and highest over their median; ratio to its own "
                               "run: the median of each traced run's headline over the "
                               "PerfContext db_bench printed in that run (the lens's "
                               "error apart from the VM's drift between runs and the "
                               "tracer's presence); runq by time: the untouched lens's runs "
                               "with their sched_runq spread by time instead; **bold**: "
                               "spans over 10% of the untraced mean write.\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num", type=int, default=30000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="full,writes,window")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--name", default="perfcontext",
                    help="the results' file names, NAME.md and NAME.json "
                         "(perfcontext-window: --num 1000000 --modes full,window)")
    ap.add_argument("--cells", help="the plain command's headline against PerfContext "
                    f"on these cells ({', '.join(CELLS)}); results NAME perfcontext-cells")
    a = ap.parse_args()
    if a.cells:
        unknown = [c for c in a.cells.split(",") if c not in CELLS]
        if unknown:
            ap.error(f"unknown cell {unknown[0]!r} (choose from {', '.join(CELLS)})")
        if a.name == "perfcontext":
            a.name = "perfcontext-cells"
        return cells_main(a)
    modes = a.modes.split(",")
    runs: dict[str, list[dict[str, float]]] = {"untraced": [], **{m: [] for m in modes}}
    with tempfile.TemporaryDirectory(prefix="walscope-pc-") as d:
        tmp = Path(d)
        for rep in range(a.reps):
            p = subprocess.run(args(tmp / f"db-u{rep}", a.num), capture_output=True,
                               text=True, timeout=600)
            runs["untraced"].append(perf_context(p.stdout + p.stderr, a.num))
            for mode in modes:
                runs[mode].append(traced(mode, tmp, a.num, rep))
    med = {k: {s: statistics.median(r[s] for r in v) for s in v[0]}
           for k, v in runs.items()}
    ref = med["untraced"]

    def cell(m: str, span: str) -> str:
        v = med[m][span]
        out = f"{v / 1e3:.2f} us"
        if f"{span}_lo" in med[m]:   # none where the runs had too few windows (NaN)
            lo, hi = med[m][span + "_lo"], med[m][span + "_hi"]
            out += " [no interval]" if math.isnan(lo) or math.isnan(hi) else \
                f" [{lo / 1e3:.2f}, {hi / 1e3:.2f}]"
        return out + (f" ({v / ref[span]:.2f}x)" if ref[span] else "")
    lines = ["| span | PerfContext (untraced) | " + " | ".join(modes) + " |",
             "|---|---|" + "---|" * len(modes)]
    for span in SPANS:
        lines.append(f"| {span} | {ref[span] / 1e3:.2f} us | "
                     + " | ".join(cell(m, span) for m in modes) + " |")
    md = (f"# Compensated components vs PerfContext\n\ndb_bench fillrandom sync=false, "
          f"1 thread, {a.num} writes, pipelined writes off, perf_level=3; medians of "
          f"{a.reps} runs each; window: [medians of the runs' 95% intervals across windows]; "
          "queue is PerfContext's write_thread_wait_nanos.\n\n" + "\n".join(lines) + "\n")
    a.output.mkdir(parents=True, exist_ok=True)
    (a.output / f"{a.name}.md").write_text(md)
    (a.output / f"{a.name}.json").write_text(json.dumps({"runs": runs, "median": med},
                                                          indent=1) + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
