"""Distributions summarised in bounded memory.

``Dist`` keeps values exactly up to EXACT values (percentiles as numpy
computes them); beyond that it folds them into a log-linear histogram: 256
linear bins per power of two, so a percentile is off by at most 1/512 of its
value (0.2%).  Sums, means and counts stay exact.
"""
from __future__ import annotations

import numpy as np

EXACT = 1 << 18          # values kept as they are (2 MiB of float64 per Dist)
SUB = 256                # linear bins per power of two
NBINS = 1 + 64 * SUB


def _bins(v: np.ndarray) -> np.ndarray:
    v = np.maximum(v, 0)
    out = np.zeros(len(v), dtype=np.int64)
    pos = v >= 1
    e = np.floor(np.log2(v[pos])).astype(np.int64)
    m = np.floor((v[pos] / np.exp2(e) - 1.0) * SUB).astype(np.int64).clip(0, SUB - 1)
    out[pos] = 1 + e * SUB + m
    return out


def _bin_mid(i: np.ndarray) -> np.ndarray:
    i = np.asarray(i, dtype=np.int64)
    e, m = (i - 1) // SUB, (i - 1) % SUB
    mid = np.exp2(e) * (1.0 + (m + 0.5) / SUB)
    return np.where(i == 0, 0.0, mid)


class Dist:
    def __init__(self) -> None:
        self.n = 0
        self.nonzero = 0
        self.sum = 0.0
        self.max = 0.0
        self._vals: list[np.ndarray] | None = []
        self._kept = 0
        self._hist: np.ndarray | None = None

    def add(self, values: np.ndarray) -> None:
        v = np.asarray(values, dtype=np.float64)
        if not len(v):
            return
        self.n += len(v)
        self.nonzero += int((v > 0).sum())
        self.sum += float(v.sum())
        self.max = max(self.max, float(v.max()))
        if self._vals is not None and self._kept + len(v) <= EXACT:
            self._vals.append(v)
            self._kept += len(v)
            return
        if self._hist is None:
            self._hist = np.zeros(NBINS, dtype=np.int64)
            for old in self._vals or []:
                self._hist += np.bincount(_bins(old), minlength=NBINS)
            self._vals = None
        self._hist += np.bincount(_bins(v), minlength=NBINS)

    @property
    def exact(self) -> bool:
        return self._hist is None

    def percentiles(self, qs: list[float]) -> list[float]:
        """qs in percent, like np.percentile."""
        if not self.n:
            return [0.0] * len(qs)
        if self._hist is None:
            return [float(x) for x in np.percentile(np.concatenate(self._vals), qs)]
        cum = np.cumsum(self._hist)
        ranks = [q / 100 * (self.n - 1) for q in qs]
        idx = np.searchsorted(cum, np.asarray(ranks) + 1, side="left")
        return [float(x) for x in _bin_mid(np.minimum(idx, NBINS - 1))]

    def stats(self, total: float) -> dict[str, float]:
        p50, p99, p999 = self.percentiles([50, 99, 99.9])
        return dict(count=self.nonzero, sum_ns=int(self.sum),
                    mean_ns=self.sum / self.n if self.n else 0,
                    p50_ns=p50, p99_ns=p99, p999_ns=p999,
                    share=self.sum / total if total else 0.0)
