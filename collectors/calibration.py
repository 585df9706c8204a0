"""Probe-cost calibration, cached per kernel and CPU model.

Runs .output/walscope-calibrate (which traces itself with the real BPF
programs) and keeps the result in /var/cache/walscope/, so each run pays
for it once per machine; ``--recalibrate`` refreshes it.
"""
from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from pathlib import Path
from typing import Any

from collectors.attribution import Calibration
from collectors.records import ROOT

TOOL = ROOT / ".output" / "walscope-calibrate"
CACHE_DIR = Path("/var/cache/walscope")
FORMAT = 2  # bump when walscope-calibrate measures differently


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
    """Median over rounds of each figure."""
    runs = []
    for _ in range(rounds):
        p = subprocess.run([str(TOOL), str(iterations)], capture_output=True,
                           text=True, timeout=120)
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


def get(refresh: bool = False) -> Calibration:
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    path = CACHE_DIR / f"calibration-v{FORMAT}-{machine_key()}.json"
    if not refresh and path.exists():
        try:
            data = json.loads(path.read_text())
            return Calibration.from_dict({**data, "source": f"cache {path}"})
        except (OSError, json.JSONDecodeError):
            pass
    data = measure()
    path.write_text(json.dumps(data, indent=2) + "\n")
    return Calibration.from_dict({**data, "source": "measured"})
