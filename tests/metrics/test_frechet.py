"""The Fréchet distance and its moments (functional/frechet.py) against a closed form, scipy's sqrtm
and numpy; FGD, FD_g and FD_k build on it (test_fgd.py, test_fd_g.py, test_fd_k.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch

from gesturebench.metrics.functional.frechet import (
    batch_moments,
    frechet_distance,
    merge_moments,
    moments,
)
from tests.metrics.references import scipy_frechet
from tests.support.frechet_inputs import offset_features

pytestmark = pytest.mark.usefixtures("one_thread")


def stats(x: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and covariance through the metric's sufficient statistics (Σx, Σxxᵀ, n)."""
    t = torch.from_numpy(x)
    return moments(t.sum(0), t.T @ t, len(t))


def test_frechet_closed_form_for_diagonal_gaussians():
    rng = np.random.default_rng(0)
    mu_a, mu_b = rng.normal(size=7), rng.normal(size=7)
    a, b = rng.uniform(0.1, 3, 7), rng.uniform(0.1, 3, 7)
    expected = ((mu_a - mu_b) ** 2).sum() + ((np.sqrt(a) - np.sqrt(b)) ** 2).sum()
    t = torch.from_numpy
    got = frechet_distance(t(mu_a), torch.diag(t(a)), t(mu_b), torch.diag(t(b)))
    assert float(got) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_frechet_matches_scipy_sqrtm_on_full_rank_features(seed):
    rng = np.random.default_rng(seed)
    d = 16
    x = rng.normal(size=(600, d)) @ rng.normal(size=(d, d)) + rng.normal(size=d)
    y = rng.normal(size=(400, d)) @ rng.normal(size=(d, d)) * 0.7 + rng.normal(size=d)
    mx, sx = stats(x)
    np.testing.assert_allclose(sx.numpy(), np.cov(x, rowvar=False), rtol=1e-9, atol=1e-9)
    got = float(frechet_distance(mx, sx, *stats(y)))
    assert got == pytest.approx(scipy_frechet(x, y), rel=1e-6)


def emage2025_fgd(x: np.ndarray, y: np.ndarray, eps: float = 1e-6) -> float:
    """EMAGE's 2025 formula, written out with numpy/scipy: εI added to both covariances inside
    sqrtm only, the traces unshifted."""
    s1, s2 = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    diff = x.mean(0) - y.mean(0)
    offset = np.eye(len(s1)) * eps
    covmean = scipy.linalg.sqrtm((s1 + offset) @ (s2 + offset)).real
    return float(diff @ diff + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean))


def test_covariance_offset_is_emage2025s_formula():
    """Features of spread ~1e-3 (covariance eigenvalues near the 1e-6 offset): the offset moves
    the value well beyond the tolerance, and matches the formula written with scipy."""
    rng = np.random.default_rng(7)
    d = 12
    x = (rng.normal(size=(500, d)) @ rng.normal(size=(d, d))) * 1e-3
    y = (rng.normal(size=(400, d)) @ rng.normal(size=(d, d))) * 7e-4 + 1e-3
    got = float(frechet_distance(*stats(x), *stats(y), offset=1e-6))
    assert got == pytest.approx(emage2025_fgd(x, y), rel=1e-7)
    plain = float(frechet_distance(*stats(x), *stats(y)))
    assert plain == pytest.approx(scipy_frechet(x, y), rel=1e-7)
    assert abs(got - plain) > 1e-3 * plain


def test_frechet_of_identical_features_is_zero():
    x = np.random.default_rng(3).normal(size=(300, 32)) * 5 + 10
    mu, cov = stats(x)
    assert float(frechet_distance(mu, cov, mu, cov)) <= 1e-9 * float(cov.trace())


def test_frechet_rank_deficient_is_finite_and_at_least_the_mean_term():
    rng = np.random.default_rng(4)
    x, y = (
        rng.normal(size=(10, 64)),
        rng.normal(size=(12, 64)) + 0.3,
    )  # fewer samples than dimensions
    (mx, sx), (my, sy) = stats(x), stats(y)
    d = float(frechet_distance(mx, sx, my, sy))
    mean_term = float(((mx - my) ** 2).sum())
    assert np.isfinite(d) and d >= mean_term - 1e-9  # FD = ‖Δμ‖² + W₂²(centred Gaussians) ≥ ‖Δμ‖²


def test_frechet_rank_deficient_does_not_depend_on_summation_order():
    """Sums accumulated in pieces (as across DDP ranks) give the same distance: null eigenvalues at
    round-off level must not leak their square roots into the result."""
    rng = np.random.default_rng(5)
    basis = rng.normal(size=(20, 333))
    x = torch.from_numpy(rng.normal(size=(70, 20)) @ basis * 0.1 + 5 * rng.normal(size=333))
    y = torch.from_numpy(rng.normal(size=(75, 20)) @ basis * 0.12 + 5 * rng.normal(size=333))

    def pooled(t, parts):
        pieces = t.tensor_split(parts)
        return moments(sum(p.sum(0) for p in pieces), sum(p.T @ p for p in pieces), len(t))

    whole = float(frechet_distance(*pooled(x, 1), *pooled(y, 1)))
    split = float(frechet_distance(*pooled(x, 3), *pooled(y, 2)))
    assert split == pytest.approx(whole, rel=1e-12)


# ---------- FGD's moments stay exact for features with a large mean ----------


def pooled_in_batches(x: np.ndarray, sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and covariance of `x` pooled from consecutive batches of `sizes` rows."""
    parts = [batch_moments(torch.from_numpy(p)) for p in np.split(x, np.cumsum(sizes)[:-1])]
    n, mean, scatter = merge_moments(*(torch.stack(column) for column in zip(*parts, strict=True)))
    return mean, scatter / (n - 1)


@pytest.mark.parametrize("sizes", [[400], [1, 2, 397], [150, 0, 250]])
def test_pooled_covariance_with_a_large_offset_equals_numpy(sizes):
    x = offset_features(0, 400, 6)
    mean, cov = pooled_in_batches(x, sizes)
    expected = np.cov(x - x.mean(0), rowvar=False)
    np.testing.assert_allclose(cov.numpy(), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(mean.numpy(), x.mean(0), rtol=1e-12)


def test_sums_lose_the_covariance_at_this_offset():
    # what the merge replaces: Σxxᵀ − nμμᵀ cancels ~1e12-sized terms (the test above can fail)
    x = offset_features(0, 400, 6)
    t = torch.from_numpy(x)
    _, cov = moments(t.sum(0), t.T @ t, len(t))
    expected = np.cov(x - x.mean(0), rowvar=False)
    assert np.abs(cov.numpy() - expected).max() > 1e-4 * np.abs(expected).max()
