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

The Fréchet distance also takes a batch (leading dimensions), as the bootstrap's resampled moments
(`resampled_moments`) come, and there takes a cheaper Cholesky route where the covariances are
positive definite (`trace_sqrt_products`); a single pair is computed as before, so the published
values keep their bits.
"""

from __future__ import annotations

from collections.abc import Iterator

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
    between = torch.einsum("p...,p...i,p...j->...ij", count, d, d)
    return n, mu, scatter.sum(0) + between


def resampled_moments(
    draws: torch.Tensor,
    count: torch.Tensor,
    mean: torch.Tensor,
    scatter: torch.Tensor,
    chunk: int = 50,
) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """`merge_moments` of P partials (counts (P,…), means (P,…,dim), scatters (P,…,dim,dim)) with
    partial p counted `draws[b, p]` times, for B resamples (`draws` (B, P)): (b,…) counts, (b,…,dim)
    means and (b,…,dim,dim) scatters for each `chunk` of b resamples (bounding memory).

    n = Σ c_p n_p, μ = Σ c_p n_p μ_p / n and M = Σ c_p M_p + Σ c_p n_p (μ_p − μ)(μ_p − μ)ᵀ. So
    that a resample costs one matrix product, every partial's scatter is first taken about the
    pooled mean μ₀ of all partials, T_p = M_p + n_p e_p e_pᵀ with e_p = μ_p − μ₀; then
    M = Σ c_p T_p − n δδᵀ with δ = μ − μ₀. The deviations are from the pooled mean, not from a
    large feature offset, and δ is a resample's small shift, so nothing cancels.
    """
    batch, dim = count.shape[1:], mean.shape[-1]
    counts = count.reshape(len(count), -1)  # (P, K)
    means = mean.reshape(len(mean), -1, dim)  # (P, K, dim)
    mu0 = (counts[..., None] * means).sum(0) / counts.sum(0).clamp_min(1)[..., None]
    e = means - mu0
    about = scatter.reshape(e.shape + (dim,)) + counts[..., None, None] * (
        e[..., :, None] * e[..., None, :]
    )
    for c in torch.split(draws.double(), chunk):
        n = c @ counts  # (b, K)
        delta = torch.einsum("bp,pk,pkd->bkd", c, counts, e) / n.clamp_min(1)[..., None]
        within = (c @ about.reshape(len(about), -1)).reshape(delta.shape + (dim,))
        m = within - n[..., None, None] * (delta[..., :, None] * delta[..., None, :])
        yield (
            n.reshape(-1, *batch),
            (mu0 + delta).reshape(-1, *batch, dim),
            m.reshape(-1, *batch, dim, dim),
        )


def significant(w: torch.Tensor) -> torch.Tensor:
    """Which eigenvalues `w` (…, n) of a symmetric PSD matrix are above round-off level
    (n·eps·λmax, numpy's `matrix_rank` tolerance)."""
    return w > w.abs().amax(-1, keepdim=True) * w.shape[-1] * torch.finfo(w.dtype).eps


def psd_sqrt(a: torch.Tensor) -> torch.Tensor:
    """Symmetric square root of a symmetric PSD matrix; round-off-level and negative eigenvalues
    count as 0."""
    w, v = torch.linalg.eigh(a)
    return (v * torch.where(significant(w), w, torch.zeros_like(w)).sqrt()[..., None, :]) @ v.mT


def psd_range(a: torch.Tensor) -> torch.Tensor:
    """(dim, r) orthonormal basis of the range of a symmetric PSD (dim, dim) matrix."""
    w, v = torch.linalg.eigh(a)
    return v[:, significant(w)]


def trace_sqrt_product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Tr((A B)^½) for symmetric PSD A, B: the sum of the singular values of √A √B."""
    return torch.linalg.svdvals(psd_sqrt(a) @ psd_sqrt(b)).sum(-1)


def trace_sqrt_products(
    a: torch.Tensor, b: torch.Tensor, definite: torch.Tensor | None = None
) -> torch.Tensor:
    """`trace_sqrt_product` of a batch (B, dim, dim), about three times cheaper where both are
    positive definite: with Cholesky factors A = LₐLₐᵀ, B = L_bL_bᵀ, the eigenvalues of AB are
    the squared singular values of Lₐᵀ L_b (two Cholesky factorisations and one SVD instead of
    two eigendecompositions and one SVD; the same eps-level accuracy). Pairs where a
    factorisation fails, or that `definite` (B,) marks as not known to be positive definite
    (rank-deficient matrices can factorise on round-off), take `trace_sqrt_product`."""
    la, info_a = torch.linalg.cholesky_ex(a)
    lb, info_b = torch.linalg.cholesky_ex(b)
    fast = (info_a == 0) & (info_b == 0)
    if definite is not None:
        fast &= definite
    out = torch.empty(a.shape[:-2], dtype=a.dtype, device=a.device)
    out[fast] = torch.linalg.svdvals(la[fast].mT @ lb[fast]).sum(-1)
    if not fast.all():
        out[~fast] = trace_sqrt_product(a[~fast], b[~fast])
    return out


def _trace(a: torch.Tensor) -> torch.Tensor:
    """Trace of a matrix (`torch.trace`) or of each of a batch."""
    return a.trace() if a.ndim == 2 else a.diagonal(dim1=-2, dim2=-1).sum(-1)


def frechet_distance(
    mu_a: torch.Tensor,
    cov_a: torch.Tensor,
    mu_b: torch.Tensor,
    cov_b: torch.Tensor,
    definite: torch.Tensor | None = None,
    offset: float = 0.0,
    basis: torch.Tensor | None = None,
) -> torch.Tensor:
    """Fréchet distance between N(mu_a, cov_a) and N(mu_b, cov_b), in float64, clamped at 0; on a
    batch, the pairs whose covariances `definite` marks as positive definite take the Cholesky
    route (`trace_sqrt_products`).

    `offset` ε > 0 takes the square root of (ΣA + εI)(ΣG + εI) instead, the traces unshifted, and
    does not clamp (EMAGE's 2025 evaluation convention, ε = 1e-6: identical sets then give
    −2·dim·ε).

    `basis` U (dim, r), orthonormal, holding the range of every cov_a (or of every cov_b; batch,
    offset 0 only): the square root's trace is taken between UᵀΣA U and UᵀΣG U, the same number
    from r-dimensional decompositions (ΣA = U(UᵀΣA U)Uᵀ, so ΣA ΣG has the nonzero eigenvalues of
    (UᵀΣA U)(UᵀΣG U))."""
    mu_a, cov_a, mu_b, cov_b = (t.double() for t in (mu_a, cov_a, mu_b, cov_b))
    shift = offset * torch.eye(cov_a.shape[-1], dtype=cov_a.dtype, device=cov_a.device)
    if basis is not None:
        if offset:
            raise ValueError("frechet_distance: basis needs offset 0")
        sqrt_trace = trace_sqrt_products(basis.T @ cov_a @ basis, basis.T @ cov_b @ basis, definite)
    elif cov_a.ndim == 2:
        sqrt_trace = trace_sqrt_product(cov_a + shift, cov_b + shift)
    else:
        sqrt_trace = trace_sqrt_products(cov_a + shift, cov_b + shift, definite)
    d = (mu_a - mu_b).pow(2).sum(-1) + _trace(cov_a) + _trace(cov_b) - 2 * sqrt_trace
    return d if offset else d.clamp_min(0)
