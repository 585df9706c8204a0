"""The docs' blocks that tables of measurements make (bench/results/*.json:
the overhead, the truth table and its lenses, many cores, the verdicts'
noise, the window cost), for runners/docs.py's `make docs`."""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


OVERHEAD_JSON = ROOT / "bench" / "results" / "overhead.json"
WINDOW_COST = ROOT / "bench" / "window_cost.py"
OVERHEAD_ROWS = {  # bench/overhead.py's workloads, as the README names them
    "sync-on-1t": "db_bench, sync=true, 1 thread",
    "sync-on-4t": "db_bench, sync=true, 4 threads",
    "sync-off-1t": "db_bench, sync=false, 1 thread",
    "sync-off-4t": "db_bench, sync=false, 4 threads",
    "sqlite-delete-2c": "SQLite TPC-C-like, DELETE journal, 2 clients",
    "sqlite-wal-2c": "SQLite TPC-C-like, WAL journal, 2 clients",
    "sync-on-300ps-1t": "db_bench, sync=true, 1 thread, ~300 writes/s",
    "sync-on-300ps-4t": "db_bench, sync=true, 4 threads, ~300 writes/s together",
    "sync-on-16t": "db_bench, sync=true, 16 threads",
    "sync-off-16t": "db_bench, sync=false, 16 threads",
}
# bench/many_cores.sh's results, from a lent 16-core machine
MANY_CORES = ROOT / "bench" / "results" / "many_cores"
OVERHEAD_COLS = {"untraced-again": "A/A", "walscope-budget": "budget (default)",
                 "walscope-full": "full", "walscope-writes": "writes",
                 "walscope-sample": "sample", "walscope-window": "window"}


def overhead(path: Path = OVERHEAD_JSON) -> str:
    """Throughput traced / untraced per mode, the median of the interleaved
    pairs of bench/results/overhead.json (or path), with the pairs behind it."""
    data = json.loads(path.read_text())
    cols = {t: n for t, n in OVERHEAD_COLS.items() if any(t in per for per in data.values())}
    rows = ["| workload | " + " | ".join(cols.values())
            + " | default recorded |", "|---|" + "---|" * (len(cols) + 1)]
    for w, name in OVERHEAD_ROWS.items():
        if w not in data:
            continue
        per = data.get(w, {})
        cells = [f"{per[t]['median']:.2f} ({len(per[t]['ratios'])}{runs_longer(per[t])})"
                 + ("*" if per[t].get("settled") else "")
                 + ("†" if per[t].get("run_folder") == "runs" else "")
                 + ("‡" if per[t].get("idle_poll_us") else "") if t in per else "-"
                 for t in cols]
        b = per.get("walscope-budget", {})
        share = b.get("recorded_share_median")
        cells.append("-" if share is None else
                     f"every write ({b['every_write_runs']}/{len(b['ratios'])} runs)"
                     if b.get("every_write_runs") == len(b["ratios"]) else
                     f"{share * 100:.1f}% of writes")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    rows += other_budgets(data)
    rows += ["", "\\* each run started once the disks had gone quiet after the "
             "last one (`bench/overhead.py`'s default since 2026-11-24); "
             "x5: runs 5 times as long as the workload's own (`bench/overhead.py --scale 5`); "
             "† measured with the traced runs' folders where the plain command puts them (`runs/` "
             "under the working directory), not beside the database as before 2026-11-27 "
             "(eleventh session): on "
             "this VM's journal-less ext4 that cost SQLite's DELETE journal 2-4% "
             "(`bench/results/NOTES.md`)"]
    # the cells shown: the table's columns and the other budgets' lines
    polled = sorted({c["idle_poll_us"] for per in data.values() for t, c in per.items()
                     if (t in cols or t.startswith("walscope-budget")) and c.get("idle_poll_us")})
    if polled:
        rows[-1] += ("; ‡ measured with the guest polling "
                     + "/".join(str(n) for n in polled) + " us before it halts an idle "
                     "vCPU (`bench/overhead.py --idle-poll-us`), not this VM's own idle path")
    return "\n".join(rows)


def other_budgets(data: dict) -> list[str]:
    """The cells measured at a --budget other than the default's
    (walscope-budgetN), a line each under the table."""
    out = []
    for w, name in OVERHEAD_ROWS.items():
        for tool, c in sorted(data.get(w, {}).items()):
            n = tool.removeprefix("walscope-budget")
            if not tool.startswith("walscope-budget") or not n:
                continue
            rec = (f"every write ({c['every_write_runs']}/{len(c['ratios'])} runs)"
                   if c.get("every_write_runs") == len(c["ratios"]) else
                   f"{c.get('recorded_share_median', 0) * 100:.1f}% of writes")
            out.append(f"- `--budget {n}`, {name}: {c['median']:.2f} "
                       f"({len(c['ratios'])}){'*' if c.get('settled') else ''}"
                       f"{'‡' if c.get('idle_poll_us') else ''}, {rec}")
    return ["", "At other budgets:", ""] + out if out else []


def runs_longer(cell: dict) -> str:
    """", xN" for a cell whose runs were N times the workload's length."""
    scale = cell.get("scale") or 1.0
    return "" if scale == 1 else f", x{scale:g}"


TRUTH_JSON = ROOT / "bench" / "results" / "truth.json"


def truth(path: Path = TRUTH_JSON) -> str:
    """bench/truth.py's table: traced latency over the workload's own
    untraced timing, per mode, with the self-check each run printed."""
    from analysis.selfcheck import P99_TOLERANCE, TOLERANCE
    if not path.exists():
        return "(not measured yet: `sudo bench/truth.py --reps 5`)"
    data = json.loads(path.read_text())
    modes = [m for m in ("budget", "full") if any(m in r["summary"] for r in data.values())]
    rows = ["| workload | untraced mean / p99 | A/A mean | "
            + " | ".join(f"{m} mean | {m} p99 | {m} trusted" for m in modes) + " |",
            "|---|---|---|" + "---|---|---|" * len(modes)]
    totals = {"trusted": 0, "within": 0, "not": 0, "outside": 0}
    for wl, r in data.items():
        s, ref = r["summary"], r["summary"]["reference"]

        def c(arm: str, k: str) -> str:
            v = (s.get(arm) or {}).get(k)
            return f"{v['median']:.2f} [{v['lo']:.2f}, {v['hi']:.2f}]" if v else "-"

        def trust(arm: str) -> str:
            """How many runs the self-check trusted and how many of those were
            within the tolerance; how many it did not and how many of those
            were outside.  (A run with none of the measured type, e.g. no
            new-order transaction in the default's windows, is left out.)"""
            runs = [x for x in r["runs"].get(arm, []) if x.get("self_check") and x.get("mean")]
            if not runs:   # a cell rerun without this mode
                return "-"
            # the untraced runs' own spread: an error below it cannot be seen
            spread = {k: max(abs(u[k] / ref[k] - 1) for u in r["runs"]["untraced"])
                      for k in ("mean", "p99")}

            def within(x: dict) -> bool:
                return (abs(x["mean"] / ref["mean"] - 1) <= max(TOLERANCE, spread["mean"])
                        and abs(x["p99"] / ref["p99"] - 1) <= max(P99_TOLERANCE, spread["p99"]))
            trusted = [x for x in runs if x["self_check"]["trusted"]]
            good = sum(within(x) for x in trusted)
            off = sum(not within(x) for x in runs if not x["self_check"]["trusted"])
            for k, v in (("trusted", len(trusted)), ("within", good),
                         ("not", len(runs) - len(trusted)), ("outside", off)):
                totals[k] += v
            return (f"{len(trusted)}/{len(runs)} ({good} within); "
                    f"{len(runs) - len(trusted)} not ({off} outside)")
        rows.append(f"| {wl} | {ref['mean'] / 1e3:.1f} / {ref['p99'] / 1e3:.1f} us | "
                    f"{c('untraced', 'mean')} | "
                    + " | ".join(f"{c(m, 'mean')} | {c(m, 'p99')} | {trust(m)}"
                                 for m in modes) + " |")
    reps = max(r["reps"] for r in data.values())
    rows += ["", f"Medians of {reps} interleaved rounds [range]; each traced run's "
             "compensated latency over the median of the untraced runs; A/A: the "
             "untraced runs over their own median; trusted: the runs whose self-check "
             "(`summary.json` `self_check`) trusted their latencies and how many of "
             "those were within 15% (mean) and 30% (p99) of the untraced median (or "
             "the untraced runs' own spread, where wider); then the runs it did not "
             "trust and how many of those were outside.",
             "", f"In all, the self-check trusted {totals['trusted']} runs, "
             f"{totals['within']} of them within; of the {totals['not']} it did not "
             f"trust, {totals['outside']} were outside."]
    return "\n".join(rows)


def truth_lenses(path: Path = TRUTH_JSON) -> str:
    """bench/truth.py's lenses: the untouched lens and the headline against
    the workload's own untraced timing, from truth.json."""
    import importlib.util
    if not path.exists():
        return "(not measured yet: `sudo bench/truth.py --reps 5`)"
    spec = importlib.util.spec_from_file_location("truth", ROOT / "bench" / "truth.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    data = json.loads(path.read_text())
    modes = [m for m in ("budget", "full") if any(m in r["summary"] for r in data.values())]
    return mod.lens_table(data, modes).rstrip("\n")


TRUTH_HEADLINE_JSON = ROOT / "bench" / "results" / "truth-headline.json"


def truth_headline(path: Path = TRUTH_HEADLINE_JSON) -> str:
    """The default mode's last batch on every cell (bench/truth.py --modes
    budget, its outputs merged into truth-headline.json): the self-check's
    trust and the lenses against the workloads' own untraced timing."""
    if not path.exists():
        return "(not measured yet: `sudo bench/truth.py --reps 5 --modes budget`)"
    return truth(path) + "\n\n" + truth_lenses(path)


def many_cores() -> str:
    """bench/many_cores.sh's truth and overhead tables, from the lent
    machine machine.txt describes."""
    if not (MANY_CORES / "truth.json").exists():
        return "(not measured yet: `bench/many_cores.sh` on a machine of 16 cores)"
    machine = (MANY_CORES / "machine.txt").read_text().splitlines()
    return "\n".join([f"Measured on: {machine[0].strip()} ({machine[1].strip()}).", "",
                      truth(MANY_CORES / "truth.json"), "",
                      "Throughput, traced / untraced (pairs in brackets):", "",
                      overhead(MANY_CORES / "overhead.json")])


IDENTICAL_CORES = ROOT / "studies" / "000-wal-sync-pe" / "results.json"


def verdict_noise() -> str:
    """The verdict rule on two cells that cannot differ: study 000's cells
    pinned to CPU 0 ("P") and to CPU 1 ("E") of this VM's identical cores,
    each metric and benchmark; beside it the rule before (repeats' ranges
    do not overlap), on the same runs."""
    from runners.experiments.studies.judge import compare
    from runners.experiments.studies.results import Results
    if not IDENTICAL_CORES.exists():
        return "(study 000 not run yet: `sudo ./runners/study.py 000`)"
    r = Results.load(IDENTICAL_CORES)
    if not r.environment.get("aa_cell"):
        return "(study 000's results predate the rule: `sudo ./runners/study.py 000`)"
    rows = ["| sync | benchmark | metric | P / E, per round | this rule | ranges overlap? |",
            "|---|---|---|---|---|---|"]
    new = old = n = 0
    for sync in (True, False):
        p, e = r.cell(sync=sync, pin="P"), r.cell(sync=sync, pin="E")
        for bench in p.metrics:
            for metric in ("ops_sec", "micros_op", "p99_us"):
                a, b = p.stat(metric, bench), e.stat(metric, bench)
                if a is None or b is None:
                    continue
                c = compare(a, b)
                differs_old = a.lo > b.hi or a.hi < b.lo
                n, new, old = n + 1, new + (c.sign in "<>"), old + differs_old
                rows.append(f"| {str(sync).lower()} | {bench} | {metric} | {c.text()} | "
                            f"{'differ' if c.sign in '<>' else 'same' if c.sign == '~' else '?'}"
                            f" | {'differ' if differs_old else 'same'} |")
    rows += ["", f"Differences called between two cores of one type: **{new} of {n}** "
             f"comparisons by this rule, {old} of {n} by the old one (the repeats' ranges "
             f"do not overlap) on the same runs (study 000, "
             f"{r.environment.get('repeats')} rounds). The unsynced rows, where nothing "
             "but the core differs, are the rule's false-positive check; the synced rows "
             "are not (below)."]
    return "\n".join(rows)


def window_cost() -> str:
    """bench/window_cost.py's table, from its results."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("window_cost", WINDOW_COST)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    results = json.loads((ROOT / "bench" / "results" / "window_cost.json").read_text())
    return mod.render(results).rstrip("\n")
