"""The untouched lens: the mean write and its components from what costs
the writes nothing, read where no probe was attached (between windows).

A write's probes cost 1-2 us a hit here, as much as an unsynced write,
and lengthen the waits of other threads; no compensation gets all of that
back (analysis/selfcheck.py).  Between windows nothing is attached to the
writers' path, and three things are read anyway:

- the wall sweep (probes/wall.bpf.h, wall.bin): each thread's on-CPU and
  run-queue time as the scheduler accounts it, the bytes and calls it has
  passed to write syscalls, and its state (on a CPU, runnable, blocked in
  which syscall on which kind of file), at a fixed rate and at each
  window's edges;
- perf's timed samples (samples.parquet): what the threads ran on the CPU;
- the windows themselves, for ratios the probes distort little: how many
  writes a byte written to the log stands for.

For closed-loop writers (db_bench's threads, a driver's clients, a
backend serving one) the mean write is the writers' time over the writes
they made.  Untouched stretches are cut from each writer thread's sweeps:
a pair of consecutive sweeps with no window (from the attach to
WS_SETTLE_NS past the detach) between them.  Their time splits into on-CPU
(by the samples' components), runnable (sched_runq) and blocked (by the
sweeps that found the thread blocked: the syscall and file kind name the
I/O component; a futex-like wait is the engine's leader wait; a wait for a
client, idle).  Idle time is no write's; a client's time asleep outside
the writes counted (a busy handler's backoff) is its transaction's
(asleep_outside).  The writes in them are the bytes the writers wrote
there times the windows' writes per byte (the rows recorded in each
window over the writers' bytes between its open and its close), or the
same by their syncs of a log where those count the windows' rows better
(counting_unit).

The span is a writer's time per write: its own work between writes
included (key generation, a driver's bookkeeping), as db_bench's
histogram and a closed-loop client see it.  The interval (95%) comes from
resampling blocks of untouched time (BLOCK_NS), each draw at a writes-per-
byte drawn from the windows' own spread (ratio_error).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

import engines
from analysis import components, sampling, syscalls, threadtime
from analysis.symbols import RunSymbols
from runfolder import records as R
from runfolder.files import RunFolder

SOURCE = ("wall sweeps of the writer threads between windows (kernel accounting, "
          "state, bytes written), perf samples, the windows' writes per byte written")
BOOTSTRAP = 1000
SEED = 1
BLOCK_NS = 50_000_000       # the bootstrap's unit of untouched time
MIN_BLOCKS = 8              # fewer: no interval
MIN_ROWS = 100              # rows recorded inside windows: fewer, no count
MIN_SAMPLES = 20            # on-CPU samples to split on-CPU time by
MIN_RUNQ_SWEEPS = 20        # sweeps of a runnable writer to split its run-queue time by
EDGE_NS = 1_000_000         # a sweep this soon after a window's open is its edge's
SUB_NS = 20_000_000         # a window's stretches, the clusters of the ratio's error
# the share of the writers' time that must lie untouched, and the interval
# (half its width over the mean) within which the lens is trusted
# (docs/attribution.md, "The untouched lens")
MIN_UNTOUCHED_SHARE = 0.25
TRUST_HALF_WIDTH = 0.15
# writers found waiting for a client in more of their blocked time than
# this: the mean leaves that wait out, though a write's span can hold it
# (a backend inside a transaction waits for its client's next statement)
MAX_IDLE_SHARE = 0.05
# blocked in these, a thread waits for work, not in a write
IDLE_SYSCALLS = frozenset({
    "epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select",
    "pselect6", "accept", "accept4", "recvfrom", "recvmsg", "recvmmsg", "wait4",
    "waitid", "pause", "rt_sigsuspend", "rt_sigtimedwait"})
# ... and in these, on another thread or process (a lock, a condition)
WAIT_SYSCALLS = frozenset({"futex", "futex_waitv", "semop", "semtimedop",
                           "sched_yield"})
SLEEP_SYSCALLS = frozenset({"nanosleep", "clock_nanosleep"})
RUNQ = "sched_runq"
ONCPU_UNSPLIT = "on_cpu"      # on-CPU time with too few samples to split
BLOCKED_OTHER = "blocked_other"


def wall_frame(run_dir: Path) -> pd.DataFrame:
    """wall.bin as a table, sorted by thread and time (empty without it);
    user_symbol: the function a runnable thread was preempted in, where
    the sweep found one in user code ("" elsewhere)."""
    folder = RunFolder(run_dir)
    if not folder.records("ws_wall_rec").exists():
        return wall_frame_from(np.zeros(0, R.Layout.of(folder).struct_dtype("ws_wall_rec")),
                               R.Layout.of(folder))
    return wall_frame_from(R.read_records(folder, "ws_wall_rec"), R.Layout.of(folder),
                           lambda: RunSymbols(run_dir))


WALL_COLUMNS = ["ts_ns", "pid", "tid", "state", "oncpu_ns", "runq_ns", "syscw", "wchar",
                "log_syncs", "sys_nr", "sys_kind", "user_ip", "born_ns", "thread",
                "user_symbol"]
# what the writes between windows are counted by: the unit, its column in
# the sweeps (wall_frame) and in the pieces (untouched_pieces), one of it
UNIT_COLUMN = {"bytes": "wchar", "syscw": "syscw", "syncs": "log_syncs"}
UNIT_ONE = {"bytes": "byte", "syscw": "call", "syncs": "log sync"}


def wall_frame_from(w: np.ndarray, layout: R.Layout,
                    symbols: Callable[[], RunSymbols] | None = None) -> pd.DataFrame:
    """Wall records (ws_wall_rec) as wall_frame's table; symbols, where
    given, names the function each preempted thread was in (a live reader
    without them leaves user_symbol "")."""
    cols = WALL_COLUMNS
    if not len(w):
        return pd.DataFrame({c: pd.Series(dtype="int64") for c in cols})
    # born_ns: when each thread was made (-1: a folder from before it was
    # read); log_syncs: 0 in a folder from before they were counted
    df = pd.DataFrame({k: w[k].astype(np.int64) if k in w.dtype.names
                       else np.full(len(w), 0 if k == "log_syncs" else -1, np.int64)
                       for k in cols[:-2]})
    df["thread"] = [c.split(b"\0", 1)[0].decode("utf-8", "replace") for c in w["comm"]]
    runq = layout.enum_values("ws_wall_state")["WS_WALL_RUNQ"]
    pre = ((df["state"] == runq) & (df["user_ip"] != 0) & (df["sys_nr"] < 0)).to_numpy()
    names = np.full(len(df), "", dtype=object)
    if pre.any() and symbols is not None:
        sym = symbols()
        names[pre] = [sym.user(int(p), int(ip)) for p, ip in
                      zip(df["pid"].to_numpy()[pre], df["user_ip"].to_numpy()[pre])]
    df["user_symbol"] = names
    return df.sort_values(["tid", "ts_ns"], ignore_index=True)


def touched_spans(windows: pd.DataFrame, settle_ns: int) -> np.ndarray:
    """[start, end) of each window's probes, from the attach's start to
    settle_ns past the detach's end, as an (n, 2) array sorted by start."""
    if not len(windows):
        return np.zeros((0, 2), np.int64)
    start = windows["open_ns"].to_numpy(np.int64) - windows["attach_us"].to_numpy(np.int64) \
        * 1000
    end = windows["detached_ns"].to_numpy(np.int64) + \
        windows["detach_us"].to_numpy(np.int64) * 1000 + settle_ns
    return np.stack([start, end], axis=1)


def untouched_pieces(wall: pd.DataFrame, spans: np.ndarray) -> pd.DataFrame:
    """One row per pair of consecutive sweeps of a thread with no window
    between them: its time, the kernel's deltas and the state at its end."""
    cols = ["tid", "t0", "t1", "dt", "oncpu", "runq", "blocked", "wchar", "syscw",
            "log_syncs"]
    if len(wall) < 2:
        return pd.DataFrame({c: pd.Series(dtype="int64") for c in cols})
    same = wall["tid"].to_numpy()[1:] == wall["tid"].to_numpy()[:-1]
    t0 = wall["ts_ns"].to_numpy()[:-1]
    t1 = wall["ts_ns"].to_numpy()[1:]
    # (log_syncs: none in a table built without them)
    d = {k: wall[k].to_numpy()[1:] - wall[k].to_numpy()[:-1] if k in wall
         else np.zeros(len(wall) - 1, np.int64)
         for k in ("oncpu_ns", "runq_ns", "wchar", "syscw", "log_syncs")}
    ok = same & (t1 > t0)
    if len(spans):
        # a piece is touched when a span starts before its end and ends
        # after its start
        i = np.searchsorted(spans[:, 0], t1, side="left") - 1   # last span starting before t1
        ends = np.maximum.accumulate(spans[:, 1])
        ok &= ~((i >= 0) & (ends[np.maximum(i, 0)] > t0))
    dt = (t1 - t0)[ok]
    # not clipped pair by pair: a running thread's sum_exec_runtime lags
    # by up to a tick, and a wait in progress is not in run_delay yet;
    # the next pair catches up, and sums over pairs cancel the lag
    oncpu = d["oncpu_ns"][ok]
    runq = d["runq_ns"][ok]
    return pd.DataFrame({
        "tid": wall["tid"].to_numpy()[1:][ok], "t0": t0[ok], "t1": t1[ok], "dt": dt,
        "oncpu": oncpu, "runq": runq, "blocked": dt - oncpu - runq,
        "wchar": np.clip(d["wchar"][ok], 0, None), "syscw": np.clip(d["syscw"][ok], 0, None),
        "log_syncs": np.clip(d["log_syncs"][ok], 0, None),
    })


def while_writing(pieces: pd.DataFrame, col: str) -> pd.DataFrame:
    """Each thread's pieces from the first in which it wrote to the last:
    a thread that wrote only in a set-up and then waited (the SQLite
    driver's main thread, loading the database before its clients ran)
    is no writer while it waits (its wait read as transactions' time,
    1.5-1.9x the driver's own mean)."""
    if not len(pieces):
        return pieces
    wrote = pieces[pieces[col] > 0].groupby("tid").agg(lo=("t0", "min"), hi=("t1", "max"))
    span = pieces.join(wrote, on="tid")
    return pieces[(span["t0"] >= span["lo"]) & (span["t1"] <= span["hi"])].reset_index(drop=True)


def asleep_outside(wall: pd.DataFrame, spans: np.ndarray, tids: set[int],
                   dropped: pd.DataFrame, engine: str, layout: R.Layout) -> pd.DataFrame:
    """The untouched pieces of clients asleep outside the writes counted:
    a client thread found asleep (nanosleep, clock_nanosleep: a busy
    handler's backoff, a transaction waiting for its lock) at a piece's
    end, where that piece is a writer's outside its writing span (dropped:
    the writers' pieces while_writing left out), or a thread's of a traced
    process with no writer thread that bears a writer's name (the same
    program: a driver's other client).  A SQLite client that the other
    starved for the 10 s busy timeout wrote nothing while it slept:
    without its time, a DELETE run's lens read 0.47-0.49 of the driver's
    own mean with its count within 1%.  A writer process's other sleepers
    (Go's sysmon) are no clients, nor is another program (the PostgreSQL
    runner's Python, asleep while the server started)."""
    if not len(wall):
        return dropped.iloc[:0]
    busy = set(wall.loc[wall["tid"].isin(tids), "pid"])
    known = set(wall.loc[wall["tid"].isin(tids), "thread"])
    others = wall[~wall["pid"].isin(busy) & wall["thread"].isin(known)]
    others = others[[threadtime.role(n, engine) == "foreground" for n in others["thread"]]]
    p = pd.concat([dropped, untouched_pieces(others, spans)], ignore_index=True)
    if not len(p):
        return p
    end = wall.drop_duplicates(["tid", "ts_ns"]).set_index(["tid", "ts_ns"]).loc[
        list(zip(p["tid"], p["t1"]))]
    blocked = layout.enum_values("ws_wall_state")["WS_WALL_BLOCKED"]
    sleeps = [nr for nr in end["sys_nr"].unique()
              if nr >= 0 and syscalls.name(int(nr), layout) in SLEEP_SYSCALLS]
    asleep = (end["state"].to_numpy() == blocked) & end["sys_nr"].isin(sleeps).to_numpy()
    return p[asleep].reset_index(drop=True)


def writing_span(sweeps: pd.DataFrame, col: str) -> int:
    """One thread's time from the sweep before its first write to the
    sweep of its last (its sweeps in time order)."""
    v = sweeps[col].to_numpy()
    ts = sweeps["ts_ns"].to_numpy()
    grew = np.flatnonzero(np.diff(v) > 0)
    return int(ts[grew[-1] + 1] - ts[grew[0]]) if len(grew) else 0


def writers(rows_tids: np.ndarray, wall: pd.DataFrame, engine: str) -> set[int]:
    """The threads that made the recorded writes, less the engine's own
    background threads."""
    names = dict(zip(wall["tid"], wall["thread"]))
    return {int(t) for t in np.unique(rows_tids)
            if threadtime.role(names.get(int(t), ""), engine) == "foreground"}


def window_writes_per_byte(windows: pd.DataFrame, starts: np.ndarray, rows_tids: np.ndarray,
                           wall: pd.DataFrame, tids: set[int], unit: str | None = None,
                           weights: np.ndarray | None = None
                           ) -> tuple[np.ndarray, np.ndarray, str, np.ndarray, np.ndarray]:
    """Per window: the rows that began inside it, and what their threads
    passed to write syscalls from its open to its close (the wall sweeps
    at the edges; bytes, or calls where the kernel counts no bytes); which
    unit that is; and the same per SUB_NS stretch of each window (the
    clusters the ratio's error is taken over: a window holds several).  A
    thread counts in a window only where both edges are known: swept
    within EDGE_NS of its open, or born inside it (first swept after the
    open and before the close: its counts began at 0), and within EDGE_NS
    after its close; one that ended inside the window leaves its rows
    there out too.  Born inside: made after the open (the sweeps' born_ns;
    in a folder without it, first swept inside: wrong for a thread a -p
    attach met mid-window, whose counts had run for its whole life).
    unit: "syscw" to count calls even where the kernel
    counts bytes, "syncs" to count a log's syncs (UNIT_COLUMN); weights:
    each row's weight (its time, say) in place of 1."""
    k = len(windows)
    n = np.zeros(k)
    units = np.zeros(k)
    mine = wall[wall["tid"].isin(tids)]
    if unit is None:
        unit = "bytes" if (mine["wchar"] > 0).any() else "syscw"
    weight = np.ones(len(starts)) if weights is None else np.asarray(weights, np.float64)
    if not k:
        return n, units, unit, np.zeros(0), np.zeros(0)
    col = UNIT_COLUMN[unit]
    opens = windows["open_ns"].to_numpy(np.int64)
    closes = windows["close_ns"].to_numpy(np.int64)
    subs = np.maximum(np.ceil((closes - opens) / SUB_NS).astype(np.int64), 1)
    first_sub = np.concatenate([[0], np.cumsum(subs)[:-1]])
    cn = np.zeros(int(subs.sum()))
    cu = np.zeros(int(subs.sum()))
    i = np.searchsorted(opens, starts, side="right") - 1
    inside = (i >= 0) & (starts < closes[np.maximum(i, 0)])
    sub_of = np.minimum((starts - opens[np.maximum(i, 0)]) // SUB_NS,
                        subs[np.maximum(i, 0)] - 1)
    for tid, g in mine.groupby("tid", sort=False):
        ts = g["ts_ns"].to_numpy()
        v = g[col].to_numpy()
        a = np.searchsorted(ts, opens, side="left")
        b = np.searchsorted(ts, closes, side="left")
        at, bt = np.minimum(a, len(ts) - 1), np.minimum(b, len(ts) - 1)
        edge = (a < len(ts)) & (ts[at] - opens <= EDGE_NS)    # swept at the open
        born = int(g["born_ns"].iloc[0]) if "born_ns" in g else -1
        born_inside = (a == 0) & ~edge & (ts[0] < closes) & (
            (born >= opens) if born >= 0 else True)          # made inside
        ok = (b < len(ts)) & (ts[bt] - closes <= EDGE_NS) & (edge | born_inside) & (b >= a)
        mine_rows = inside & (rows_tids == tid)
        for w in np.flatnonzero(ok):
            start = 0 if born_inside[w] else v[at[w]]
            # the counts at each stretch's edge, read between the sweeps
            xs = np.concatenate([[opens[w]], ts[(ts > opens[w]) & (ts < closes[w])],
                                 [closes[w]]])
            vs = np.concatenate([[start], v[(ts > opens[w]) & (ts < closes[w])], [v[bt[w]]]])
            edges = np.minimum(opens[w] + SUB_NS * np.arange(subs[w] + 1), closes[w])
            at_edges = np.interp(edges, xs, vs)
            c = first_sub[w] + np.arange(subs[w])
            cu[c] += np.diff(at_edges)
            r = mine_rows & (i == w)
            cn[c] += np.bincount(sub_of[r], weights=weight[r], minlength=subs[w])[:subs[w]]
            n[w] += float(weight[r].sum())
            units[w] += float(v[bt[w]] - start)
    return n, units, unit, cn, cu


def counting_unit(windows: pd.DataFrame, starts: np.ndarray, rows_tids: np.ndarray,
                  wall: pd.DataFrame, tids: set[int]
                  ) -> tuple[np.ndarray, np.ndarray, str, np.ndarray, np.ndarray]:
    """window_writes_per_byte's counts by the unit that counts the windows'
    rows best: the kernel's (bytes, else calls), or the writers' log syncs
    where they synced a log and their writes per sync vary less across the
    windows' stretches (ratio_spread) than per byte.  SQLite's WAL at
    synchronous=full is synced once a commit, while a commit's bytes are
    the pages it changed: a new-order writes several times a payment's."""
    best = window_writes_per_byte(windows, starts, rows_tids, wall, tids)
    mine = wall[wall["tid"].isin(tids)]
    if "log_syncs" not in mine or not len(mine) or \
            not (mine.groupby("tid")["log_syncs"].agg(lambda v: v.max() - v.min()) > 0).any():
        return best
    syncs = window_writes_per_byte(windows, starts, rows_tids, wall, tids, unit="syncs")
    if syncs[0].sum() >= MIN_ROWS and syncs[1].sum() > 0 and \
            ratio_spread(syncs[3], syncs[4]) < ratio_spread(best[3], best[4]):
        return syncs
    return best


def runq_before(a: np.ndarray, d: np.ndarray, t: np.ndarray) -> np.ndarray:
    """One thread's run-queue time before each of t, its waits [a, a + d)
    sorted by a and not overlapping."""
    if not len(a):
        return np.zeros(len(t))
    cum = np.concatenate([[0.0], np.cumsum(d, dtype=np.float64)])
    j = np.searchsorted(a, t, side="right") - 1
    jj = np.maximum(j, 0)
    return np.where(j >= 0, cum[jj] + np.clip(t - a[jj], 0, d[jj]), 0.0)


def io_per_call(io: pd.DataFrame | None, runq: pd.DataFrame | None, windows: pd.DataFrame,
                wall: pd.DataFrame, tids: set[int], engine: str, layout: R.Layout
                ) -> dict[str, dict[str, float]]:
    """Per write call the writers made inside the windows, the time each of
    the engine's I/O components took there, exact from the windows'
    syscall records: "time" (the syscalls' time, less the run-queue waits
    inside them: on the CPU and blocked) and "runq" (those waits).  What
    the probes distort little: a sync takes the device's time, and a write
    call is one group's (a slowed leader's larger groups make fewer calls,
    which the untouched time's own calls count).  The wall sweeps cannot
    give it: a sweep is the collector's, and it runs late where the
    writers hold the CPUs, which on RocksDB's synced groups is while a
    leader syncs (they saw a writer in fdatasync half as often as bpftrace
    timed it there).  Empty without syscall records."""
    if io is None or not len(io) or not len(windows):
        return {}
    io = io[io["tid"].isin(tids)]
    classes = [syscalls.io_class(str(n), layout) for n in io["syscall"]]
    comp = [components.io_component(c, str(k), engine, layout) if c else None
            for c, k in zip(classes, io["kind"])]
    io = io.assign(comp=comp).dropna(subset=["comp"])
    if not len(io):
        return {}
    t0 = io["ts_ns"].to_numpy(np.int64)
    t1 = t0 + io["lat_ns"].to_numpy(np.int64)
    waited = np.zeros(len(io))
    if runq is not None and len(runq):
        for tid, g in runq[runq["tid"].isin(tids)].groupby("tid", sort=False):
            m = (io["tid"] == tid).to_numpy()
            if not m.any():
                continue
            g = g.sort_values("ts_ns")
            d = g["dur_ns"].to_numpy(np.float64)
            a = g["ts_ns"].to_numpy(np.float64) - d
            waited[m] = runq_before(a, d, t1[m]) - runq_before(a, d, t0[m])
    lat = io["lat_ns"].to_numpy(np.float64)
    waited = np.minimum(waited, lat)
    tid_arr = io["tid"].to_numpy()
    out: dict[str, dict[str, float]] = {}
    for c in sorted(set(io["comp"])):
        m = (io["comp"] == c).to_numpy()
        n_t, calls, _, _, _ = window_writes_per_byte(
            windows, t0[m], tid_arr[m], wall, tids, unit="syscw", weights=lat[m] - waited[m])
        n_q, _, _, _, _ = window_writes_per_byte(
            windows, t0[m], tid_arr[m], wall, tids, unit="syscw", weights=waited[m])
        n_k, _, _, _, _ = window_writes_per_byte(windows, t0[m], tid_arr[m], wall, tids,
                                                 unit="syscw")
        if calls.sum() > 0 and n_k.sum() > 0:
            out[c] = {"time": float(n_t.sum() / calls.sum()),
                      "runq": float(n_q.sum() / calls.sum()),
                      "syscalls": int(n_k.sum()), "calls": float(calls.sum())}
    return out


def in_write_share(windows: pd.DataFrame, rows: pd.DataFrame, wall: pd.DataFrame,
                   tids: set[int], outside_ns: float) -> tuple[float, int]:
    """The share of a writer's time inside its writes, from the windows: per
    window and writer thread there all of it (swept before its open and
    after its close), its rows' compensated time within the window over
    the time from its first row there to the close, less what the probes took (their cost inside the
    rows, dur_ns - dur_adj_ns, and outside_ns a row around it: a probe
    pair's cost outside its own span).  What the probes distort little:
    the time between writes has no probe in it.  Returns (share, rows it
    rests on); nan with none."""
    if not len(windows) or not len(rows):
        return float("nan"), 0
    opens = windows["open_ns"].to_numpy(np.int64)
    closes = windows["close_ns"].to_numpy(np.int64)
    starts = rows["start_ns"].to_numpy(np.int64)
    dur_all = rows["dur_ns"].to_numpy(np.float64)
    adj_all = rows["dur_adj_ns"].to_numpy(np.float64)
    who = rows["tid"].to_numpy()
    i = np.searchsorted(opens, starts, side="right") - 1
    inside = (i >= 0) & (starts < closes[np.maximum(i, 0)])
    in_write = spent = span = 0.0
    used = 0
    for tid, g in wall[wall["tid"].isin(tids)].groupby("tid", sort=False):
        ts = g["ts_ns"].to_numpy()
        whole = (np.searchsorted(ts, opens, side="left") > 0) & \
            (np.searchsorted(ts, closes, side="left") < len(ts))
        m = inside & (who == tid) & whole[np.maximum(i, 0)]
        if not m.any():
            continue
        w = i[m]
        dur, adj = dur_all[m], adj_all[m]
        kept = np.clip(np.minimum(starts[m] + dur, closes[w]) - starts[m], 0, None) \
            / np.maximum(dur, 1.0)   # the part within the window
        in_write += float((adj * kept).sum())
        spent += float(np.clip(dur - adj, 0, None).dot(kept)) + outside_ns * int(m.sum())
        # each window from the thread's first write in it (one in flight at
        # the open is no row: its time there would read as outside writes)
        first = pd.Series(starts[m]).groupby(w).min()
        span += float((closes[first.index.to_numpy()] - first.to_numpy()).sum())
        used += int(m.sum())
    if not used or span - spent <= 0:
        return float("nan"), used
    return min(in_write / (span - spent), 1.0), used


def ratio_error(n: np.ndarray, units: np.ndarray) -> float:
    """The relative standard error of the windows' writes per unit (a ratio
    estimator over clusters, SUB_NS stretches of the windows): the spread
    of the clusters' own ratios, each weighted by its units, and no less
    than a count of that many rows would have (1/sqrt(rows)).  With one
    window it holds the spread within that moment of the run, not between
    moments.  A bootstrap over two or
    three windows read intervals of +-155% from the draws that took a
    12-row window three times (SQLite)."""
    spread = ratio_spread(n, units)
    total = float(n[(n > 0) & (units > 0)].sum())
    if spread == float("inf"):
        return spread
    return float(max(spread, 1 / np.sqrt(total)))


def ratio_spread(n: np.ndarray, units: np.ndarray) -> float:
    """ratio_error without its floor: the clusters' own spread (0 with
    fewer than two; inf with no rows)."""
    keep = (n > 0) & (units > 0)
    n, units = n[keep], units[keep]
    total = float(n.sum())
    if not total:
        return float("inf")
    r = total / float(units.sum())
    k = len(n)
    if k < 2:
        return 0.0
    se = np.sqrt(k / (k - 1) * float(((n - r * units) ** 2).sum())) / float(units.sum())
    return float(se / r)


def blocked_component(nr: int, kind: str, engine: str, layout: R.Layout) -> str:
    """What a writer blocked in this syscall on this kind of file waits for:
    the engine's I/O component, idle (a client), the engine's leader wait
    (a lock or condition), or blocked_other."""
    name = syscalls.name(nr, layout) if nr >= 0 else ""
    io = syscalls.io_class(name, layout)
    if io:
        comp = components.io_component(io, kind, engine, layout)
        if comp:
            return comp
    if name in IDLE_SYSCALLS:
        return "idle"
    if name in WAIT_SYSCALLS:
        return engines.get(engine).leader_wait or BLOCKED_OTHER
    return BLOCKED_OTHER


def runq_component(nr: int, kind: str, symbol: str, engine: str,
                   layout: R.Layout) -> str:
    """Where a runnable writer's wait for a CPU belongs: the syscall it was
    woken in (as blocked_component names it; a sleep is other), else the
    component of the function it was preempted in (the samples' rules)."""
    if nr >= 0:
        c = blocked_component(nr, kind, engine, layout)
        return "other" if c in ("idle", BLOCKED_OTHER) else c
    return sampling.classify_symbol(symbol) if symbol and symbol[0] != "[" else "other"


def shares(labels: pd.Series) -> dict[str, float]:
    counts = labels.value_counts()
    total = float(counts.sum())
    return {str(c): float(v) / total for c, v in counts.items()} if total else {}


def oncpu_components(samples: pd.DataFrame, engine: str) -> pd.Series:
    """Each sample's component; one in the kernel in a wait syscall (a
    futex, a yield: the waiting writer's own CPU time) is the engine's
    leader wait, as its rows count it."""
    comp = samples["component"].astype("object").copy()
    wait = engines.get(engine).leader_wait
    if wait and "symbol" in samples:
        names = samples["symbol"].astype("object").str.strip("[]")
        comp[(comp == "kernel") & names.isin(WAIT_SYSCALLS)] = wait
    return comp


def in_pieces(ts: np.ndarray, tids: np.ndarray, pieces: pd.DataFrame) -> np.ndarray:
    """Which of (ts, tid) fall inside an untouched piece of their thread."""
    out = np.zeros(len(ts), bool)
    for tid, g in pieces.groupby("tid", sort=False):
        m = tids == tid
        if not m.any():
            continue
        t0, t1 = g["t0"].to_numpy(), g["t1"].to_numpy()
        order = np.argsort(t0)
        t0, t1 = t0[order], t1[order]
        j = np.searchsorted(t0, ts[m], side="right") - 1
        out[np.flatnonzero(m)] = (j >= 0) & (ts[m] < t1[np.maximum(j, 0)])
    return out


def lens(wall: pd.DataFrame, engine: str, windows: pd.DataFrame, rows: pd.DataFrame,
         samples: pd.DataFrame | None, layout: R.Layout, outside_ns: float = 0.0,
         io: pd.DataFrame | None = None, runq: pd.DataFrame | None = None) -> dict[str, Any]:
    """summary.json's untouched: the lens's mean write, its components and
    interval, how each was derived, or why there is none ("why").  wall:
    wall_frame's table; windows: analysis/windows.py's; rows: the recorded
    rows' start_ns, tid, dur_ns and dur_adj_ns; samples: on-CPU samples
    (ts_ns, tid, component, symbol); outside_ns: what a row's probe pair
    costs outside its span (in_write_share); io, runq: the syscall records
    (ts_ns, tid, lat_ns, syscall, kind) and run-queue waits (ts_ns, tid,
    dur_ns) of the touched time, for the I/O's time per write call
    (io_per_call; without them, the sweeps split the I/O's too)."""
    starts = rows["start_ns"].to_numpy(np.int64)
    rows_tids = rows["tid"].to_numpy()
    out: dict[str, Any] = {"source": SOURCE, "span": (
        "a writer thread's time per write, its own work between writes included "
        "(as db_bench's histogram and a closed-loop client measure it)")}
    if not len(wall):
        return {**out, "available": False, "why": "no wall sweeps (--wall-hz 0, or a "
                "run folder from before them)"}
    if not len(windows):
        return {**out, "available": False, "why": "no windows: nothing tells how many "
                "writes the untouched time held"}
    tids = writers(rows_tids, wall, engine)
    if not tids:
        return {**out, "available": False, "why": "no recorded write names its thread"}
    settle = layout.enum_values("ws_tuning").get("WS_SETTLE_NS", 80_000_000)
    spans = touched_spans(windows, settle)
    every = untouched_pieces(wall[wall["tid"].isin(tids)], spans)
    n_win, units_win, unit, n_sub, units_sub = counting_unit(
        windows, starts, rows_tids, wall, tids)
    col = UNIT_COLUMN[unit]
    pieces = while_writing(every, col)
    mine = wall[wall["tid"].isin(tids)]
    all_time = float(sum(writing_span(g, col) for _, g in mine.groupby("tid")))
    # clients asleep outside the writing spans: their waits are their
    # transactions' (no writes in them: the count stays)
    kept = pd.MultiIndex.from_frame(pieces[["tid", "t1"]])
    dropped = every[~pd.MultiIndex.from_frame(every[["tid", "t1"]]).isin(kept)]
    slept = asleep_outside(wall, spans, tids, dropped, engine, layout)
    if len(slept):
        pieces = pd.concat([pieces, slept], ignore_index=True)
        all_time += float(slept["dt"].sum())
    untouched_time = float(pieces["dt"].sum())
    if n_win.sum() < MIN_ROWS or units_win.sum() <= 0:
        return {**out, "available": False, "why": f"too few writes inside windows to count "
                f"by ({int(n_win.sum())} rows whose threads were swept at both of their "
                f"window's edges, {units_win.sum():.0f} {unit}; it takes {MIN_ROWS})"}
    if not len(pieces) or pieces[col].sum() <= 0:
        return {**out, "available": False, "why": "no untouched stretch of a writer "
                "with writes in it"}
    per_unit = n_win.sum() / units_win.sum()

    # blocked time's split, from the sweeps that found a writer blocked
    # at a piece's end (the state then: a wall-clock sample)
    ends = wall[wall["tid"].isin(set(pieces["tid"]))].set_index(["tid", "ts_ns"])
    end_rows = ends.loc[list(zip(pieces["tid"], pieces["t1"]))]
    kinds = layout.file_kinds()
    blocked = end_rows[end_rows["state"] == layout.enum_values("ws_wall_state")[
        "WS_WALL_BLOCKED"]]
    blabels = pd.Series([blocked_component(int(nr), kinds.get(int(k), "other"), engine, layout)
                         for nr, k in zip(blocked["sys_nr"], blocked["sys_kind"])],
                        dtype="object")
    bshare = shares(blabels)
    idle = bshare.get("idle", 0.0)
    # the I/O's time per write call, from the windows' own syscalls; the
    # sweeps then split only the rest of the blocked time
    per_call = io_per_call(io, runq, windows, wall, tids, engine, layout)
    if per_call:
        rest = blabels[~blabels.isin(list(per_call) + ["idle"])]
        bshare = {**shares(rest), "idle": idle} if len(rest) else {"idle": idle}
    # run-queue time's split by where it was spent waiting: the component
    # the sweeps that found a writer runnable at a piece's end had it in
    # (PerfContext's wall-clock timers hold a preempted writer's wait in
    # the span it was in; the lens keeps sched_runq and says how it splits)
    runnable = end_rows[end_rows["state"] == layout.enum_values("ws_wall_state")[
        "WS_WALL_RUNQ"]]
    rlabels = pd.Series([runq_component(int(nr), kinds.get(int(k), "other"), str(sym),
                                        engine, layout)
                         for nr, k, sym in zip(runnable["sys_nr"], runnable["sys_kind"],
                                               runnable.get("user_symbol",
                                                            [""] * len(runnable)))],
                        dtype="object")
    rshare = shares(rlabels) if len(rlabels) >= MIN_RUNQ_SWEEPS else {}
    if per_call and rshare:
        runq_all = float(pieces["runq"].sum())
        calls_all = float(pieces["syscw"].sum())
        io_q = {c: min(calls_all * v["runq"] / runq_all, 1.0) if runq_all > 0 else 0.0
                for c, v in per_call.items()}
        scale = min(1.0, 1.0 / sum(io_q.values())) if sum(io_q.values()) > 0 else 1.0
        io_q = {c: v * scale for c, v in io_q.items()}
        # the rest by the sweeps outside the I/O; with none there, other
        rest_q = shares(rlabels[~rlabels.isin(list(per_call))]) or {"other": 1.0}
        left = 1.0 - sum(io_q.values())
        rshare = {c: v for c, v in io_q.items() if v > 0}
        for c, v in rest_q.items():
            rshare[c] = rshare.get(c, 0.0) + left * v
    # on-CPU time's split, from the samples taken inside the pieces
    oshare: dict[str, float] = {}
    nsamp = 0
    if samples is not None and len(samples):
        s = samples[samples["tid"].isin(tids)]
        s = s[in_pieces(s["ts_ns"].to_numpy(), s["tid"].to_numpy(), pieces)]
        nsamp = len(s)
        if nsamp >= MIN_SAMPLES:
            oshare = shares(oncpu_components(s, engine))
    if not oshare:
        oshare = {ONCPU_UNSPLIT: 1.0}

    def estimate(p: pd.DataFrame, ratio: float) -> tuple[float, dict[str, float]]:
        oncpu, runq, blk = float(p["oncpu"].sum()), float(p["runq"].sum()), \
            float(p["blocked"].sum())
        writes = float(p[col].sum()) * ratio
        if writes <= 0:
            return float("nan"), {}
        comps: dict[str, float] = {}
        for c, f in oshare.items():
            comps[c] = comps.get(c, 0.0) + oncpu * f
        comps[RUNQ] = comps.get(RUNQ, 0.0) + runq
        busy = blk * (1 - idle)
        if per_call:
            # each I/O component's time at the windows' time per call, less
            # its on-CPU part, which the samples hold already; taken from
            # the blocked time, and what the blocked time cannot hold (a
            # sync's own kernel time) from on-CPU time too few samples
            # left unsplit (with enough, they name a syscall's own samples)
            calls = float(p["syscw"].sum())
            extra = {c: max(calls * v["time"] - oncpu * oshare.get(c, 0.0), 0.0)
                     for c, v in per_call.items()}
            taken = sum(extra.values())
            scale = min(1.0, busy / taken) if taken > 0 else 0.0
            for c, v in extra.items():
                comps[c] = comps.get(c, 0.0) + v * scale
            busy = max(busy - taken * scale, 0.0)
            left = taken * (1 - scale)
            unsplit = comps.get(ONCPU_UNSPLIT, 0.0)
            if left > 0 and unsplit > 0:
                moved = min(left, unsplit)
                for c, v in extra.items():
                    comps[c] += moved * v / taken
                comps[ONCPU_UNSPLIT] = unsplit - moved
        others = {c: f for c, f in bshare.items() if c != "idle"}
        if others:
            norm = sum(others.values())
            for c, f in others.items():
                comps[c] = comps.get(c, 0.0) + busy * f / norm
        elif busy > 0:
            comps[BLOCKED_OTHER] = comps.get(BLOCKED_OTHER, 0.0) + busy
        comps = {c: v / writes for c, v in comps.items()}
        return float(sum(comps.values())), comps

    mean, comps = estimate(pieces, per_unit)
    share_in, share_rows = in_write_share(windows, rows, wall, tids, outside_ns)
    # the share is of all the writers' time, idle included (a backend's
    # wait for its client inside a transaction is in its row)
    whole_per_write = float(pieces["dt"].sum()) / (float(pieces[col].sum()) * per_unit)
    # the interval: blocks of untouched time, and windows where enough
    blocks = (pieces["t0"] // BLOCK_NS).to_numpy()
    uniq, inv = np.unique(blocks, return_inverse=True)
    lo = hi = float("nan")
    if len(uniq) >= MIN_BLOCKS:
        rng = np.random.default_rng(SEED)
        sums = {k: np.bincount(inv, weights=pieces[k].to_numpy(float), minlength=len(uniq))
                for k in ("oncpu", "runq", "blocked", col)}
        busy = sums["oncpu"] + sums["runq"] + sums["blocked"] * (1 - idle)
        picks = rng.integers(0, len(uniq), size=(BOOTSTRAP, len(uniq)))
        ratio = per_unit * np.clip(
            1 + ratio_error(n_sub, units_sub) * rng.standard_normal(BOOTSTRAP), 0.05, None)
        est = busy[picks].sum(axis=1) / np.maximum(sums[col][picks].sum(axis=1) * ratio,
                                                    1e-9)
        lo, hi = (float(x) for x in np.percentile(est, [2.5, 97.5]))
    writes_untouched = float(pieces[col].sum()) * per_unit
    # every write of the traced interval: the writers' bytes from their
    # first sweep to their last, at the same writes per byte
    written = float(sum(g[col].iloc[-1] - g[col].iloc[0] for _, g in mine.groupby("tid")))
    half = max(mean - lo, hi - mean) / mean if mean and lo == lo else float("inf")
    share = untouched_time / all_time if all_time else 0.0
    share_ok = share >= MIN_UNTOUCHED_SHARE
    out.update({
        "writer_threads": len(tids), "unit": unit,
        # clients asleep outside the writes counted (asleep_outside)
        "asleep_s": float(slept["dt"].sum()) / 1e9,
        "asleep_threads": int(slept["tid"].nunique()) if len(slept) else 0,
        "untouched_s": untouched_time / 1e9,
        "untouched_share": untouched_time / all_time if all_time else 0.0,
        "window_rows": int(n_win.sum()), "window_units": float(units_win.sum()),
        "available": True,
        "mean_ns": mean, "lo_ns": lo, "hi_ns": hi,
        "components": dict(sorted(comps.items(), key=lambda kv: -kv[1])),
        "writes_untouched": writes_untouched,
        "writes_total": written * per_unit,
        # the write itself, from its start to its end (the rows' span): the
        # mean less the writer's own work between writes, by the windows
        "in_write_share": share_in, "in_write_rows": share_rows,
        "in_write_mean_ns": whole_per_write * share_in if share_in == share_in else None,
        "writes_per_unit": per_unit, "windows": int(len(n_win)),
        "blocks": int(len(uniq)),
        "oncpu_samples": int(nsamp), "blocked_sweeps": int(len(blabels)),
        "blocked_split": bshare, "idle_share_of_blocked": idle,
        # sched_runq by where the writer waited (none: too few sweeps)
        "runq_split": rshare, "runq_sweeps": int(len(rlabels)),
        # the I/O's time and run-queue waits per write call, from the
        # windows' syscalls (the sweeps split the rest)
        "io_per_call": per_call,
        "derived": (f"mean = writers' untouched time ({untouched_time / 1e9:.2f} thread-s, "
                    + (f"{slept['dt'].sum() / 1e9:.2f} of them clients asleep outside any "
                       "write, " if len(slept) else "")
                    + f"idle less) / writes there ({writes_untouched:,.0f}: "
                    f"{pieces[col].sum():,.0f} {unit} x {per_unit:.4g} writes per "
                    f"{UNIT_ONE[unit]}, from {int(n_win.sum())} "
                    f"rows in {len(n_win)} windows); on-CPU split by {nsamp} samples, "
                    + ("the I/O's time at the windows' per write call ("
                       + ", ".join(f"{c} {v['time'] / 1e3:.1f} us from {v['syscalls']} "
                                   f"syscalls" for c, v in per_call.items())
                       + f"), the rest of blocked by {len(blabels)} sweeps"
                       if per_call else f"blocked by {len(blabels)} sweeps")
                    + f", run-queue waits placed by {len(rlabels)}"),
        "trusted": bool(share_ok and half <= TRUST_HALF_WIDTH and idle <= MAX_IDLE_SHARE),
        "distrust": None,
    })
    if not out["trusted"]:
        out["distrust"] = (f"only {share * 100:.0f}% of the writers' time "
                           f"was untouched (it takes {MIN_UNTOUCHED_SHARE * 100:.0f}%)"
                           if not share_ok else
                           f"its writers waited for a client in {idle * 100:.0f}% of their "
                           "blocked time, which it leaves out, and a write's span can "
                           f"hold (it takes {MAX_IDLE_SHARE * 100:.0f}% or less)"
                           if idle > MAX_IDLE_SHARE else
                           f"its interval is +-{half * 100:.0f}% (it takes "
                           f"{TRUST_HALF_WIDTH * 100:.0f}%)" if half != float("inf") else
                           "too few blocks of untouched time for an interval")
    return out
