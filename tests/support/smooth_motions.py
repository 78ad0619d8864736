"""Smooth synthetic motions: a few random sinusoids (0.2–2 Hz) mixed into all 165 pose values by a
seeded mixing matrix, the motion autoencoder's and the feature metrics' test data."""

from __future__ import annotations

import numpy as np

from gesturebench.data.records import Motion

N_LATENT = 6


def smooth_motion(rng: np.random.Generator, n_frames: int, mix: np.ndarray) -> Motion:
    """A smooth synthetic motion: a few random sinusoids (0.2–2 Hz) mixed into all 165 pose
    values."""
    t = np.arange(n_frames)[:, None] / 30.0
    latent = np.sin(
        2 * np.pi * rng.uniform(0.2, 2.0, N_LATENT) * t + rng.uniform(0, 2 * np.pi, N_LATENT)
    )
    trans = np.cumsum(0.005 * latent[:, :3], axis=0) + np.array([0.0, 1.0, 0.0])
    return Motion(latent @ mix, trans, np.zeros(10), np.zeros((n_frames, 100)))


def mixing(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 0.2, (N_LATENT, 165))


def motions(n: int, seed: int = 0) -> list[Motion]:
    """`n` smooth motions of 90–199 frames, one mixing matrix."""
    rng, mix = np.random.default_rng(seed), mixing()
    return [smooth_motion(rng, int(rng.integers(90, 200)), mix) for _ in range(n)]
