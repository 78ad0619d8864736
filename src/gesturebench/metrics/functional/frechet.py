"""Fréchet distance between Gaussians fitted to two feature sets, from sufficient statistics.

FD = ‖μA − μG‖² + Tr(ΣA) + Tr(ΣG) − 2 Tr((ΣA ΣG)^½). The square root's trace is Σ√λ over the
eigenvalues of the symmetric PSD √ΣA ΣG √ΣA = (√ΣA √ΣG)(√ΣA √ΣG)ᵀ, i.e. the sum of the singular
values of √ΣA √ΣG. Taking singular values instead of square roots of eigenvalues keeps round-off at
eps·‖·‖ rather than √eps·‖·‖ where eigenvalues are near zero. The PSD square roots come from `eigh`,
with eigenvalues at round-off level (≤ n·eps·λmax, numpy's `matrix_rank` tolerance, or negative) set
to 0: on rank-deficient covariances (fewer samples than dimensions) the null eigenvalues are
±1e-16-sized noise whose square roots would otherwise bias the result by ~1e-8 per dimension,
depending on summation order. The result stays real and finite where `scipy.linalg.sqrtm` of the
non-symmetric ΣA ΣG turns complex.
"""

from __future__ import annotations

import torch


def moments(
    total: torch.Tensor, outer: torch.Tensor, count: torch.Tensor | float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and unbiased covariance (as `numpy.cov`) from Σx, Σxxᵀ and n ≥ 2 (float64)."""
    n = torch.as_tensor(count, dtype=torch.float64, device=total.device)
    mu = total.double() / n
    cov = (outer.double() - n * torch.outer(mu, mu)) / (n - 1)
    return mu, cov


def batch_moments(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Count, mean and scatter Σ(x − x̄)(x − x̄)ᵀ of the rows of `x` (n,dim), in float64.

    The scatter is taken about the batch's own mean (two-pass), so a large common offset of the
    features does not cancel catastrophically as it does in Σxxᵀ − nμμᵀ. An empty batch gives
    zeros.
    """
    x = x.double()
    n = torch.tensor(float(x.shape[0]), dtype=x.dtype, device=x.device)
    mean = x.sum(0) / n.clamp_min(1)
    centred = x - mean
    return n, mean, centred.T @ centred


def merge_moments(
    count: torch.Tensor, mean: torch.Tensor, scatter: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pool partial moments along the first axis: counts (P,…), means (P,…,dim), scatters
    (P,…,dim,dim) of P disjoint sets → the count, mean and scatter of their union.

    Chan et al.'s pairwise formula for P sets at once: n = Σ n_p, μ = Σ n_p μ_p / n and
    M = Σ M_p + Σ n_p (μ_p − μ)(μ_p − μ)ᵀ; only deviations from the pooled mean are multiplied,
    so it is as exact as each partial. A set with n_p = 0 contributes nothing.
    """
    n = count.sum(0)
    weights = count[..., None]
    mu = (weights * mean).sum(0) / n.clamp_min(1)[..., None]
    d = mean - mu
    between = (weights[..., None] * d[..., :, None] * d[..., None, :]).sum(0)
    return n, mu, scatter.sum(0) + between


def psd_sqrt(a: torch.Tensor) -> torch.Tensor:
    """Symmetric square root of a symmetric PSD matrix; round-off-level and negative eigenvalues
    count as 0."""
    w, v = torch.linalg.eigh(a)
    tol = w.abs().max() * w.shape[0] * torch.finfo(w.dtype).eps
    return (v * torch.where(w > tol, w, torch.zeros_like(w)).sqrt()) @ v.T


def trace_sqrt_product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Tr((A B)^½) for symmetric PSD A, B: the sum of the singular values of √A √B."""
    return torch.linalg.svdvals(psd_sqrt(a) @ psd_sqrt(b)).sum()


def frechet_distance(
    mu_a: torch.Tensor,
    cov_a: torch.Tensor,
    mu_b: torch.Tensor,
    cov_b: torch.Tensor,
    offset: float = 0.0,
) -> torch.Tensor:
    """Fréchet distance between N(mu_a, cov_a) and N(mu_b, cov_b), in float64, clamped at 0.

    `offset` ε > 0 takes the square root of (ΣA + εI)(ΣG + εI) instead, the traces unshifted, and
    does not clamp (EMAGE's 2025 evaluation convention, ε = 1e-6: identical sets then give
    −2·dim·ε)."""
    mu_a, cov_a, mu_b, cov_b = (t.double() for t in (mu_a, cov_a, mu_b, cov_b))
    shift = offset * torch.eye(cov_a.shape[0], dtype=cov_a.dtype, device=cov_a.device)
    d = (
        (mu_a - mu_b).pow(2).sum()
        + cov_a.trace()
        + cov_b.trace()
        - 2 * trace_sqrt_product(cov_a + shift, cov_b + shift)
    )
    return d if offset else d.clamp_min(0)
