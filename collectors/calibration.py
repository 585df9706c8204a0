"""Probe-cost calibration, cached per kernel and CPU model.

Runs .output/walscope-calibrate (which traces itself with the real BPF
programs) and keeps the result in /var/cache/walscope/, so each run pays
for it once per machine; ``--recalibrate`` refreshes it.  The tracer
copies the figures into the run folder (calibration.json); what they mean
per write is analysis/compensation.py's business.
"""
from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from pathlib import Path
from typing import Any

from runfolder.records import ROOT

TOOL = ROOT / ".output" / "walscope-calibrate"
CACHE_DIR = Path("/var/cache/walscope")
FORMAT = 5  # bump when walscope-calibrate measures differently


class CalibrationError(RuntimeError):
    pass


def machine_key() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    raw = f"{platform.release()}|{model}"
    return hashlib.sha1(raw.encode()).hexdigest()[:12]


def measure(iterations: int = 5000, rounds: int = 3) -> dict[str, Any]:
    """Each figure: the midpoint of its warm- and cold-cache medians.

    A probe costs less when its code and data are still cached from the
    previous hit (a tight loop) than after work that evicted them; a real
    workload lies between, and differs.  Compensation uses the midpoint, and
    ``band`` is the half-range as a fraction of it: the uncertainty of every
    compensated figure, reported beside it.
    """
    warm, cold = _measure(iterations, rounds, warm=True), _measure(iterations, rounds)
    out: dict[str, Any] = {k: (warm[k] + cold[k]) / 2 for k in warm
                           if k.endswith("_ns")}
    pair = warm["pair_ns"] + cold["pair_ns"]
    out["band"] = (cold["pair_ns"] - warm["pair_ns"]) / pair if pair else 0.0
    out["iterations"] = iterations
    out["warm"], out["cold"] = warm, cold
    return out


def _measure(iterations: int, rounds: int, warm: bool = False) -> dict[str, Any]:
    """Median over rounds of each figure."""
    runs = []
    env = {"WALSCOPE_CAL_WARM": "1"} if warm else {}
    for _ in range(rounds):
        p = subprocess.run([str(TOOL), str(iterations)], capture_output=True,
                           text=True, timeout=120, env=env)
        if p.returncode != 0:
            raise CalibrationError(p.stderr.strip().splitlines()[-1]
                                   if p.stderr.strip() else "calibration failed")
        runs.append(json.loads(p.stdout))
    out: dict[str, Any] = {}
    for k in runs[0]:
        vals = sorted(r[k] for r in runs)
        out[k] = vals[len(vals) // 2]
        if k.endswith("_ns"):
            out[k + "_spread"] = vals[-1] - vals[0]
    return out


def get(refresh: bool = False) -> dict[str, Any]:
    """This machine's figures (measure()'s), from the cache or measured now;
    "source" says which."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    path = CACHE_DIR / f"calibration-v{FORMAT}-{machine_key()}.json"
    if not refresh and path.exists():
        try:
            return {**json.loads(path.read_text()), "source": f"cache {path}"}
        except (OSError, json.JSONDecodeError):
            pass
    data = measure()
    path.write_text(json.dumps(data, indent=2) + "\n")
    return {**data, "source": "measured"}
