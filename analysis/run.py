"""Analyse a run folder: the collector's records in, Parquet tables, folded
stacks and summary.json out.

A pure function of the folder's files: the records (*.bin) and their layout
(layout.json), what the tracer wrote beside them (run.json: how it traced;
calibration.json: probe costs;
symbols.json: names of the addresses; fds.json: files open at attach;
perf-script.txt: perf's stacks) and the workload's own txlog.csv.  It needs
no root, no running kernel and no traced object, so a folder copied from
another host is analysed the same way.  A run whose tracer died before
analysing (no run.json "end") is analysed as partial.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import engines
from analysis import columns as C
from analysis import components
from analysis import compensation, folded, offcpu, sampling, stacks, summary as S
from analysis import (answer, phases, rows_sample, selfcheck, threadtime, untouched, windows,
                      workload_output)
from analysis import writes as W
from analysis.io import io_frame_from, named_frame, opens_frame
from analysis.sched import sched_frame_from
from runfolder import records as R
from runfolder.files import LOG_SYNC_FUNCTIONS, RunFolder, RunFolderError


class AnalysisError(RuntimeError):
    """The folder is not a run folder, or is unreadable: one line."""


def read_run_info(run_dir: Path) -> dict[str, Any]:
    """run.json, or {} for a folder whose tracer wrote none."""
    try:
        return RunFolder(run_dir).run_info()
    except RunFolderError as e:
        raise AnalysisError(str(e)) from None


def seeded_paths(run_dir: Path) -> dict[tuple[int, int], str]:
    """(pid, fd) -> path of the files open when tracing began (fds.json)."""
    raw = RunFolder(run_dir).open_files()
    return {(int(pid), int(fd)): path for pid, fds in raw.items() for fd, path in fds.items()}


def writes_span_ns(run_dir: Path) -> int | None:
    """From the first write's start to the last write's end."""
    path = RunFolder(run_dir).writes_parquet
    if not path.exists():
        return None
    lo, hi = None, None
    for b in C.ParquetColumns(path).batches(["start_ns", "dur_ns"]):
        if len(b):
            s, e = int(b["start_ns"].min()), int((b["start_ns"] + b["dur_ns"]).max())
            lo, hi = (s if lo is None else min(lo, s)), (e if hi is None else max(hi, e))
    return hi - lo if lo is not None and hi is not None and hi > lo else None


def main_phase(run_dir: Path, summary: dict[str, Any], layout: R.Layout) -> None:
    """summary.json's phases, where the windows saw two or more with rows,
    and main_phase: the rows of the one with the most writes, summarised
    as the run's are, with their own self-check (the headline's rows)."""
    folder = RunFolder(run_dir)
    sched = windows.read_windows(run_dir)
    comps = components.names(summary["engine"], layout)
    rows = C.ParquetColumns(folder.writes_parquet).frame(
        ["start_ns", "dur_ns", "dur_adj_ns"] + [f"{c}_adj_ns" for c in comps])
    by_window = (summary.get("windows") or {}).get("by_window") or []
    starts = rows["start_ns"].to_numpy()
    found = phases.phases(sched, by_window, starts, windows.read_stop(run_dir),
                          windows.read_phases(run_dir))
    main = phases.main_phase(found)
    if main is None:
        return
    summary["phases"] = found
    mine = phases.row_phases(sched, by_window, starts) == main["phase"]
    sub = phases.rows_summary(rows[mine], comps)
    sub["rows_sample"] = rows_sample.interval(
        starts[mine], rows["dur_adj_ns"].to_numpy()[mine],
        windows.window_of(starts[mine], sched),
        main["window_s"] / main["span_s"] if main["span_s"] else None, main["span_s"] * 1e9)
    sub["self_check"] = selfcheck.self_check({
        **sub, "engine": summary["engine"], "calibration": summary.get("calibration", {})})
    summary["main_phase"] = {**main, **sub}


def analyse(run_dir: Path) -> dict[str, Any]:
    """Write the run folder's Parquet tables, folded stacks and summary.json;
    returns the summary.  Records are read with the folder's own layout
    (Layout.of: its layout.json, else the build's)."""
    run_dir = Path(run_dir)
    folder = RunFolder(run_dir)
    if not folder.has_records():
        raise AnalysisError(f"{run_dir}: no walscope records (*.bin) in it")
    layout = R.Layout.of(folder)
    info = read_run_info(run_dir)
    try:
        cal = compensation.load(run_dir)
    except ValueError as e:
        raise AnalysisError(str(e)) from None
    summary = tables(run_dir, cal, info, layout)
    root = "command"
    if info.get("summary", {}).get("command"):
        root = Path(info["summary"]["command"][0]).name
    method = info.get("oncpu_stacks", "off")
    if method != "off":
        summary["oncpu_stacks"] = fold_oncpu(run_dir, method, info)
    if info.get("offcpu", "off") != "off":
        summary["offcpu_stacks"] = fold_offcpu(run_dir, summary["engine"],
                                               info["offcpu"] == "user-stacks",
                                               info.get("offcpu_stack_every", 1))
    folded.write_folded(run_dir, root)
    summary.update(info.get("summary", {}))
    if folder.windows_tsv.exists():   # --mode window and budget
        w = C.ParquetColumns(folder.writes_parquet)
        comps = components.names(summary["engine"], layout)
        sched = windows.read_windows(run_dir)
        rows = w.frame(["start_ns", "dur_adj_ns"] + [f"{c}_adj_ns" for c in comps])
        summary["windows"] = windows.summarize(
            sched, rows, comps, summary.get("elapsed_s"), summary.get("sample_breakdown"))
        summary["windows"]["by_window"] = windows.by_window(
            sched, rows["start_ns"].to_numpy(), windows.read_phases(run_dir))
        # rows let go when their window's drain gave up (probes/maps.bpf.h
        # counts those it meets again; windows.tsv's "late", all in flight
        # at the detach, also those that never ran again before the end)
        summary["windows"].update(windows.rows_cut(
            sched, S.collector_counters(run_dir)[0].get("rows_cut", 0),
            windows.read_stop(run_dir)))
        budget = (info.get("window") or {}).get("budget")
        if budget is not None:
            costs, end_ns = windows.read_costs(run_dir)
            summary["budget"] = windows.summarize_budget(
                costs, sched, end_ns, budget, summary["windows"].get("writes", 0),
                windows.read_budget(run_dir), rows["start_ns"].to_numpy(),
                windows.read_write_syscalls(run_dir))
            marks = S.collector_counters(run_dir)[0].get("row_marks", 0)
            if marks and not summary["budget"]["every_write"]:
                summary["budget"].update(windows.counted_share(
                    summary["budget"]["recorded"], marks))
        starts = rows["start_ns"].to_numpy()
        summary["rows_sample"] = rows_sample.interval(
            starts, rows["dur_adj_ns"].to_numpy(), windows.window_of(starts, sched),
            1.0 if (summary.get("budget") or {}).get("every_write")
            else summary["windows"].get("duty"), summary["windows"].get("span_ns"))
    summary["self_check"] = selfcheck.self_check(summary)
    if folder.windows_tsv.exists():
        main_phase(run_dir, summary, layout)
    summary["untouched"] = untouched_lens(run_dir, summary, layout)
    summary["headline"] = answer.headline(summary)
    summary["throughput"] = workload_output.throughput(
        run_dir, summary["writes"]["count"], writes_span_ns(run_dir),
        windowed=folder.windows_tsv.exists())
    if "end" not in info:   # the tracer died: what it would have added is unknown
        summary["partial_run"] = True
        summary["partial_why"] = summary.get("partial_why", []) + [
            f"{folder.run_json.name} has no end: the tracer died before the run ended"]
        summary.setdefault("elapsed_s", None)
    write_summary(run_dir, summary)
    return summary


def untouched_lens(run_dir: Path, summary: dict[str, Any], layout: R.Layout
                   ) -> dict[str, Any]:
    """The untouched lens (analysis/untouched.py) from the folder's tables."""
    folder = RunFolder(run_dir)
    cols = ["start_ns", "tid", "dur_ns", "dur_adj_ns"]
    rows = C.ParquetColumns(folder.writes_parquet).frame(cols) \
        if folder.writes_parquet.exists() else pd.DataFrame({c: [] for c in cols})
    samples = C.ParquetColumns(folder.samples_parquet).frame(
        ["ts_ns", "tid", "component", "symbol"]) if folder.samples_parquet.exists() else None
    # a row's probe pair costs this much outside its own span
    cal, pair = summary.get("calibration") or {}, engines.get(summary["engine"]).pair_cost
    outside = max(float(cal.get(f"{pair}_out_ns", 0.0)), 0.0)
    io = C.ParquetColumns(folder.io_parquet).frame(
        ["ts_ns", "tid", "lat_ns", "syscall", "kind"]) if folder.io_parquet.exists() else None
    runq = None
    if folder.sched_parquet.exists():
        sched = C.ParquetColumns(folder.sched_parquet).frame(["ts_ns", "tid", "event", "dur_ns"])
        runq = sched[sched["event"] == "runq"]
    return untouched.lens(untouched.wall_frame(run_dir), summary["engine"],
                          windows.read_windows(run_dir), rows, samples, layout, outside,
                          io, runq)


LOG_SYNC_PROBES = frozenset(f"always {n}" for n in LOG_SYNC_FUNCTIONS)


def log_syncs_probed(folder: RunFolder) -> bool:
    """Whether libc's syncs were probed for the whole run: the collector
    attached its "always" probes on fdatasync and fsync, and none failed
    (collector.json's attach list; collectors/log_syncs.py)."""
    probes = folder.collector_report().get("attach") or []
    mine = [a for a in probes if a.get("probe") in LOG_SYNC_PROBES]
    return bool(mine) and all(a.get("err") == 0 for a in mine)


def tables(run_dir: Path, cal: compensation.Calibration,
           info: dict[str, Any], layout: R.Layout) -> dict[str, Any]:
    """Parquet files from the records (the folder's, read with layout);
    returns the summary (not yet written)."""
    folder = RunFolder(run_dir)
    counters, rep = S.collector_counters(run_dir)
    # the engine with the most writes leads; a process may hold several
    present = W.records_engines(run_dir)
    engine = next(iter(present), None) or info.get("engine") or engines.UNNAMED
    row_engines = [engine] + [e for e in present if e != engine]
    sample_hz = info.get("sample_hz", 0)
    split = info.get("sampled_split", {})
    groups_unprobed = info.get("groups_unprobed", False)
    # records -> Parquet a chunk at a time; summaries read columns back
    # a workload may log its own transactions (txlog.csv: tid,start_ns,
    # end_ns,type[,ok] with CLOCK_MONOTONIC ns); they label the rows
    txlog = folder.txlog_csv
    log = W.read_txlog(txlog) if engines.get(engine).txlog_labels and txlog.exists() \
        else None
    empty_w = np.zeros(0, layout.struct_dtype("ws_write_rec"))
    samples = sampling.samples_frame(run_dir, engine) if sample_hz else None
    fractions = sampling.split_fractions(samples, split) \
        if split and samples is not None else {}

    # the traced machine's CPUs, for the waits others' probes lengthened
    ncpu = len(info.get("summary", {}).get("environment", {}).get("cpu_types") or "")
    empties = [W.writes_frame_from(empty_w, cal, e, ncpu, layout=layout) for e in row_engines]

    def frame(chunk: np.ndarray):
        if len(row_engines) == 1:
            return W.writes_frame_from(chunk, cal, engine, ncpu, layout=layout)
        return W.union_frame([W.writes_frame_from(chunk, cal, e, ncpu, layout=layout)
                              for e in row_engines], empties)

    def writes_chunks():
        for chunk in R.iter_records(run_dir, "ws_write_rec"):
            w = W.apply_split(frame(chunk), fractions)
            yield W.label_transactions(w, log) if log is not None else w
    empty = frame(empty_w)
    if log is not None:
        empty = W.label_transactions(empty, log)
    C.write_chunks(folder.writes_parquet, writes_chunks(), empty)
    opens = opens_frame(run_dir, seeded_paths(run_dir))
    named = named_frame(run_dir)
    names: dict[int, str] = {}

    def io_chunks():
        for chunk in R.iter_records(run_dir, "ws_io_rec"):
            df = io_frame_from(chunk, opens, named, layout)
            names.update(zip(df["tid"], df["thread"]))
            yield df
    C.write_chunks(folder.io_parquet, io_chunks(),
                   io_frame_from(np.zeros(0, layout.struct_dtype("ws_io_rec")), opens, named,
                                 layout))

    def sched_chunks():
        for chunk in R.iter_records(run_dir, "ws_sched_rec"):
            yield sched_frame_from(chunk, names, layout)
    C.write_chunks(folder.sched_parquet, sched_chunks(),
                   sched_frame_from(np.zeros(0, layout.struct_dtype("ws_sched_rec")), names,
                                    layout))
    writes = C.ParquetColumns(folder.writes_parquet)
    io = C.ParquetColumns(folder.io_parquet)
    several = len(row_engines) > 1
    summary = S.summarize(writes, io, counters, cal, engine, groups_unprobed, several,
                          layout=layout)
    if log is not None:
        summary["by_type"] = by_type(writes, engine if several else None, layout)
    if log_syncs_probed(folder):
        # every log sync of the run, windows or not (collectors/log_syncs.py)
        summary["wal"]["sync"]["every_count"] = int(counters.get("wal_sync_marks", 0))
    if several:   # each other engine's writes, summarised as the first's
        summary["by_engine"] = {}
        for e in row_engines[1:]:
            sub = S.summarize(writes, io, counters, cal, e, groups_unprobed, True,
                              layout=layout)
            if log is not None and engines.get(e).txlog_labels:
                sub["by_type"] = by_type(writes, e, layout)
            summary["by_engine"][e] = sub
    threads = threadtime.threads_frame(run_dir)
    threads.to_parquet(folder.threads_parquet, index=False)
    summary["thread_time"] = threadtime.summarize(threads, engine)
    if fractions:
        summary["sampled_split"] = fractions
    if samples is not None:
        samples.to_parquet(folder.samples_parquet, index=False)
        summary["sample_breakdown"] = sampling.breakdown(samples, sample_hz)
        summary["sample_hz"] = sample_hz
    summary["collector"] = {k: rep.get(k) for k in
                            ("records", "bad_records", "write_error", "attach",
                             "cpu_user_s", "cpu_sys_s", "max_rss_kb")}
    # no report (the collector died), a torn record, a file shorter than
    # the collector wrote, or records it could not write or read: what is
    # here is not all there was
    summary["partial_why"] = partial_why(run_dir, rep, layout)
    summary["partial_run"] = bool(summary["partial_why"])
    failed = [a["probe"] for a in rep.get("attach", []) if a.get("err")]
    summary["probes_failed"] = failed
    for f in failed:
        warn(f"could not attach {f}")
    lost = {k: v for k, v in summary["lost_events"].items() if v}
    ring = {k: v for k, v in lost.items() if k not in ("stack", "offcpu")}
    if ring:
        warn(f"WARNING: events lost: {ring}; consider a larger --ringbuf-mb")
    if lost.get("stack"):   # without BPF_F_REUSE_STACKID the map never runs out of
        # elements: each miss is a stack whose hash bucket another one held
        warn(f"WARNING: {lost['stack']} stacks not kept: another stack held their "
             "bucket in the stack map (a hash collision; --stack-entries N, a bigger "
             "map, keeps more)")
    if lost.get("offcpu"):
        warn(f"WARNING: {lost['offcpu']} off-CPU periods not kept (offcpu map full)")
    return summary


def partial_why(run_dir: Path, rep: dict[str, Any], layout: R.Layout) -> list[str]:
    """Why the records are not all the run wrote, one reason a line (none:
    complete): the collector's report missing, or each record file against
    the count the report gives for it (cut short, a torn last record, more
    than were written), or a write or poll that failed."""
    if not rep:
        return ["no collector.json: the collector died; what it had not "
                "written is lost"]
    why = []
    wrote = rep.get("records") or {}
    for struct, fname in R.RECORD_FILES.items():
        path = RunFolder(run_dir).records(struct)
        want = wrote.get(fname)
        if not path.exists() and not want:   # none (or older than its struct)
            continue
        size = path.stat().st_size if path.exists() else 0
        have, torn = divmod(size, layout.struct_dtype(struct).itemsize)
        if want is not None and have < want:
            why.append(f"{fname}: {have} of {want} records written, "
                       f"{want - have} lost (cut short)")
        elif want is not None and have > want:
            why.append(f"{fname}: {have} records, {want} written "
                       "(not this run's alone)")
        if torn:
            why.append(f"{fname}: a torn last record ({torn} B dropped)")
    if rep.get("write_error"):
        why.append(f"the collector failed to write records "
                   f"({os.strerror(rep['write_error'])}): some lost")
    if rep.get("poll_error"):
        why.append(f"the collector failed to read the ring buffer "
                   f"({os.strerror(rep['poll_error'])})")
    return why


def by_type(writes: C.ParquetColumns, engine: str | None,
            layout: R.Layout) -> dict[str, Any]:
    """SQLite's per-transaction-type summary (of one engine's rows, with
    that engine's components in layout, when the table holds several)."""
    adj = [c for c in writes.columns if c.endswith("_adj_ns")]
    if engine:
        adj = ["dur_adj_ns"] + [f"{c}_adj_ns" for c in components.names(engine, layout)]
    w = writes.frame(["txn_type", "dur_ns", "app_latency_ns"] + adj
                     + (["engine"] if engine else []))
    if engine:
        w = w[w["engine"] == engine].drop(columns="engine")
    return W.by_type(w)


def warn(msg: str) -> None:
    print(f"walscope: {msg}", file=sys.stderr)


def fold_oncpu(run_dir: Path, method: str, info: dict[str, Any]) -> dict[str, Any]:
    """oncpu-stacks.folded; returns what summary.json says about it."""
    out: dict[str, Any] = {"method": method}
    try:
        if method == "dwarf":
            if info.get("oncpu_stacks_error"):
                raise OSError(info["oncpu_stacks_error"])
            folded_stacks, total, trunc = stacks.fold_perf(RunFolder(run_dir).perf_script_txt)
        else:
            folded_stacks, total, trunc = stacks.fold_bpf(run_dir)
    except OSError as e:
        warn(f"no on-CPU stacks: {e}")
        return {**out, "samples": 0, "truncated": 0, "error": str(e)}
    RunFolder(run_dir).folded("oncpu-stacks").write_text(folded.fold(folded_stacks))
    if total and trunc / total > 0.2:
        warn(f"{trunc} of {total} on-CPU stacks are truncated "
             f"({method} unwinding; see summary.json oncpu_stacks)")
    out.update(samples=total, truncated=trunc)
    if info.get("oncpu_stacks_note"):
        out["note"] = info["oncpu_stacks_note"]
    return out


def fold_offcpu(run_dir: Path, engine: str, user_stacks: bool,
                stack_every: int) -> dict[str, Any]:
    """offcpu-stacks.folded; returns what summary.json says about it."""
    try:
        folded_stacks, info = offcpu.fold(run_dir, engine, user_stacks)
        info["stack_every"] = stack_every
    except OSError as e:
        warn(f"no off-CPU stacks: {e}")
        return {"error": str(e)}
    RunFolder(run_dir).folded("offcpu-stacks").write_text(
        folded.fold(folded.rounded(folded_stacks)))
    return info


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    dst = RunFolder(run_dir).summary_json
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    tmp.replace(dst)
