"""Smooth curves over time: C² steps, rise–hold–fall windows and low-passed noise."""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter1d

from gesturebench.data.records import FPS


def smootherstep(x: np.ndarray) -> np.ndarray:
    """Perlin's C² step from 0 (x ≤ 0) to 1 (x ≥ 1): zero velocity and acceleration at both ends."""
    x = np.clip(x, 0.0, 1.0)
    return x * x * x * (x * (6.0 * x - 15.0) + 10.0)


def window(t: np.ndarray, rise0: float, rise1: float, fall0: float, fall1: float) -> np.ndarray:
    """0 → 1 over [rise0, rise1], 1 until fall0, → 0 over [fall0, fall1] (smootherstep ramps)."""
    return smootherstep((t - rise0) / (rise1 - rise0)) - smootherstep((t - fall0) / (fall1 - fall0))


def smooth_noise(
    rng: np.random.Generator, n: int, dims: int, cutoff_hz: float, rate: float = FPS
) -> np.ndarray:
    """(n, dims) Gaussian noise low-passed by a Gaussian kernel (σ = rate / 2π·cutoff), unit
    variance."""
    sigma = rate / (2.0 * np.pi * cutoff_hz)
    smoothed = gaussian_filter1d(rng.standard_normal((n, dims)), sigma, axis=0, mode="reflect")
    # The kernel's output std is (2√π σ)^-1/2.
    return smoothed * np.sqrt(2.0 * np.sqrt(np.pi) * sigma)
