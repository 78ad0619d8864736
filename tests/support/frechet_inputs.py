"""Features far from the origin (an offset of 1e6), where the Fréchet distance loses precision
unless the mean is taken out before the covariance."""

from __future__ import annotations

import numpy as np

OFFSET = 1e6


def offset_features(seed: int, n: int, dim: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mixing = rng.normal(size=(dim, dim)) / np.sqrt(dim)
    return rng.normal(size=(n, dim)) @ mixing + rng.normal(size=dim) + OFFSET
