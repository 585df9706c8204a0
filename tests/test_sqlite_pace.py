"""bench/sqlite_pace.py's reading of one pair, on a constructed run folder
(windows.tsv as the collector writes it) and constructed transaction logs:
which window is the every-write start, the rates inside and away from the
windows, and the untraced run read at the same offsets."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MS = 1_000_000


def pace():
    spec = importlib.util.spec_from_file_location("sqlite_pace", ROOT / "bench" / "sqlite_pace.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def windows_tsv(run: Path, windows: list[tuple[int, int]], cost: float = 0.25) -> None:
    """open and close lines (close: its due time and the end of its detach)
    and one cost line, times in ms."""
    lines = ["budget\t0.020000\t25000000\t10000000\t2"]
    for a, b in windows:
        lines += [f"open\t{a * MS}\t500\t4", f"close\t{b * MS}\t{b * MS}\t600\t0"]
    lines.append(f"cost\t{windows[-1][1] * MS}\t{cost}\t0.1\t300\t1\t1\t1\t0\t0")
    run.mkdir(parents=True)
    (run / "windows.tsv").write_text("\n".join(lines) + "\n")


def steady(t0_ms: int, t1_ms: int, per_ms: float,
           slow: tuple[int, int] | None = None, factor: float = 1.0) -> list[tuple[int, int]]:
    """Transactions ending at a steady pace (per_ms a ms), factor times it
    inside slow."""
    out, t, step = [], float(t0_ms), 1 / per_ms
    while t < t1_ms:
        inside = slow and slow[0] <= t <= slow[1]
        t += step / (factor if inside else 1.0)
        out.append((int((t - step) * MS), int(t * MS)))
    return out


@pytest.mark.parametrize("start", [(-300, -100), (-300, 200)], ids=["before", "into"])
def test_a_pair_read_against_itself_and_its_untraced_run(tmp_path, start):
    """The start window that ended before the first transaction is not taken
    for a later one (the review's case), a later window's slower pace is
    read against the pace away from it, and away is set against the
    untraced run at the same offsets."""
    sp = pace()
    run = tmp_path / "out"
    later = (2000, 2400)
    windows_tsv(run, [start, later])
    traced = steady(0, 4000, 1.0, slow=later, factor=0.8)
    untraced = steady(10_000, 14_000, 1.0)
    got = sp.read_pair(run, traced, untraced)
    assert got["later_windows"] == 1
    assert got["inside_later"] == pytest.approx(0.8, abs=0.02)
    assert got["implied"] == pytest.approx(0.25, abs=0.03)
    assert got["away"] == pytest.approx(1.0, abs=0.01)
    assert got["estimate"] == 0.25
    if start[1] < 0:
        assert got["inside_start"] is None and got["start_into_txns_s"] == 0
    else:
        assert got["start_into_txns_s"] == pytest.approx(0.2, abs=0.01)
        assert got["inside_start"] == pytest.approx(1.0, abs=0.02)
