"""walscope's live metrics for `walscope serve`'s /metrics, in Prometheus'
text exposition format (0.0.4) or, for a scraper that asks for it,
OpenMetrics 1.0 (with exemplars): what the rows recorded so far say, by
engine and process, kept as cumulative histograms and counters.

    walscope_write_duration_seconds             histogram: a write whole
    walscope_write_component_duration_seconds   histogram: one component of
                                                 it (apart, so a sum over
                                                 components never counts a
                                                 write twice)
    walscope_writes_recorded_total              counter: rows recorded
    walscope_wal_syncs_recorded_total           counter: WAL syncs traced
    walscope_wal_bytes_recorded_total           counter: bytes written to the
                                                 WAL, traced
    walscope_writes_total                       counter: every write, where an
                                                 engine's probe counts them
                                                 (the collector's counters)
    walscope_wal_syncs_total                    counter: every sync of a WAL
                                                 or journal (libc's fdatasync,
                                                 fsync), traced or not
    walscope_events_lost_total                  counter: events lost, by kind
    walscope_<gauge>                            gauges the server sets (GAUGES:
                                                 the budget, whether rows are
                                                 trusted, ...)

Durations are the compensated ones (the probes' own cost removed), as the
table and summary.json give them.  A bucket of the whole-write histogram
carries, in OpenMetrics, the last retained write that fell in it (an
exemplar: {write="<retained folder>/<tid>/<start_ns>"}, its duration and
when it ended), which `walscope query` finds in that folder.  Pure: rows
in, text out; the server (runners/command/serve.py) feeds it.
"""
from __future__ import annotations

import bisect
import math
import threading
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

# bucket upper bounds in seconds: 1 us to 10 s, about 2.5x apart (an
# unsynced RocksDB write is 4-15 us, a synced one 100-400 us, a commit
# behind a checkpoint tens of ms)
BUCKETS_S: tuple[float, ...] = (
    1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3,
    5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)

PREFIX = "walscope_"
HELP = {
    "write_duration_seconds":
        "A recorded write's duration, its probes' cost removed",
    "write_component_duration_seconds":
        "The time a recorded write spent in one component (a write counts once "
        "per component)",
    "writes_recorded_total": "Writes recorded (rows)",
    "wal_syncs_recorded_total": "Syncs of a write-ahead log the tracer saw",
    "wal_bytes_recorded_total": "Bytes written to a write-ahead log the tracer saw",
    "writes_total": "Writes an engine's counting probe saw, recorded or not (exact, "
                    "where the engine has such a probe)",
    "wal_syncs_total": "Syncs of a write-ahead log or journal, traced or not (every "
                       "one made through libc's fdatasync or fsync)",
    "events_lost_total": "Events the tracer lost (a full ring buffer or map), by kind",
}
# the gauges walscope serve sets (one line each in /metrics)
GAUGES = {
    "budget_ratio": "The share of the server's throughput tracing may cost",
    "tracing": "1 while the server's processes are traced",
    "feeder_ok": "1 while the records are read into these metrics without error",
    "recorded_ratio": "The share of the writes an engine's probe counted that were "
                      "recorded whole (rows)",
    "rows_trusted": "1 where the rows' self-check trusts their latencies (the histograms "
                    "are the workload's), 0 where it does not",
    "self_check_risk": "The rows' self-check risk: how much the probes lengthened waits "
                       "(at or over the self-check's threshold: not trusted)",
    "lens": "The lens the headline of the last minute takes (1) and the other (0): the "
            "recorded rows, or the untouched lens (the writers' time between windows, "
            "nothing attached to their path), by summary.json's rule",
    "write_mean_seconds": "The mean write of the last minute by each lens that has one "
                          "(rows: compensated; untouched: a writer's time per write)",
    "write_component_mean_seconds": "The mean write's components of the last minute, by "
                                    "the lens the headline takes",
    "headline_trusted": "1 where the headline of the last minute is trusted (the lens it "
                        "takes passed its own check), 0 where neither lens is",
    "writes_estimated": "Writes so far where no probe counts them: the recorded ones, and "
                        "the write syscalls between windows at the windows' writes per "
                        "write syscall (an estimate: a gauge)",
}


def escape(value: str) -> str:
    """A label value as the format quotes it."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def label_text(labels: tuple[tuple[str, str], ...]) -> str:
    return ",".join(f'{k}="{escape(v)}"' for k, v in labels)


def number(v: float) -> str:
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v)) if not float(v).is_integer() else str(int(v))


TEXT = "text/plain; version=0.0.4; charset=utf-8"
OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"


def wants_openmetrics(accept: str | None) -> bool:
    """Whether a scraper's Accept header takes OpenMetrics (Prometheus'
    does, first)."""
    return "application/openmetrics-text" in (accept or "")


@dataclass(frozen=True)
class Exemplar:
    """One retained write a bucket points to."""
    write: str            # "<retained folder>/<tid>/<start_ns>"
    seconds: float
    unix_s: float


@dataclass
class Histogram:
    """Cumulative counts per bucket (BUCKETS_S, then +Inf), a sum and a
    count; the last exemplar each bucket was given."""
    counts: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS_S) + 1))
    sum_s: float = 0.0
    count: int = 0
    exemplars: dict[int, Exemplar] = field(default_factory=dict)

    def observe(self, seconds: np.ndarray) -> None:
        if not len(seconds):
            return
        idx = np.searchsorted(BUCKETS_S, seconds, side="left")
        for i, n in zip(*np.unique(idx, return_counts=True)):
            self.counts[int(i)] += int(n)
        self.sum_s += float(seconds.sum())
        self.count += len(seconds)

    def exemplify(self, exemplars: list[Exemplar]) -> None:
        """Each its bucket's exemplar, the last one given winning."""
        for ex in exemplars:
            self.exemplars[int(np.searchsorted(BUCKETS_S, ex.seconds, side="left"))] = ex

    def lines(self, name: str, labels: tuple[tuple[str, str], ...],
              openmetrics: bool = False) -> list[str]:
        out, acc = [], 0
        for i, (bound, n) in enumerate(zip((*BUCKETS_S, math.inf), self.counts)):
            acc += n
            le = label_text((*labels, ("le", number(bound))))
            ex = self.exemplars.get(i) if openmetrics else None
            out.append(f"{name}_bucket{{{le}}} {acc}" + (
                f' # {{write="{escape(ex.write)}"}} {number(ex.seconds)} {ex.unix_s:.3f}'
                if ex is not None else ""))
        lt = label_text(labels)
        out += [f"{name}_sum{{{lt}}} {number(self.sum_s)}",
                f"{name}_count{{{lt}}} {self.count}"]
        return out


Labels = tuple[tuple[str, str], ...]


class Metrics:
    """Everything /metrics shows; fed and read from different threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hist: dict[str, dict[Labels, Histogram]] = {}
        self._counters: dict[str, dict[Labels, float]] = {}
        self._gauges: dict[str, tuple[str, dict[Labels, float]]] = {}

    def add_rows(self, engine: str, process: str, rows: pd.DataFrame,
                 components: list[str]) -> None:
        """Rows of one engine and process (analysis/writes.py's frame: their
        dur_adj_ns and each component's <c>_adj_ns)."""
        if rows.empty:
            return
        base: Labels = (("engine", engine), ("process", process))
        with self._lock:
            self._histogram("write_duration_seconds", base).observe(
                rows["dur_adj_ns"].to_numpy(np.float64) / 1e9)
            for c in components:
                col = f"{c}_adj_ns"
                if col in rows:
                    self._histogram("write_component_duration_seconds",
                                    (*base, ("component", c))).observe(
                        np.maximum(rows[col].to_numpy(np.float64), 0) / 1e9)
            self._add("writes_recorded_total", base, len(rows))

    def add_exemplars(self, engine: str, process: str, exemplars: list[Exemplar]) -> None:
        """Retained writes of one engine and process, already observed
        (add_rows), as their buckets' exemplars."""
        if exemplars:
            base: Labels = (("engine", engine), ("process", process))
            with self._lock:
                self._histogram("write_duration_seconds", base).exemplify(exemplars)

    def forget_exemplars(self, folders: list[str]) -> None:
        """Exemplars that name these retained folders (removed) go."""
        if not folders:
            return
        names = set(folders)
        with self._lock:
            for table in self._hist.values():
                for h in table.values():
                    h.exemplars = {i: ex for i, ex in h.exemplars.items()
                                   if ex.write.split("/", 1)[0] not in names}

    def add_counter(self, name: str, labels: Labels, value: float) -> None:
        with self._lock:
            self._add(name, labels, value)

    def set_total(self, name: str, labels: Labels, value: float) -> None:
        """A counter kept elsewhere (the collector's), at its value now: it
        never goes down (a value below the last is kept at the last)."""
        with self._lock:
            table = self._counters.setdefault(name, {})
            table[labels] = max(table.get(labels, 0), value)

    def counter_values(self) -> dict[str, dict[Labels, float]]:
        """Every counter's value now (a copy)."""
        with self._lock:
            return {name: dict(table) for name, table in self._counters.items()}

    def set_gauge(self, name: str, labels: Labels, value: float) -> None:
        """One of GAUGES, at value now."""
        with self._lock:
            self._gauges.setdefault(name, (GAUGES[name], {}))[1][labels] = value

    def drop_gauges(self, name: str, having: Labels, keep: set[Labels] = frozenset()
                    ) -> None:
        """name's series whose labels include every one of having, but
        those in keep: gone from /metrics (a component or lens no longer
        in the answer)."""
        with self._lock:
            table = self._gauges.get(name, (None, {}))[1]
            for labels in [k for k in table if set(having) <= set(k) and k not in keep]:
                del table[labels]

    def _histogram(self, name: str, labels: Labels) -> Histogram:
        return self._hist.setdefault(name, {}).setdefault(labels, Histogram())

    def _add(self, name: str, labels: Labels, value: float) -> None:
        table = self._counters.setdefault(name, {})
        table[labels] = table.get(labels, 0) + value

    def exposition(self, openmetrics: bool = False) -> str:
        """The text /metrics serves (families in a fixed order): Prometheus'
        text format, or OpenMetrics (a counter's family named without its
        _total, exemplars, # EOF)."""
        out: list[str] = []
        with self._lock:
            for name in sorted(self._hist):
                full = PREFIX + name
                out += [f"# HELP {full} {HELP[name]}", f"# TYPE {full} histogram"]
                for labels in sorted(self._hist[name]):
                    out += self._hist[name][labels].lines(full, labels, openmetrics)
            for name in sorted(self._counters):
                full = PREFIX + name
                family = full.removesuffix("_total") if openmetrics else full
                out += [f"# HELP {family} {HELP[name]}", f"# TYPE {family} counter"]
                out += [f"{full}{{{label_text(labels)}}} {number(v)}"
                        for labels, v in sorted(self._counters[name].items())]
            for name in sorted(self._gauges):
                help_, values = self._gauges[name]
                full = PREFIX + name
                out += [f"# HELP {full} {help_}", f"# TYPE {full} gauge"]
                out += [f"{full}{{{label_text(labels)}}} {number(v)}" if labels
                        else f"{full} {number(v)}" for labels, v in sorted(values.items())]
        if openmetrics:
            out.append("# EOF")
        return "\n".join(out) + "\n"


def quantile(buckets: list[tuple[float, int]], q: float) -> float:
    """Prometheus' histogram_quantile over cumulative (upper bound, count)
    pairs: linear inside the bucket the rank falls in (for tests and for
    comparing with a run's own percentiles)."""
    total = buckets[-1][1]
    if not total:
        return math.nan
    rank = q * total
    i = bisect.bisect_left([c for _, c in buckets], rank)
    lo_b, lo_c = (0.0, 0) if i == 0 else buckets[i - 1]
    hi_b, hi_c = buckets[i]
    if math.isinf(hi_b):
        return lo_b
    return lo_b + (hi_b - lo_b) * ((rank - lo_c) / (hi_c - lo_c) if hi_c > lo_c else 0)
