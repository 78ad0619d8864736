"""Density maths (functional/density.py) against the prdc package and on features equal to the
reference. The metric class is tested with FGD in test_motion_features.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from prdc import compute_prdc

from gesturebench.metrics.functional.density import density

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize(
    "seed,k,n,m", [(0, 5, 200, 150), (1, 3, 120, 300), (2, 1, 50, 50), (3, 7, 301, 99)]
)
def test_density_matches_prdc_package(seed, k, n, m):
    rng = np.random.default_rng(seed)
    real = rng.normal(size=(n, 8))
    fake = rng.normal(size=(m, 8)) * 1.2 + 0.3
    ref = compute_prdc(real, fake, nearest_k=k)
    r, f = torch.from_numpy(real), torch.from_numpy(fake)
    for chunk in (7, 4096):  # chunking must not change anything
        assert density(r, f, k, chunk) == pytest.approx(ref["density"], abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_density_of_features_equal_to_the_reference_is_exactly_one(seed):
    # Ground truth: every generated feature is a reference feature. Each ball then holds its centre
    # and the k-1 nearer neighbours (the k-th lies on the radius, not inside), so Density = Coverage
    # = 1 exactly.
    real = (
        torch.randn(600, 32, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 3
        + 1
    )
    assert density(real, real.clone(), k=5, chunk_size=128) == 1.0
