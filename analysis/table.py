"""The breakdown table trace_wal.py prints (80 columns)."""
from __future__ import annotations

import math

from typing import Any

from analysis import selfcheck, threadtime
import engines
from analysis.components import QUEUE_PARTS
from probepoints import modes
from analysis.losses import loss_phrases
from analysis.windows import MIN_WINDOWS as MIN_WINDOWS_FOR_INTERVAL


def fmt_ns(ns: float) -> str:
    if ns >= 1e9:
        return f"{ns / 1e9:.2f}s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f}ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f}us"
    return f"{ns:.0f}ns"


OFFCPU_ROWS = 6


def format_sample_table(summary: dict[str, Any]) -> str:
    """--mode sample: on-CPU shares from samples; off-CPU time (blocked until
    the wakeup, then runnable) of the same threads by syscall in progress."""
    b = summary.get("sample_breakdown", {})
    lines = [f"{'on-CPU (sampled)':<20}{'samples':>9}{'share':>8}{'est. time':>12}"]
    for c, v in sorted(b.items(), key=lambda kv: -kv[1]["samples"]):
        lines.append(f"{c:<20}{v['samples']:>9}{v['share'] * 100:>7.1f}%"
                     f"{fmt_ns(v['est_cpu_ns']):>12}")
    info = summary.get("offcpu_stacks", {})
    off = info.get("by_syscall", [])
    if off:
        lines.append(f"{'off-CPU (switches)':<20}{'periods':>9}{'blocked':>12}{'runnable':>12}")
        for r in off[:OFFCPU_ROWS]:
            lines.append(f"{r['syscall']:<20}{r['periods']:>9}"
                         f"{fmt_ns(r['blocked_us'] * 1e3):>12}{fmt_ns(r['runnable_us'] * 1e3):>12}")
        if len(off) > OFFCPU_ROWS:
            rest = off[OFFCPU_ROWS:]
            lines.append(f"{f'({len(rest)} more)':<20}{sum(r['periods'] for r in rest):>9}"
                         f"{fmt_ns(sum(r['blocked_us'] for r in rest) * 1e3):>12}"
                         f"{fmt_ns(sum(r['runnable_us'] for r in rest) * 1e3):>12}")
    lines += threadtime.table_lines(summary.get("thread_time", {}), fmt_ns)
    if not summary.get("sched", True):
        lines.append("off-CPU time by syscall: add --sched (hooks every context switch)")
    joined = summary.get("rows_joined", 0)
    if joined:   # (a -p attach, or a window, met them mid-way)
        lines.append(f"{joined} transaction{'s' if joined != 1 else ''} already open when "
                     "the probes came left out (begun unseen: not cut short)")
    lines.append(losses_line(summary))
    return "\n".join(lines)


def partial_lines(summary: dict[str, Any]) -> str:
    """A partial run's first lines: PARTIAL, and each reason (what was lost)."""
    if not summary.get("partial_run"):
        return ""
    why = summary.get("partial_why") or ["summary.json partial_run"]
    return "".join(f"PARTIAL: {w}\n" for w in why)


def losses_line(summary: dict[str, Any]) -> str:
    """Every loss, by source, in one line, in the report's words
    (analysis/losses.py): "lost: none" when there is none."""
    phrases = loss_phrases(summary)
    if not phrases and not summary.get("partial_run"):
        return "lost: none (ring buffer, stack and offcpu maps, thread/fd tracking)"
    where = " (summary.json lost_events, tracking_gaps)" if phrases else ""
    # what no counter saw comes first: the records the PARTIAL lines name
    first = ["records (PARTIAL above)"] if summary.get("partial_run") else []
    return "lost: " + ", ".join(first + phrases) + where


def answer_lines(summary: dict[str, Any]) -> list[str]:
    """The headline (analysis/answer.py): which lens answers, its mean per
    component where it is the untouched one, and why."""
    h = summary.get("headline")
    if not h:
        return []
    unit = engines.get(summary.get("engine") or engines.UNNAMED)
    u = summary.get("untouched") or {}
    lines: list[str] = []
    if h["lens"] == "untouched":
        lines.append(f"answer: the untouched lens ({u.get('untouched_share', 0) * 100:.0f}% "
                     "of the writers' time, no probe attached)")
        lines.append(f"{'component':<16}{'mean':>9}{'share':>7}")
        total = h["mean_ns"] or 1.0
        for c, v in h["components"].items():
            lines.append(f"{c:<16}{fmt_ns(v):>9}{v / total * 100:>6.1f}%")
        lo, hi = h.get("lo_ns"), h.get("hi_ns")
        iv = f" [{fmt_ns(lo)}, {fmt_ns(hi)}] 95%" if lo is not None and lo == lo else ""
        lines.append(f"{unit.row + ' (mean)':<16}{fmt_ns(h['mean_ns']):>9}{'100.0%':>7}{iv}")
        if h.get("in_write_mean_ns") is not None:
            lines.append(f"  of which in the {unit.row} itself: {fmt_ns(h['in_write_mean_ns'])} "
                         f"({h['in_write_mean_ns'] / total * 100:.0f}%, by the windows' rows; "
                         "the rest is the writer's own work between them)")
        lines.append(f"  span: {h.get('span', '')}")
        p99 = f"{fmt_ns(h['p99_ns'])}, " if h.get("p99_ns") is not None else ""
        lines.append(f"  p99: {p99}{h.get('p99_why') or 'not measured'}")
    else:
        p99 = f", p99 {fmt_ns(h['p99_ns'])}" if h.get("p99_ns") is not None else ""
        lines.append(f"answer: the rows, mean {fmt_ns(h['mean_ns'])}{p99} a {unit.row}"
                     + ("" if h.get("trusted") else " (NOT trusted)"))
    lines.append(f"  why: {h['why']}")
    other = h.get("other")
    if other and other.get("mean_ns"):
        if other["lens"] == "untouched" and u.get("lo_ns") == u.get("lo_ns") \
                and u.get("lo_ns") is not None:
            rng = f" [{fmt_ns(u['lo_ns'])}, {fmt_ns(u['hi_ns'])}]"
        else:
            rng = ""
        lines.append(f"  {other['lens']} lens: mean {fmt_ns(other['mean_ns'])}{rng}"
                     + (" -- the lenses disagree beyond their intervals"
                        if h.get("disagree") else ""))
    elif u and not u.get("available") and u.get("why"):
        lines.append(f"  untouched lens: none ({u['why']})")
    return lines


def format_table(summary: dict[str, Any]) -> str:
    """The breakdown table, 80 columns: one per engine when a run had
    several (the one with the most writes first)."""
    # (a summary that names no mode is shown as sample mode's, as it always was)
    mode = modes.get(summary.get("mode", modes.SAMPLE.name))
    if mode is not None and not mode.records_writes and not summary["writes"]["count"] \
            and summary.get("sample_breakdown"):
        return partial_lines(summary) + format_sample_table(summary)
    out = retained_line(summary) + engine_table(summary)
    for engine, sub in summary.get("by_engine", {}).items():
        out += f"\n\n[{engine}]\n" + engine_table({**sub, "mode": summary.get("mode")})
    if summary.get("windows"):
        out += "\n" + window_lines(summary["windows"], summary.get("budget"))
    if summary.get("self_check"):
        out += "\n" + selfcheck.line(summary["self_check"])
    phase = summary.get("main_phase")
    if phase and phase.get("self_check"):   # the headline's rows are that phase's
        out += "\n" + phase_lines(summary, phase)
    answer = answer_lines(summary)
    if answer and summary["headline"]["lens"] == "untouched":
        # the answer first; the rows below it are what the probes saw
        out = "\n".join(answer) + "\n\nrows (recorded in windows; the probes' view):\n" + out
    elif answer:
        out += "\n" + "\n".join(answer)
    if not summary["writes"]["count"] and not summary.get("by_engine"):
        found = ", ".join(summary.get("engines_found", [])) or "none"
        out += (f"\nno write or transaction seen: engines found: {found}; "
                f"{len(summary.get('objects', []))} objects inspected "
                "(summary.json objects says why each was rejected)")
    return partial_lines(summary) + out


def phase_lines(summary: dict[str, Any], phase: dict[str, Any]) -> str:
    """The phases the windows saw, and the self-check of the rows the
    headline takes (the phase with the most writes)."""
    shown = ", ".join(f"{p['opened_s']:.1f}s {p['rows']} ~{p['writes_estimated']:,.0f}"
                      for p in summary.get("phases", [])[:6])
    return (f"phases (opened at, rows, ~writes): {shown}; the answer takes "
            f"{phase['opened_s']:.1f}s's rows, mean "
            f"{fmt_ns(phase['writes']['duration_adj']['mean_ns'])}\n"
            + selfcheck.line(phase["self_check"]).replace(
                "self-check:", f"self-check ({phase['opened_s']:.1f}s's rows):", 1))


def retained_line(summary: dict[str, Any]) -> str:
    """A folder walscope serve kept (runners/command/retention.py): what
    its rows are, before them."""
    r = summary.get("retained")
    if not r:
        return ""
    when = f", {r['first_utc']} to {r['last_utc']}" if r.get("first_utc") else ""
    return (f"retained by walscope serve: {r['slow_writes']} writes at or over "
            f"{r['threshold']} and the {r['writes_kept'] - r['slow_writes']} beside them"
            f"{when}: the rows are the tail, not the workload's mean\n")


# past this cost, a budget that records every write is no budget: full mode is named
EVERY_WRITE_HINT_MAX = 0.25


def budget_for_every_write(cost: float) -> int:
    """The --budget (percent) at which the run's median cost estimate, a
    fifth over for its spread between estimates, traces every write."""
    return math.ceil(round(cost * 120, 9))   # (5 / 120) x 120 reads 5.000000000000001


def overhead_removed_ns(summary: dict[str, Any]) -> float:
    """The probes' cost taken out of the mean row: summary.json's
    writes.overhead_removed_ns (from the components' sums in a folder
    analysed before it was there)."""
    w = summary.get("writes", {})
    if "overhead_removed_ns" in w:
        return float(w["overhead_removed_ns"] or 0.0)
    n = w.get("count", 0)
    over = sum(c.get("overhead_ns", 0) for c in summary.get("components", {}).values())
    return over / n if n else 0.0


def windows_said(w: dict[str, Any]) -> str:
    """How many windows and how long, as they ran: "4 windows of 50 ms",
    or their range where they differ ("4 windows of 50-1,000 ms, mean
    298") -- the terminal's and the report's words."""
    n = w.get("count", 0)
    head = f"{n} window{'' if n == 1 else 's'} of "
    lo, hi, mean = w.get("min_ms"), w.get("max_ms"), w.get("mean_ms", 0.0)
    if lo is None or hi is None or hi - lo <= max(1.0, 0.1 * mean):
        return head + f"{mean:,.0f} ms"
    return head + f"{lo:,.0f}-{hi:,.0f} ms, mean {mean:,.0f}"


def budget_lines(b: dict[str, Any], w: dict[str, Any]) -> list[str]:
    """--mode budget: what was recorded, and why (the cost estimate)."""
    cost = b.get("cost_median")
    est = f"~{cost * 100:.1f}%" if cost is not None else "not estimated"
    if b.get("every_write"):
        within = cost is None or cost <= b["budget"]
        return [f"recorded: every write ({b['recorded']}), "
                + (f"within the {b['budget'] * 100:g}% budget" if within else
                   f"a short run within the {b['budget'] * 100:g}% budget's "
                   f"{b.get('burst_ms') or 0:.0f} ms burst"),
                f"  every write cost {est} of throughput ({b['estimates']} estimates)"
                + ("" if within else "; longer runs get windows")]
    total, share = b.get("estimated_total"), b.get("share")
    source = b.get("estimated_from", "")
    how = "counted" if source.startswith("counted") else \
        "from write syscalls" if "syscall" in source else "each gap at its window's rate"
    approx = "" if how == "counted" else "~"
    of = f"of {approx}{total:,.0f} writes ({share * 100:.1f}%; {how})" \
        if total and share is not None else "writes (the total is unknown)"
    hint = "" if cost is None or cost <= b["budget"] else \
        f" (--budget {budget_for_every_write(cost)} records every write)" \
        if cost <= EVERY_WRITE_HINT_MAX else " (--mode full records every write, at that cost)"
    return [f"recorded: {b['recorded']} {of}",
            f"budget {b['budget'] * 100:g}%: every write would cost {est} of throughput{hint};",
            f"  {windows_said(w)} took "
            f"{(w.get('duty') or 0) * 100:.1f}% of the run"]


def window_lines(w: dict[str, Any], budget: dict[str, Any] | None = None) -> str:
    """--mode window and budget: the schedule as it ran, what the rows rest
    on, and the estimates' intervals where there are enough windows."""
    if not w.get("count"):
        return "windows: none opened (a run shorter than the first gap)"
    if budget is not None:
        lines = budget_lines(budget, w)
        if budget.get("every_write"):
            return "\n".join(lines)
    else:
        lines = [f"windows: {windows_said(w)}, duty "
                 f"{w['duty'] * 100:.1f}% (probes in {w['attached_share'] * 100:.1f}% of "
                 f"the run); attach {fmt_ns(w['attach_us'] * 1e3)}, detach "
                 f"{fmt_ns(w['detach_us'] * 1e3)} a window; {w['writes']} writes, "
                 f"{w['writes_per_window']:.0f} a window"]
    each = w.get("by_window") or []
    if len(each) > 1:
        shown = ", ".join(f"{x['t_s']:.1f}s{' (new writers)' if x['phase'] else ''} "
                          f"{x['rows']}" for x in each[:8])
        lines.append(f"rows by window (opened at, rows): {shown}"
                     + (f" (+{len(each) - 8} more)" if len(each) > 8 else ""))
    n = w.get("windows_with_writes", 0)
    est = w.get("estimates", {})
    if n == 1:
        lines.append("every row comes from one window: one moment of the run, "
                     "no interval")
    elif not w.get("interval", True):
        lines.append(f"rows from {n} windows: too few for an interval across windows "
                     f"(it takes {MIN_WINDOWS_FOR_INTERVAL})")
    parts = [f"{c} {fmt_ns(e['mean_ns'])} [{fmt_ns(e['lo_ns'])}, {fmt_ns(e['hi_ns'])}]"
             for c, e in sorted(est.items(), key=lambda kv: -kv[1]["mean_ns"])
             if e["mean_ns"] > 0 and e["lo_ns"] == e["lo_ns"]]
    if parts:
        lines.append(f"mean per write, 95% across {n} windows: " + ", ".join(parts[:5]))
    cut = w.get("rows_cut", 0)
    if cut:
        lines.append(f"{cut} row{'s' if cut != 1 else ''} let go: still running "
                     f"{fmt_ns(w.get('drain_max_ns', 0))} after {'their' if cut != 1 else 'its'} window closed, as long "
                     "as the probes could stay (left out, not cut short)")
    # the sampled on-CPU shares beside the windows' stay in summary.json
    # (windows.versus_samples): samples are named by their innermost
    # function, which names no component for most of the WAL append's time,
    # so the two differ by the classifier, not by the run (docs/attribution.md)
    return "\n".join(lines)


def engine_table(summary: dict[str, Any]) -> str:
    """One engine's breakdown."""
    comps = summary["components"]
    raw = summary["components_raw"]
    lines = [f"{'component':<16}{'count':>8}{'mean':>9}{'p50':>9}{'p99':>9}"
             f"{'p99.9':>9}{'share':>7}{'raw mean':>10}"]
    order = sorted(comps, key=lambda c: -comps[c]["sum_ns"])
    for c in order:
        s = comps[c]
        flag = "!" if s.get("unreliable") else " "
        lines.append(f"{c:<15}{flag}{s['count']:>8}{fmt_ns(s['mean_ns']):>9}"
                     f"{fmt_ns(s['p50_ns']):>9}{fmt_ns(s['p99_ns']):>9}"
                     f"{fmt_ns(s['p999_ns']):>9}{s['share'] * 100:>6.1f}%"
                     f"{fmt_ns(raw[c]['mean_ns']):>10}")
    d = summary["writes"]["duration_adj"]
    unit = engines.get(summary.get("engine") or engines.UNNAMED)
    total = unit.total_label
    lines.append(f"{total:<16}{summary['writes']['count']:>8}"
                 f"{fmt_ns(d['mean_ns']):>9}{fmt_ns(d['p50_ns']):>9}"
                 f"{fmt_ns(d['p99_ns']):>9}{fmt_ns(d['p999_ns']):>9}{'100.0%':>7}"
                 f"{fmt_ns(summary['writes']['duration']['mean_ns']):>10}")
    q = summary["queue_breakdown"]
    qs = sum(q[p]["sum_ns"] for p in QUEUE_PARTS)
    if qs:
        lines.append("queue behind: " + ", ".join(
            f"{p.replace('queue_behind_', '').replace('queue_', '')} "
            f"{q[p]['sum_ns'] / qs * 100:.0f}%" for p in QUEUE_PARTS))
    g = summary["groups"]
    w = summary["wal"]
    if unit.section and unit.name in summary:
        lines += unit.section.lines(summary)
    else:
        lead, follow = unit.roles or ("leaders", "followers")
        roles = (f"{g['leaders']} {lead}, {g['followers']} {follow}"
                 if g["leaders"] is not None else
                 "roles not known (no write called the WAL; --mode full counts them)")
        every = w["sync"].get("every_count")
        lines.append(f"groups: {roles}; WAL: {w['sync']['count']} syncs, "
                     f"{w['write']['count']} writes, {w['write']['bytes']} B"
                     + (f"; {every} log syncs over the run (every one, traced or not)"
                        if every is not None and summary.get("windows") else ""))
        flags = summary.get("flags", {})
        if flags:
            lines.append("rows: " + ", ".join(f"{n} {c.replace('_', ' ')}"
                                              for c, n in flags.items()))
    # the rows a workload's own transaction log labelled
    for typ, v in summary.get("by_type", {}).items():
        lines.append(f"  {typ:<14}{v['count']:>7} txns, mean {fmt_ns(v['mean_adj_ns'])}"
                     f" (workload's own: {fmt_ns(v['app_mean_ns'])})")
    for comp, f in summary.get("sampled_split", {}).items():
        if f.get("applied"):
            lines.append(f"{comp}: {f['fraction'] * 100:.1f}% (+-{f['stderr'] * 100:.1f}) of "
                         f"{f['parent']}, from {f['samples']} samples (no probes)")
        else:
            lines.append(f"{comp}: inside {f['parent']} (too few samples to split: "
                         f"{f['samples']})")
    removed = overhead_removed_ns(summary)
    band = summary.get("calibration", {}).get("band", 0.0)
    if removed:
        lines.append(f"probe overhead removed: {fmt_ns(removed)} per "
                     f"{unit.row} (+-{band * 100:.0f}%: "
                     "warm vs cold caches)")
    if summary["unreliable_components"]:
        # (a mode this walscope does not know: the default's advice)
        cheaper = (modes.get(summary.get("mode"))
                   or modes.MODES[modes.DEFAULT]).fewer_probes
        lines.append("! probe overhead is over half of these components: "
                     + ", ".join(summary["unreliable_components"])
                     + (f" (try --mode {' or '.join(cheaper)})" if cheaper else ""))
    joined = summary.get("rows_joined", 0)
    if joined:   # (a -p attach, or a window, met them mid-way)
        lines.append(f"{joined} transaction{'s' if joined != 1 else ''} already open when "
                     "the probes came left out (begun unseen: not cut short)")
    lines.append(losses_line(summary))
    return "\n".join(lines)
