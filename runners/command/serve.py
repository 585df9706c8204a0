"""walscope serve: attach to a running server (-p PID, or --name NAME,
followed across restarts) and keep its write latency, by component, at an
HTTP endpoint (/metrics: Prometheus' text format, or OpenMetrics with
exemplars for a scraper that asks), until it stops (-p), SIGTERM or Ctrl-C
comes, or --duration passes.

It traces as `walscope trace -p` does, within the same budget (the
default mode); a feeder thread reads the records the collector appends,
compensates them as the analysis does (analysis/writes.py) and adds them
to the metrics (viz/openmetrics.py).  What it serves is what the rows say:
the rows recorded (every write while that is cheap, windows within the
budget when not), their durations and components, and the WAL syncs and
bytes the tracer saw; nothing else of the process (no file paths, no
query text).  It listens on 127.0.0.1 unless told otherwise.

What stays on disk (runners/command/retention.py): the slow writes, whole,
in run folders OUTPUT/slow-<UTC> under --max-disk, the collector's own
folder (OUTPUT/spool) given back as it is read; or, with --keep-all, one
run folder finished as `trace -p` finishes it.
"""
from __future__ import annotations

import argparse
import fcntl
import grp
import http.server
import os
import shutil
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pandas as pd

from analysis import components, syscalls
from analysis.windows import LiveWriteSyscalls
from analysis.compensation import Calibration, load as load_calibration
from analysis.writes import writes_frame_from
from runfolder import records as R
from collectors import procfs, symbolize
from runfolder.files import LOG_SYNC_FUNCTIONS, RunFolder
from runners.command import defaults
from runners.command.cli import budget_share
from runners.command.collect import Collected, Interrupts, collect
from runners.command.plan import (Plan, TraceError, TraceOptions, claim_run_dir,
                                  default_run_dir, prepare, unused_run_dir)
from runners.command.record import finish, start_folder, write_run_info
from runners.command import retention
from runners.command.live_lens import LiveLens, RowTotals
from runners.command.retention import Retainer, RetentionError, Threshold
from viz.openmetrics import OPENMETRICS, TEXT, Exemplar, Metrics, wants_openmetrics

DEFAULT_LISTEN = "127.0.0.1:9464"
INTERVAL_S = 1.0      # how often the records are read
DEFAULT_KEEP = "p99.9"
DEFAULT_MAX_DISK = "1G"
DEFAULT_ROTATE_S = 3600.0
SPOOL = "spool"       # the collector's own run folder, given back as it is read
# the process label of the counters of several processes (-p -p, --all):
# the collector counts them together
SEVERAL = "all"
UNKNOWN = "ended"     # the process label of one that ended before serve read its name
# --name: a process this young is not taken for the server yet (pg_ctl's
# checks run a short-lived `postgres` before the postmaster)
SETTLED_S = 1.0
FORGET_S = 60.0       # an ended process's name is kept this long after its last record
LENS_EVERY_S = 10.0   # how often the headline of the last minute is asked for


class ServeError(RuntimeError):
    """Bad input or a port in use: one line for the user."""


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ServeError(f"--listen {text}: give HOST:PORT (e.g. {DEFAULT_LISTEN})")
    return host.strip("[]") or "127.0.0.1", int(port)


def start_http(listen: str, metrics: Metrics) -> http.server.ThreadingHTTPServer:
    """The endpoint, serving in a daemon thread: /metrics, nothing else."""
    host, port = parse_listen(listen)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:   # noqa: N802 (http.server's name)
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404, "only /metrics")
                return
            om = wants_openmetrics(self.headers.get("Accept"))
            body = metrics.exposition(openmetrics=om).encode()
            self.send_response(200)
            self.send_header("Content-Type", OPENMETRICS if om else TEXT)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:   # quiet: a scrape a second
            pass

    class Server(http.server.ThreadingHTTPServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        daemon_threads = True

    try:
        server = Server((host, port), Handler)
    except OSError as e:
        raise ServeError(f"--listen {listen}: {e.strerror}") from None
    threading.Thread(target=server.serve_forever, name="walscope-metrics",
                     daemon=True).start()
    return server


def process_name(pid: int, names: dict[int, str]) -> str:
    """A process's name (its comm), kept once read: it may be gone later."""
    if pid not in names:
        try:
            names[pid] = Path(f"/proc/{pid}/comm").read_text().strip() or UNKNOWN
        except OSError:     # ended before its first records were read: one label
            names[pid] = UNKNOWN    # for all such (not a series per pid)
    return names[pid]


class Feeder:
    """Reads what the collector appends to the run folder and adds it to
    the metrics, every INTERVAL_S and once more at the end."""

    def __init__(self, run_dir: Path, metrics: Metrics, engine: str, process: str,
                 counted: Callable[[str], str | None], interval: float = INTERVAL_S,
                 retainer: Retainer | None = None) -> None:
        self.folder = RunFolder(run_dir)
        self.metrics = metrics
        self.engine = engine          # the WAL's I/O of a process with no rows yet
        self.process = process        # the served process's name
        # the engine whose writes ("rows") or log syncs ("log_syncs") a
        # probe counts, windows or not (exact), if one was found
        self.counted = counted
        self.interval = interval
        self.layout = R.Layout.of(self.folder)
        self.cal: Calibration = load_calibration(run_dir)
        self.ncpu = os.cpu_count() or 0
        # the slow writes kept whole, the spool given back behind the reader
        # (every record file read, not only the writes and syscalls served)
        self.retainer = retainer
        # the totals a process traced before left (a server restarted, --name):
        # this collector's counters start from 0, the served counters go on
        self.base = metrics.counter_values()
        self.offsets = {s: 0 for s in (retention.STRUCTS if retainer else
                                       ("ws_write_rec", "ws_io_rec", "ws_wall_rec"))}
        # the headline of the last minute (the rows', or the untouched lens's)
        self.lens = LiveLens(self.layout, self.cal)
        self.lens_at = 0.0            # when it was last asked (monotonic s)
        self.lens_failed = False
        self.late_lines: list[str] = []   # windows.tsv's, handed on a read late
        self.mono_to_unix_s = (retainer.mono_to_unix_ns if retainer else 0) / 1e9
        self.names: dict[int, str] = {}
        self.engine_of_pid: dict[int, str] = {}   # the WAL's I/O names no engine
        # when each pid's records last came: an ended process is forgotten
        # FORGET_S after (--all meets many; a late record of one is labelled
        # by its pid)
        self.last_seen: dict[int, float] = {}
        self.totals: dict[tuple[str, str], RowTotals] = {}
        # the write syscalls in and between windows (windows.tsv, read on)
        self.gap_writes = LiveWriteSyscalls()
        self.windows_offset = 0
        self.failed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="walscope-feeder",
                                        daemon=True)
        self.engine_of = self.layout.engine_names()    # records' engine -> name
        self.wal = next((v for v, k in self.layout.file_kinds().items() if k == "wal"), -1)
        self.sync_nrs = [syscalls.number(n, self.layout) for n in syscalls.syncs(self.layout)]
        self.write_nrs = [syscalls.number(n, self.layout) for n in syscalls.writes(self.layout)]

    def start(self) -> "Feeder":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._read_or_say()
        # the last headline, with every line read, whenever the one before was
        self.lens.add_lines(self.late_lines)
        self.late_lines = []
        self.lens_at = 0.0
        self._headlines()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._read_or_say()

    def _read_or_say(self) -> None:
        """read(); an error is said once and shown (walscope_feeder_ok 0),
        never raised: the endpoint and the run folder outlive it."""
        try:
            self.read()
            ok = 1
        except Exception as e:   # noqa: BLE001 (a thread's last word)
            if not self.failed:
                print(f"walscope serve: reading the records: {type(e).__name__}: {e} "
                      "(the metrics stop here; the run folder, or what is kept, stays)",
                      file=sys.stderr, flush=True)
            self.failed, ok = True, 0
        self.metrics.set_gauge("feeder_ok", (), ok)

    def read(self) -> None:
        self._writes()
        self._io()
        self._wall()
        self._forget_ended()
        self._counters()
        self._estimate()
        self._headlines()
        if self.retainer is not None:
            for struct in retention.STRUCTS:
                if struct not in ("ws_write_rec", "ws_io_rec", "ws_wall_rec"):
                    self._others(struct)
            self.retainer.step(dict(self.offsets))
            gone, self.retainer.removed_names = self.retainer.removed_names, []
            self.metrics.forget_exemplars(gone)     # removed to hold the cap

    def _wall(self) -> None:
        """The wall sweeps, for the untouched lens."""
        for recs in self._batches("ws_wall_rec"):
            self.lens.add_wall(recs)

    def _headlines(self, now: float | None = None) -> None:
        """Each engine's headline of the last minute, every LENS_EVERY_S:
        the lens it takes (walscope_lens 1, the other 0), each lens's mean,
        the components of the one taken, and whether it is trusted; a
        series no longer in the answer goes.  An error here is said once
        and leaves the rest of the read alone."""
        now = time.monotonic() if now is None else now
        if now - self.lens_at < LENS_EVERY_S:
            return
        self.lens_at = now
        try:
            for engine in list(self.lens.rows):
                h = self.lens.headline(engine)
                if h is not None:
                    self._headline(engine, h)
        except Exception as e:   # noqa: BLE001 (the metrics and retention go on)
            if not self.lens_failed:
                print(f"walscope serve: the headline: {type(e).__name__}: {e} (its gauges "
                      "stop here)", file=sys.stderr, flush=True)
            self.lens_failed = True

    def _headline(self, engine: str, h: dict) -> None:
        labels = (("engine", engine), ("process", self.process))
        means = {h["lens"]: h["mean_ns"]}
        if h.get("other") is not None:
            means[h["other"]["lens"]] = h["other"]["mean_ns"]
        means = {k: v for k, v in means.items() if v == v}     # (not NaN)
        for lens in ("rows", "untouched"):
            self.metrics.set_gauge("lens", (*labels, ("lens", lens)), int(lens == h["lens"]))
            if lens in means:
                self.metrics.set_gauge("write_mean_seconds", (*labels, ("lens", lens)),
                                       means[lens] / 1e9)
        self.metrics.drop_gauges("write_mean_seconds", labels,
                                 {(*labels, ("lens", k)) for k in means})
        comps = {(*labels, ("component", c)): ns for c, ns in h["components"].items()}
        for key, ns in comps.items():
            self.metrics.set_gauge("write_component_mean_seconds", key, ns / 1e9)
        self.metrics.drop_gauges("write_component_mean_seconds", labels, set(comps))
        self.metrics.set_gauge("headline_trusted", labels, int(bool(h["trusted"])))

    def _others(self, struct: str) -> None:
        """Records the metrics do not read, for the retained folders (which
        _batches hands them)."""
        for _ in self._batches(struct):
            pass

    def _batches(self, struct: str) -> Iterator[np.ndarray]:
        """The records of one type written since the last read, a batch at
        a time, each handed to the retainer too."""
        while True:
            recs, self.offsets[struct] = R.read_new(self.folder, struct, self.offsets[struct],
                                                    self.layout)
            if not len(recs):
                return
            if self.retainer is not None:
                self.retainer.add(struct, recs)
            yield recs

    def _forget_ended(self) -> None:
        """The names and engines of processes that ended FORGET_S ago or
        more (the maps stay as large as the processes alive lately)."""
        now = time.monotonic()
        for pid in [p for p, t in self.last_seen.items() if now - t >= FORGET_S]:
            if procfs.proc_stat(pid) is None:
                del self.last_seen[pid]
                self.names.pop(pid, None)
                self.engine_of_pid.pop(pid, None)
            else:
                self.last_seen[pid] = now      # alive: asked again in FORGET_S

    def _counters(self) -> None:
        """The collector's counters now (counters.json): the writes an
        engine's counting probe saw, and the events lost, as totals."""
        live = self.folder.live_counters()
        if not live:
            return
        got = dict(zip(self.layout.counter_names(), live.get("counters", [])))
        for kind, counter, total in (("rows", "row_marks", "writes_total"),
                                     ("log_syncs", "wal_sync_marks", "wal_syncs_total")):
            engine = self.counted(kind)
            if kind == "log_syncs" and self._log_syncs_failed():
                engine = None       # a count that missed a libc is no total
            if engine is not None and counter in got:
                labels = (("engine", engine), ("process", self.process))
                self.metrics.set_total(total, labels,
                                       self.base.get(total, {}).get(labels, 0) + got[counter])
                if kind == "rows" and got[counter]:
                    recorded = sum(t.count for (e, _), t in self.totals.items() if e == engine)
                    self.metrics.set_gauge(
                        "recorded_ratio", (("engine", engine), ("process", self.process)),
                        min(recorded / got[counter], 1.0))
        for name, v in got.items():
            if name.startswith("lost_"):
                labels = (("kind", name.removeprefix("lost_")),)
                self.metrics.set_total("events_lost_total", labels,
                                       self.base.get("events_lost_total", {}).get(labels, 0) + v)

    def _writes(self) -> None:
        for recs in self._batches("ws_write_rec"):
            for eid in np.unique(recs["engine"]):
                engine = self.engine_of.get(int(eid))
                if engine is None:
                    continue
                frame = writes_frame_from(recs, self.cal, engine, self.ncpu,
                                          layout=self.layout)
                comps = components.names(engine, self.layout)
                self.gap_writes.add_rows(frame["start_ns"].to_numpy(np.int64))
                # judged once a read, all processes together (one threshold)
                kept = self.retainer.judge(frame) if self.retainer is not None else None
                for pid, rows in frame.groupby("pid"):
                    self.engine_of_pid[int(pid)] = engine
                    self.last_seen[int(pid)] = time.monotonic()
                    process = process_name(int(pid), self.names)
                    self.metrics.add_rows(engine, process, rows, comps)
                    if kept is not None and len(kept):
                        self._exemplars(engine, process, kept[kept["pid"] == pid])
                    self.totals.setdefault((engine, process), RowTotals(
                        engine, self.cal.band)).add(rows, comps)
                self.lens.add_rows(engine, frame, RowTotals(engine, self.cal.band).add(
                    frame, comps))
                self._verdicts()

    def _estimate(self) -> None:
        """walscope_writes_estimated of the engine whose writes no probe
        counts, from the windows' lines so far (windows.tsv, read on from
        where the last read stopped; a torn last line waits)."""
        try:
            with open(self.folder.windows_tsv, "rb") as f:
                f.seek(self.windows_offset)
                data = f.read()
        except FileNotFoundError:
            return
        whole = data[:data.rfind(b"\n") + 1]
        self.windows_offset += len(whole)
        lines = whole.decode(errors="replace").splitlines()
        self.gap_writes.add(lines)
        # a window's close may be read before its last rows (read first):
        # the lens takes the lines a read late, every row of theirs read
        self.lens.add_lines(self.late_lines)
        self.late_lines = lines
        engines_seen = {e for e, _ in self.totals}
        if len(engines_seen) != 1 or self.counted("rows") in engines_seen:
            return                  # counted exactly, or not one engine's syscalls
        engine = engines_seen.pop()
        recorded = sum(t.count for t in self.totals.values())
        est = self.gap_writes.estimate(recorded)
        if est is not None:
            self.metrics.set_gauge("writes_estimated",
                                   (("engine", engine), ("process", self.process)), est)

    def _exemplars(self, engine: str, process: str, kept: pd.DataFrame) -> None:
        """The slow rows kept, as their buckets' exemplars (when each ended)."""
        end_s = (kept["start_ns"] + kept["dur_ns"]).to_numpy(np.float64) / 1e9
        self.metrics.add_exemplars(engine, process, [
            Exemplar(name, adj / 1e9, end + self.mono_to_unix_s)
            for name, adj, end in zip(kept["kept"], kept["dur_adj_ns"], end_s)])

    def _log_syncs_failed(self) -> bool:
        """The collector said a libc sync probe did not attach
        (collector.log: "cannot attach always fdatasync: ...")."""
        try:
            text = self.folder.collector_log.read_text(errors="replace")
        except OSError:
            return False
        return any(f"cannot attach always {n}:" in text for n in LOG_SYNC_FUNCTIONS)

    def _verdicts(self) -> None:
        """The rows' self-check so far, per engine and process: whether the
        histograms can be read as the workload's, and its risk."""
        for (engine, process), t in self.totals.items():
            check = t.check()
            if check is None:
                continue
            labels = (("engine", engine), ("process", process))
            self.metrics.set_gauge("rows_trusted", labels, int(check["trusted"]))
            self.metrics.set_gauge("self_check_risk", labels, check["risk"])

    def _io(self) -> None:
        syncs, writes = self.sync_nrs, self.write_nrs
        for recs in self._batches("ws_io_rec"):
            wal = recs[recs["kind"] == self.wal]
            for pid in np.unique(wal["pid"]):
                mine = wal[wal["pid"] == pid]
                self.last_seen[int(pid)] = time.monotonic()
                labels = (("engine", self.engine_of_pid.get(int(pid), self.engine)),
                          ("process", process_name(int(pid), self.names)))
                n_sync = int(np.isin(mine["nr"], syncs).sum())
                wrote = mine[np.isin(mine["nr"], writes) & (mine["ret"] > 0)]
                if n_sync:
                    self.metrics.add_counter("wal_syncs_recorded_total", labels, n_sync)
                if len(wrote):
                    self.metrics.add_counter("wal_bytes_recorded_total", labels,
                                             int(wrote["ret"].sum()))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="walscope serve",
        description="Attach to a running server and serve its write latency, by "
                    "component, at /metrics (Prometheus' text format) until it stops, "
                    "SIGTERM or Ctrl-C (root).  The run folder is then finished as "
                    "`walscope trace -p` finishes it.")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("-p", "--pid", type=int, metavar="PID", action="append",
                     help="the server's process (its threads and children are traced); "
                          "repeat it for several, served until the last has ended")
    who.add_argument("--all", action="store_true",
                     help="every process on this machine an engine is found in, at the "
                          "start and as they come (found through /proc, none held "
                          "while it is looked at: docs/serve.md)")
    who.add_argument("--name", metavar="NAME",
                     help="the server by its process name (postgres, mariadbd): the oldest "
                          "such process whose parent is not one, waited for if none runs, "
                          "and followed when it restarts")
    who.add_argument("--cgroup", type=Path, metavar="DIR",
                     help="the server by its cgroup (a folder under /sys/fs/cgroup, or a "
                          "path inside the cgroup2 mount such as "
                          "/system.slice/postgresql@15-main.service): the oldest process in it "
                          "whose parent is not, waited for and followed as with --name")
    p.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                   help=f"where /metrics is served (default {DEFAULT_LISTEN}: this "
                        "machine only)")
    p.add_argument("-o", "--output", type=Path, metavar="DIR",
                   help="run folder, new or empty (default runs/<UTC time>-pidPID)")
    p.add_argument("--duration", type=float, metavar="S",
                   help="stop after S seconds (default: until the server stops, "
                        "SIGTERM or Ctrl-C)")
    p.add_argument("--budget", type=budget_share, metavar="PERCENT",
                   default=defaults.BUDGET,
                   help="the share of the server's throughput tracing may cost "
                        f"(default {defaults.BUDGET * 100:g}%%)")
    p.add_argument("--interval", type=float, default=INTERVAL_S, metavar="S",
                   help=f"how often the records are read (default {INTERVAL_S:g} s)")
    keep = p.add_argument_group(
        "retention", "What stays on disk: the slow writes, whole (their rows, the writes "
        "beside them, their syscalls, run-queue waits and samples), in run folders "
        "OUTPUT/slow-<UTC> that `walscope analyse`, `report` and `query` read, under a "
        "disk cap; SIGHUP closes the open one")
    keep.add_argument("--keep-slower", default=DEFAULT_KEEP, metavar="T",
                      help="keep writes at or over a duration (5ms, 200us) or over a "
                           f"quantile of the last minute's (p99.9; default {DEFAULT_KEEP})")
    keep.add_argument("--max-disk", default=DEFAULT_MAX_DISK, metavar="SIZE",
                      help="the most the output folder holds (500M, 2G; default "
                           f"{DEFAULT_MAX_DISK}): the oldest retained folders go first")
    keep.add_argument("--rotate", type=float, default=DEFAULT_ROTATE_S, metavar="S",
                      help="close a retained folder after S seconds (default "
                           f"{DEFAULT_ROTATE_S:g}); SIGHUP closes it now")
    keep.add_argument("--group", metavar="GROUP",
                      help="the group that may read the retained folders (they are "
                           "0750, files 0640: root's and this group's, nobody else's)")
    keep.add_argument("--keep-all", action="store_true",
                      help="keep every record in one run folder, finished as `walscope "
                           "trace -p` finishes it (no cap: for a bounded --duration)")
    return p


def retainer_for(args: argparse.Namespace, out_dir: Path, hup: threading.Event
                 ) -> Retainer:
    """The retention the arguments ask for (parsed before anything starts);
    each process traced gives it its spool (Retainer.follow); it rotates
    when hup is set (SIGHUP)."""
    return Retainer(out_dir, out_dir / SPOOL, R.Layout.build(),
                    Threshold.parse(args.keep_slower), retention.parse_size(args.max_disk),
                    args.rotate, group_id(args.group), rotate_on=hup)


def group_id(name: str | None) -> int | None:
    if name is None:
        return None
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        raise ServeError(f"--group {name}: no such group") from None


LOCK = ".serve.lock"      # held by the serve that writes to an output folder
_held: list[int] = []     # its descriptor, open for serve's life


def lock(out: Path) -> None:
    """The output folder for this serve alone: a second one would remove
    the first's spool and count its open folder as closed."""
    fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o640)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ServeError(f"{out}: another walscope serve writes to it") from None
    _held.append(fd)


def serve_dir(args: argparse.Namespace) -> Path:
    """The output folder of a retaining serve, 0750: new, empty, or an
    earlier serve's (its retained folders count towards the cap; the spool
    of one that died, records it never read, is removed).  The collector's
    spool and the retained folders go inside."""
    out = args.output or unused_run_dir(default_run_dir(
        target_words(args)))
    try:
        if not out.is_dir():
            claim_run_dir(out, force=False)     # (made; or refused, one line)
        lock(out)
        held = [p for p in out.iterdir() if p.name != LOCK]
        if not all(p.is_dir() and (p.name == SPOOL or p.name.startswith(retention.PREFIX))
                   for p in held):
            claim_run_dir(out, force=False)     # another kind of folder: refused
        if (out / SPOOL).exists():
            print(f"walscope serve: removing {out / SPOOL}, the spool of a serve that "
                  "ended without closing it", file=sys.stderr)
            shutil.rmtree(out / SPOOL)
        os.chmod(out, retention.DIR_MODE)
        if (gid := group_id(args.group)) is not None:
            os.chown(out, -1, gid)
    except TraceError as e:
        raise ServeError(str(e)) from None
    except OSError as e:
        raise ServeError(f"cannot create {out}: {e.strerror}") from None
    return out


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # SIGHUP's default would end serve: noted from the start, the retainer
    # rotates on it (with --keep-all, nothing to rotate)
    hup = threading.Event()
    signal.signal(signal.SIGHUP, lambda *_: hup.set())
    metrics = Metrics()
    out = None
    try:
        if args.interval <= 0:
            raise ServeError(f"--interval {args.interval:g}: give a number of seconds above 0")
        if args.keep_all and (args.name is not None or args.cgroup is not None):
            raise ServeError("--keep-all keeps one run folder: give -p PID or --all, or "
                             "let --name or --cgroup retain (the default)")
        if args.cgroup is not None:
            args.cgroup = cgroup_dir(args.cgroup)
        if not args.keep_all:      # the arguments' errors before anything starts
            Threshold.parse(args.keep_slower)
            retention.parse_size(args.max_disk)
            group_id(args.group)
            if args.rotate <= 0:
                raise ServeError(f"--rotate {args.rotate:g}: give a number of seconds above 0")
        for pid in args.pid or ():
            if not os.path.exists(f"/proc/{pid}"):
                raise ServeError(f"no such process: {pid}")
        server = start_http(args.listen, metrics)
        if not args.keep_all:
            os.umask(0o027)        # the spool too: nobody else's
            out = serve_dir(args)
    except (ServeError, RetentionError) as e:
        print(f"walscope serve: {e}", file=sys.stderr)
        return 2
    metrics.set_gauge("budget_ratio", (), args.budget)
    metrics.set_gauge("tracing", (), 0)
    retainer = None if out is None else retainer_for(args, out, hup)
    stop = Interrupts().install()   # SIGINT, SIGTERM: noted, whenever they come
    deadline = time.monotonic() + args.duration if args.duration else None
    rc = 0
    try:
        while not stop:
            pid = wait_for(args, stop, deadline) if follows(args) else \
                args.pid[0] if args.pid and len(args.pid) == 1 else None
            if pid is None and follows(args):
                break
            left = None if deadline is None else max(deadline - time.monotonic(), 0.1)
            rc, got = serve_process(args, pid, left, metrics, out, retainer, stop)
            if rc and follows(args) and not os.path.exists(f"/proc/{pid}"):
                rc = 0          # gone while it was prepared (a crash loop): wait again
                continue
            if rc or not follows(args) or got is None or got.interrupted or stop or (
                    deadline is not None and time.monotonic() >= deadline):
                break
            print(f"walscope serve: pid {pid} ended; waiting for the next "
                  f"{server_words(args)}", file=sys.stderr, flush=True)
    finally:
        stop.restore()
        server.shutdown()
    if rc and out is not None:
        try:                    # refused before anything was kept: nothing left behind
            (out / LOCK).unlink()
            out.rmdir()
        except OSError:
            pass
    elif retainer is not None:
        kept = [p for p in retainer.closed if p.exists()]
        removed = f"; {retainer.removed} older removed to hold --max-disk" \
            if retainer.removed else ""
        print(f"walscope serve: {retainer.slow} writes at or over {retainer.keep.text()} "
              f"kept in {len(kept)} folders under {retainer.out_dir} "
              f"({retainer.used() / 2**20:.1f} MiB){removed}", file=sys.stderr)
    return rc


def find_server(name: str | None = None, settled_s: float = 0.0,
                cgroup: Path | None = None) -> int | None:
    """The process a server runs as: of the processes named name (their
    comm, or their command's first word) or in cgroup (and its children),
    at least settled_s old, one whose parent is not one of them (a
    postmaster, not its backends), the oldest."""
    hz = os.sysconf("SC_CLK_TCK")
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    members = cgroup_pids(cgroup) if cgroup is not None else None
    found: dict[int, tuple[int, int]] = {}      # pid -> (ppid, start time)
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        st = procfs.proc_stat(int(d))
        if st is None or st.state in "ZX":   # ended, not reaped yet (an init slow to)
            continue
        if members is not None:
            ours = int(d) in members
        else:
            try:
                argv0 = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0")[0].decode(
                    errors="replace")
            except OSError:
                continue
            ours = st.comm == name[:15] or os.path.basename(argv0) == name
        if ours:
            found[int(d)] = (st.ppid, st.start_ticks)
    roots = [p for p, (ppid, born) in found.items()
             if ppid not in found and uptime - born / hz >= settled_s]
    return min(roots, key=lambda p: (found[p][1], p)) if roots else None


def follows(args: argparse.Namespace) -> bool:
    """--name or --cgroup: a server found, waited for, followed across
    restarts (-p and --all trace what runs)."""
    return args.name is not None or args.cgroup is not None


def target_words(args: argparse.Namespace) -> str:
    """What is served, for the default output folder's name."""
    if args.all:
        return "all"
    if args.pid:
        return "pid" + "-".join(map(str, args.pid))
    return args.name or args.cgroup.name


def server_words(args: argparse.Namespace) -> str:
    return f"process named {args.name}" if args.name is not None else \
        f"process in the cgroup {args.cgroup}"


def cgroup_pids(cgroup: Path) -> set[int]:
    """The processes in a cgroup folder and the cgroups below it."""
    out: set[int] = set()
    for procs in [cgroup / "cgroup.procs", *cgroup.rglob("*/cgroup.procs")]:
        try:
            out |= {int(x) for x in procs.read_text().split()}
        except (OSError, ValueError):
            continue
    return out


def cgroup_mounts() -> list[tuple[str, str]]:
    """(mount point, cgroup or cgroup2) of every cgroup hierarchy mounted."""
    return [(f[1], f[2]) for line in Path("/proc/mounts").read_text().splitlines()
            if len(f := line.split()) > 2 and f[2] in ("cgroup", "cgroup2")]


def cgroup_dir(path: Path) -> Path:
    """--cgroup's folder: as given where it is one (or under a cgroup
    mount), else inside the cgroup2 mount, there or not yet (systemd makes
    a service's cgroup when it starts)."""
    mounts = cgroup_mounts()
    if (path / "cgroup.procs").exists() or any(
            str(path).startswith(m + "/") for m, _ in mounts):
        return path
    v2 = [m for m, kind in mounts if kind == "cgroup2"]
    if not v2:
        raise ServeError(f"--cgroup {path}: no such cgroup, and no cgroup2 mount to find "
                         "it in")
    return Path(v2[0]) / str(path).lstrip("/")


def wait_for(args: argparse.Namespace, stop: Interrupts, deadline: float | None
             ) -> int | None:
    """The process --name or --cgroup names, once there is one that has
    lived SETTLED_S (None: stopped or past the deadline first); said once
    while waiting."""
    said = False
    while not stop and (deadline is None or time.monotonic() < deadline):
        pid = find_server(args.name, SETTLED_S, args.cgroup)
        if pid is not None:
            return pid
        if not said:
            print(f"walscope serve: waiting for a {server_words(args)}", file=sys.stderr,
                  flush=True)
            said = True
        time.sleep(0.5)
    return None


def serve_process(args: argparse.Namespace, pid: int | None, duration: float | None,
                  metrics: Metrics, out: Path | None, retainer: Retainer | None,
                  stop: Interrupts) -> tuple[int, Collected | None]:
    """One process traced until it ends (pid), or several (-p PID -p PID,
    until the last has ended) or all those an engine is found in (--all,
    pid None), until stopped (stop, whenever the signal came) or duration
    passes: their records read into the metrics (and, retaining, the slow
    writes kept), then the folder finished (--keep-all) or the spool
    given back, whatever happened."""
    opts = TraceOptions(pid=pid, pids=tuple(args.pid or ()) if pid is None else (),
                        every_engine=pid is None and args.all,
                        output=args.output if out is None else out / SPOOL,
                        duration=duration, budget=args.budget, live_counters=True)
    try:
        plan = prepare(opts)
    except TraceError as e:
        print(f"walscope serve: {e}", file=sys.stderr)
        return 1, None
    start_folder(plan)
    if retainer is not None:
        retainer.follow(plan.run_dir, plan.mono_to_unix_ns)

    def counted(kind: str) -> str | None:
        """The engine whose writes ("rows") or log syncs ("log_syncs") a
        probe counts, windows or not; None where none does."""
        if kind == "log_syncs":
            return plan.objects.merged().engine if plan.objects.counts_log_syncs and \
                plan.objects.found else None
        return next((p.engine for r in list(plan.objects.found) for p in r.probes
                     if p.spec.always), None)

    # the counters' process: one process's name, or all of those served
    feeder = Feeder(plan.run_dir, metrics, plan.objects.merged().engine,
                    process_name(pid, {}) if pid is not None else SEVERAL, counted,
                    args.interval, retainer).start()

    def tracing() -> None:
        metrics.set_gauge("tracing", (), 1)
        n = len(plan.targets.traced) if plan.targets else 0
        what = f"pid {pid}" if pid is not None else f"{n} processes" if not args.all \
            else f"every process an engine is found in ({n} now)"
        print(f"walscope serve: {what} traced: metrics at "
              f"http://{args.listen}/metrics", file=sys.stderr, flush=True)

    def traced(pid: int, name: str) -> None:
        feeder.names.setdefault(pid, name)     # (read now: it may end soon)
        print(f"walscope serve: pid {pid} ({name}) traced", file=sys.stderr, flush=True)

    t0 = time.monotonic()
    got: Collected | None = None
    try:
        got = collect(plan, on_tracing=tracing, stop=stop, on_process=traced)
    except TraceError as e:
        print(f"walscope serve: {e}", file=sys.stderr)
    finally:
        feeder.stop()
        metrics.set_gauge("tracing", (), 0)
        if retainer is not None:      # what was kept is closed, whatever happened
            finish_retained(plan, got, time.monotonic() - t0, retainer)
    if got is None:
        return 1, None
    if retainer is None:
        return finish(plan, got, time.monotonic() - t0).exit_code, got
    return 0, got


def finish_retained(plan: Plan, got: Collected | None, elapsed: float,
                    retainer: Retainer) -> None:
    """The end of a process's retaining serve: what is pending written and
    the open folders closed (the collector's stack maps with them), each
    folder this life closed given its symbols from its own records (the
    processes' maps are at hand now), the spool removed, then the cap held
    (the spool no longer in it)."""
    try:
        if got is not None:
            got.maps.save(plan.run_dir)
            write_run_info(plan, started=False, exit_code=got.exit_code,
                           interrupted=got.interrupted, elapsed=elapsed)
        retainer.close()
        if got is not None and (plan.sample_hz or plan.offcpu_kind != "off"):
            for folder in retainer.life_closed:
                if folder.exists():
                    symbolize.write_symbols(folder, got.maps.maps)
                    retainer.own(RunFolder(folder).symbols_json, retention.FILE_MODE)
    finally:
        shutil.rmtree(plan.run_dir, ignore_errors=True)
        retainer.hold_cap()
