"""Percentile bootstrap over sequences (docs/statistics.md): the resamples, the weighted mean of
resampled per-sequence values, and the interval.

A resample draws as many sequences as the split has, with replacement; `Resamples.counts[b, j]` is
how often resample b draws the sequence with split index `indices[j]`. Every metric of a run sees
the same resamples, drawn from `seed`, so its intervals do not depend on the metric order, the
number of processes or the order in which they gathered their sequences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gesturebench.runtime.errors import ConfigError


@dataclass(frozen=True)
class BootstrapOptions:
    """`stats` (conf/stats/default.yaml): `bootstrap` resamples of the sequences give each metric a
    percentile interval at `confidence` (0 resamples: no intervals), drawn with `seed`; the
    distributional metrics (FGD, Density, Coverage), whose resamples cost decompositions or
    distance sums rather than a weighted mean, use the first `distributional` of them."""

    bootstrap: int = 1000
    confidence: float = 0.95
    seed: int = 0
    distributional: int = 50

    def __post_init__(self) -> None:
        if self.bootstrap < 0 or self.distributional < 0 or not 0 < self.confidence < 1:
            raise ConfigError(
                f"stats needs bootstrap >= 0, distributional >= 0 and 0 < confidence < 1, got "
                f"bootstrap={self.bootstrap}, distributional={self.distributional}, "
                f"confidence={self.confidence}"
            )


@dataclass(frozen=True)
class Resamples:
    """Bootstrap resamples of the split's sequences: `counts[b, j]` draws of `indices[j]`."""

    indices: np.ndarray
    counts: np.ndarray

    @classmethod
    def draw(cls, indices: Sequence[int], bootstrap: int, seed: int) -> Resamples:
        """`bootstrap` resamples of the sequences `indices` (any order; kept sorted)."""
        ordered = np.unique(np.asarray(indices, dtype=np.int64))
        n = len(ordered)
        counts = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=bootstrap)
        return cls(ordered, counts)

    def head(self, k: int) -> Resamples:
        """The first `k` resamples."""
        return Resamples(self.indices, self.counts[:k])

    def of(self, index: Sequence[int] | np.ndarray) -> np.ndarray:
        """(B, len(index)) draws of the sequences with split indices `index`, in that order."""
        return self.counts[:, np.searchsorted(self.indices, np.asarray(index, dtype=np.int64))]


def weighted_means(values: np.ndarray, weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(B, V) weighted means of (n, V) per-sequence `values` (NaN: left out) with (n,) `weights`,
    each sequence counted as often as (B, n) `counts` draws it; NaN where no defined value is
    drawn."""
    defined = ~np.isnan(values)
    w = np.where(defined, weights[:, None], 0.0)
    total = counts @ (w * np.where(defined, values, 0.0))
    weight = counts @ w
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weight > 0, total / weight, np.nan)


def percentile_interval(
    replicates: np.ndarray,
    confidence: float,
    value: float | None = None,
    value_range: tuple[float, float] = (-np.inf, np.inf),
) -> list[float] | None:
    """[lo, hi]: the central `confidence` quantiles of the finite replicates; None without any.

    With `value` (a distributional statistic's, which resampling biases: a sequence drawn twice
    narrows the covariances and raises FGD), the quantiles are shifted by the replicates' median
    bias, `median - value`, and clipped to the statistic's `value_range` (widened to the value
    where rounding put the value itself outside, e.g. an FGD of -3e-4 from a matrix square root),
    so the interval keeps its width where it can and always holds the value."""
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0:
        return None
    tail = (1 - confidence) / 2
    lo, mid, hi = np.quantile(finite, [tail, 0.5, 1 - tail])
    if value is None:
        return [float(lo), float(hi)]
    low, high = min(value_range[0], value), max(value_range[1], value)
    shift = mid - value
    return [float(np.clip(lo - shift, low, high)), float(np.clip(hi - shift, low, high))]
