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

Every function also takes a batch (leading dimensions), as the bootstrap's resampled moments come;
a single matrix is computed exactly as before (`trace` where a batch sums the diagonal), so the
published values keep every bit.
"""

from __future__ import annotations

import torch


def moments(
    total: torch.Tensor, outer: torch.Tensor, count: torch.Tensor | float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and unbiased covariance (as `numpy.cov`) from Σx, Σxxᵀ and n ≥ 2 (float64); batched:
    (..., d), (..., d, d) and (...) counts."""
    n = torch.as_tensor(count, dtype=torch.float64, device=total.device)[..., None]
    mu = total.double() / n
    n2 = n[..., None]
    cov = (outer.double() - n2 * (mu[..., :, None] * mu[..., None, :])) / (n2 - 1)
    return mu, cov


def psd_sqrt(a: torch.Tensor) -> torch.Tensor:
    """Symmetric square root of a symmetric PSD matrix; round-off-level and negative eigenvalues
    count as 0."""
    w, v = torch.linalg.eigh(a)
    tol = w.abs().amax(-1, keepdim=True) * w.shape[-1] * torch.finfo(w.dtype).eps
    return (v * torch.where(w > tol, w, torch.zeros_like(w)).sqrt()[..., None, :]) @ v.mT


def trace_sqrt_product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Tr((A B)^½) for symmetric PSD A, B: the sum of the singular values of √A √B."""
    return torch.linalg.svdvals(psd_sqrt(a) @ psd_sqrt(b)).sum(-1)


def _trace(a: torch.Tensor) -> torch.Tensor:
    """Trace of a matrix (`torch.trace`) or of each of a batch."""
    return a.trace() if a.ndim == 2 else a.diagonal(dim1=-2, dim2=-1).sum(-1)


def frechet_distance(
    mu_a: torch.Tensor, cov_a: torch.Tensor, mu_b: torch.Tensor, cov_b: torch.Tensor
) -> torch.Tensor:
    """Fréchet distance between N(mu_a, cov_a) and N(mu_b, cov_b), in float64, clamped at 0."""
    mu_a, cov_a, mu_b, cov_b = (t.double() for t in (mu_a, cov_a, mu_b, cov_b))
    d = (
        (mu_a - mu_b).pow(2).sum(-1)
        + _trace(cov_a)
        + _trace(cov_b)
        - 2 * trace_sqrt_product(cov_a, cov_b)
    )
    return d.clamp_min(0)
