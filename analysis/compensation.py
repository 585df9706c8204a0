"""Probe-overhead compensation: what a probe hit costs, and where it lands.

walscope-calibrate (collectors/walscope_calibrate.c, run by
collectors/calibration.py) measures the costs on the machine; the tracer
stores them in the run folder (calibration.json), so a run is compensated
the same way wherever it is analysed.  Each write record counts its probe
hits and traced syscalls per component (ws_write_rec.hits_*, sys_*), and
``writes.writes_frame_from`` subtracts hits x cost from each component.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import engines
from runfolder.files import RunFolder, RunFolderError

# the boundary pairs an engine's play measures apart from the generic pair
# (its Engine.pair_cost): each has <name>_ns and <name>_in_ns figures, and
# <name>_in_ns / <name>_out_ns per-hit costs
NAMED_PAIRS: tuple[str, ...] = tuple(dict.fromkeys(
    e.pair_cost for e in engines.ENGINES if e.pair_cost != "pair"))


@dataclass(frozen=True)
class Calibration:
    """Probe cost per hit, split by where it lands (see walscope_calibrate.c)."""
    pair_in_ns: float = 0.0    # entry+return pair: cost inside the window
    pair_out_ns: float = 0.0   # entry+return pair: cost outside the window
    one_ns: float = 0.0        # entry-only probe
    uprobe_ns: float = 0.0
    uretprobe_ns: float = 0.0
    stepped_pair_in_ns: float = 0.0  # inside cost at a single-stepped site
    stepped_components: tuple[str, ...] = ()  # their pairs cost stepped_pair_in_ns
    # the named pairs' costs (NAMED_PAIRS): ("<name>_in_ns", ns), ...
    pairs: tuple[tuple[str, float], ...] = ()
    sys_in_ns: float = 0.0     # a traced syscall: cost inside its window
    sys_out_ns: float = 0.0    # ... and in the component it interrupted
    sys_ign_ns: float = 0.0    # any syscall: the kernel's tracepoint slow path
    band: float = 0.0          # +- fraction: warm vs cold probe costs
    source: str = "none"
    # the same costs measured warm (a tight loop) and cold (after evicting
    # the caches); the fields above are their midpoints.  When both are
    # known, each write is charged between them by its share of cold hits
    warm: tuple[tuple[str, float], ...] = ()
    cold: tuple[tuple[str, float], ...] = ()

    def cost(self, key: str, cold_share: np.ndarray) -> np.ndarray:
        """A per-hit cost for each write: warm + cold_share * (cold - warm),
        or the midpoint where warm and cold were not measured."""
        w, c = dict(self.warm).get(key), dict(self.cold).get(key)
        if w is None or c is None:
            return np.full(len(cold_share), self.mid(key))
        return w + cold_share * (c - w)

    def mid(self, key: str) -> float:
        """A per-hit cost's midpoint (a field, or a named pair's cost)."""
        if key in PAIR_COSTS:
            return float(dict(self.pairs).get(key, 0.0))
        return float(getattr(self, key))

    @staticmethod
    def from_dict(d: dict[str, Any] | None) -> "Calibration":
        """From walscope-calibrate's figures (calibration.json), or from a
        summary.json's calibration: the per-hit costs are derived again."""
        if not d:
            return Calibration()
        keys = Calibration.__dataclass_fields__.keys()
        out: dict[str, Any] = {k: d[k] for k in keys if k in d and k not in
                               ("warm", "cold", "stepped_components", "pairs")}
        costs = derived_costs(d)
        out.update((k, v) for k, v in costs.items() if k not in PAIR_COSTS)
        out["pairs"] = tuple((k, costs.get(k, float(d.get(k, 0.0)))) for k in PAIR_COSTS
                             if k in costs or k in d)
        out["stepped_components"] = tuple(d.get("stepped_components", ()))
        for end in ("warm", "cold"):
            if isinstance(d.get(end), dict):
                out[end] = tuple(sorted(derived_costs(d[end]).items()))
        return Calibration(**out)


# the named pairs' per-hit costs
PAIR_COSTS = tuple(f"{p}_{end}_ns" for p in NAMED_PAIRS for end in ("in", "out"))
# per-hit costs that have warm and cold measurements
HIT_COSTS = ("pair_in_ns", "pair_out_ns", "one_ns", "stepped_pair_in_ns",
             *PAIR_COSTS, "sys_in_ns", "sys_out_ns", "sys_ign_ns")


def derived_costs(m: dict[str, Any]) -> dict[str, float]:
    """walscope-calibrate's figures as Calibration's per-hit costs.  A
    traced syscall's window shows none of its cost (it is all in the
    tracepoint programs around it): noise around 0 becomes 0."""
    out = {k: float(m[k]) for k in HIT_COSTS if k in m}
    if "sys_ns" in m:
        out["sys_in_ns"] = max(0.0, float(m.get("sys_in_ns", 0)))
        out["sys_out_ns"] = max(0.0, float(m["sys_ns"]) - out["sys_in_ns"])
    for name in NAMED_PAIRS:
        if f"{name}_ns" not in m or f"{name}_in_ns" not in m:
            continue
        pair, inside = float(m[f"{name}_ns"]), float(m[f"{name}_in_ns"])
        if not 0 <= inside <= pair:
            # a pair's inside is part of the pair: walscope-calibrate's one
            # SQLite transaction read 21 us inside a 1.5-2.5 us pair on one
            # VM (spread 37 us over 3 rounds), and compensation then took
            # 120 us from a 156 us stock_level; split it as the uprobe
            # pair's inside and outside split
            share = float(m["pair_in_ns"]) / float(m["pair_ns"]) \
                if float(m.get("pair_ns") or 0) > 0 and "pair_in_ns" in m else 0.5
            inside = pair * min(max(share, 0.0), 1.0)
        out[f"{name}_in_ns"] = inside
        out[f"{name}_out_ns"] = pair - inside
    out["sys_ign_ns"] = max(0.0, out.get("sys_ign_ns", 0.0))
    return out


def load(run_dir: Path) -> Calibration:
    """The run's calibration (calibration.json); none (no compensation)
    when it was traced with --no-calibrate."""
    folder = RunFolder(run_dir)
    try:
        raw = folder.calibration()
        return Calibration() if raw is None else Calibration.from_dict(raw)
    except RunFolderError:
        raise
    except (OSError, ValueError, TypeError) as e:
        raise ValueError(f"{folder.calibration_json}: unreadable ({e})") from None


def to_dict(cal: Calibration) -> dict[str, Any]:
    """What calibration.json and summary.json's calibration hold."""
    fields = {k: v for k, v in cal.__dict__.items() if k != "pairs"}
    return {**fields, **dict(cal.pairs), "stepped_components": list(cal.stepped_components),
            "warm": dict(cal.warm), "cold": dict(cal.cold)}
