"""Fréchet distance between Gaussians fitted to two feature sets, from sufficient statistics.

FD = ‖μA − μG‖² + Tr(ΣA) + Tr(ΣG) − 2 Tr((ΣA ΣG)^½). The trace of the square root is computed from the
symmetric PSD matrix √ΣA ΣG √ΣA (same eigenvalues as ΣA ΣG): `eigh` of ΣA gives √ΣA with negative
round-off eigenvalues clamped to 0, `eigvalsh` of the product gives real eigenvalues, clamped at 0. This
stays finite on rank-deficient covariances (fewer samples than dimensions), where `sqrtm` of the
non-symmetric ΣA ΣG turns complex.
"""

from __future__ import annotations

import torch


def moments(total: torch.Tensor, outer: torch.Tensor, count: torch.Tensor | float) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and unbiased covariance (as `numpy.cov`) from Σx, Σxxᵀ and n ≥ 2 (float64)."""
    n = torch.as_tensor(count, dtype=torch.float64, device=total.device)
    mu = total.double() / n
    cov = (outer.double() - n * torch.outer(mu, mu)) / (n - 1)
    return mu, cov


def psd_sqrt(a: torch.Tensor) -> torch.Tensor:
    """Symmetric square root of a symmetric PSD matrix; negative round-off eigenvalues are clamped to 0."""
    w, v = torch.linalg.eigh(a)
    return (v * w.clamp_min(0).sqrt()) @ v.T


def trace_sqrt_product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Tr((A B)^½) for symmetric PSD A, B, as Σ√λ over the eigenvalues of √A B √A."""
    sa = psd_sqrt(a)
    m = sa @ b @ sa
    return torch.linalg.eigvalsh((m + m.T) / 2).clamp_min(0).sqrt().sum()


def frechet_distance(mu_a: torch.Tensor, cov_a: torch.Tensor, mu_b: torch.Tensor, cov_b: torch.Tensor) -> torch.Tensor:
    """Fréchet distance between N(mu_a, cov_a) and N(mu_b, cov_b), in float64, clamped at 0."""
    mu_a, cov_a, mu_b, cov_b = (t.double() for t in (mu_a, cov_a, mu_b, cov_b))
    d = (mu_a - mu_b).pow(2).sum() + cov_a.trace() + cov_b.trace() - 2 * trace_sqrt_product(cov_a, cov_b)
    return d.clamp_min(0)
