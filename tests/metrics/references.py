"""scipy's Fréchet distance: the independent reference of test_frechet.py and
test_motion_features.py."""

from __future__ import annotations

import numpy as np
import scipy.linalg

# ---------- Fréchet distance ----------


def scipy_frechet(x: np.ndarray, y: np.ndarray) -> float:
    """The textbook computation (as in the FID/FGD reference code): numpy moments and scipy's
    sqrtm."""
    mu1, mu2 = x.mean(0), y.mean(0)
    s1, s2 = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    covmean = scipy.linalg.sqrtm(s1 @ s2).real
    return float(((mu1 - mu2) ** 2).sum() + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean))
