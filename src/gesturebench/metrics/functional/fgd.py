"""FGD's `sqrt_check: emage2024`: where EMAGE's 2024 evaluation code, taking scipy's `sqrtm` of
Σ_gen Σ_ref, retries with an offset or returns no true distance (docs/protocols.md, FGD); the
distance itself is functional/frechet.py's."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import torch

#: EMAGE 2024's tolerance on the imaginary part of the square root's diagonal, and its retry shift
EMAGE2024_IMAGINARY, EMAGE2024_EPS = 1e-3, 1e-6


def emage2024_sqrt(cov_gen: torch.Tensor, cov_ref: torch.Tensor) -> tuple[float, str | None]:
    """What EMAGE's 2024 evaluation code meets taking the square root of Σ_gen Σ_ref with
    `scipy.linalg.sqrtm`, as it does: (the covariance offset it ends with: 0, or 1e-6 where that
    root is not finite and it retries with 1e-6·I added to both; why it returns no true distance,
    else None). It returns its 1e10 sentinel where the root's diagonal keeps an imaginary part
    above 1e-3, and NaN where the retried root is not finite either."""
    a, b = (c.double().cpu().numpy() for c in (cov_gen, cov_ref))
    offset = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on singular products: the checks below judge
        root = scipy.linalg.sqrtm(a @ b)
        if not np.isfinite(root).all():
            offset, shift = EMAGE2024_EPS, EMAGE2024_EPS * np.eye(len(a))
            root = scipy.linalg.sqrtm((a + shift) @ (b + shift))
    if not np.isfinite(root).all():
        return offset, "the square root of the covariance product is not finite (it returns NaN)"
    imaginary = np.abs(np.diagonal(root).imag).max() if np.iscomplexobj(root) else 0.0
    if imaginary > EMAGE2024_IMAGINARY:
        return offset, (
            f"the square root of the covariance product has an imaginary diagonal part of "
            f"{imaginary:.3g} > {EMAGE2024_IMAGINARY:g} (it returns its 1e10 sentinel)"
        )
    return offset, None
