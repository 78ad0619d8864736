"""Checks Density and Coverage share: their maths against the `prdc` package, and exactly 1 on
generated features equal to the reference."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
from prdc import compute_prdc

#: (seed, k, n reference, m generated) cases, k-NN balls of several sizes
PRDC_CASES = [(0, 5, 200, 150), (1, 3, 120, 300), (2, 1, 50, 50), (3, 7, 301, 99)]

NeighbourFn = Callable[[torch.Tensor, torch.Tensor, int, int], torch.Tensor]


def assert_matches_prdc(fn: NeighbourFn, key: str, seed: int, k: int, n: int, m: int) -> None:
    """`fn` equals `prdc.compute_prdc(...)[key]` on Gaussian clouds, whatever the chunk size."""
    rng = np.random.default_rng(seed)
    real = rng.normal(size=(n, 8))
    fake = rng.normal(size=(m, 8)) * 1.2 + 0.3
    ref = compute_prdc(real, fake, nearest_k=k)
    r, f = torch.from_numpy(real), torch.from_numpy(fake)
    for chunk in (7, 4096):  # chunking must not change anything
        assert fn(r, f, k, chunk) == pytest.approx(ref[key], abs=1e-12)


def assert_one_on_the_reference(fn: NeighbourFn, seed: int) -> None:
    """Ground truth: every generated feature is a reference feature. Each ball then holds its
    centre and the k-1 nearer neighbours (the k-th lies on the radius, not inside), so Density =
    Coverage = 1 exactly."""
    real = (
        torch.randn(600, 32, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 3
        + 1
    )
    assert fn(real, real.clone(), 5, 128) == 1.0
