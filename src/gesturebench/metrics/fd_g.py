"""FD_g: Fréchet distance between reference and generated raw pose frames (the GENEA
Leaderboard's, after audio2photoreal; docs/protocols.md).

No encoder: each frame's feature is its axis-angle pose vector (55 joints × 3 = 165 values,
`Motion.poses` as the dataset stores it). FD_g fits one Gaussian to all reference frames and one to
all generated frames, pooled over sequences; FD_k (fd_k.py) does the same on frame-to-frame
differences within each sequence.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from gesturebench.data.records import POSE_DIM
from gesturebench.metrics.base import GestureMetric
from gesturebench.metrics.functional.frechet import batch_moments, frechet_distance, merge_moments
from gesturebench.metrics.pair import MotionPair

#: state index of each motion: reference, generated.
SIDES = (0, 1)


class PoseFrechet(GestureMetric):
    """FD_g ↓: Fréchet distance between the Gaussians of reference and generated pose frames.

    States, index 0 = reference, 1 = generated: frame counts, means and scatters Σ(x − μ)(x − μ)ᵀ
    (float64), each sequence pooled in exactly by `merge_moments` (no cancellation at large means).
    Partial moments pool exactly but not by adding, so the states are not reduced arithmetically
    (``dist_reduce_fx=None``): a DDP sync stacks every process's partial along a new first axis
    and `compute` pools them with the same `merge_moments`.
    """

    default_name = "fd_g"
    direction = "lower"
    reads = ("jaw", "eyes")  # every joint's rotation is part of the frame
    count: torch.Tensor
    mean: torch.Tensor
    scatter: torch.Tensor

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        f64 = torch.float64
        self.add_state("count", torch.zeros(2, dtype=f64), dist_reduce_fx=None)
        self.add_state("mean", torch.zeros(2, POSE_DIM, dtype=f64), dist_reduce_fx=None)
        self.add_state(
            "scatter", torch.zeros(2, POSE_DIM, POSE_DIM, dtype=f64), dist_reduce_fx=None
        )

    def frames(self, poses: np.ndarray) -> torch.Tensor:
        """The feature rows of one sequence's poses (T,165): the frames themselves."""
        return torch.as_tensor(np.asarray(poses, dtype=np.float64).reshape(len(poses), -1))

    def update(self, pair: MotionPair) -> None:
        for side, motion in zip(SIDES, (pair.reference, pair.generated), strict=True):
            batch = batch_moments(self.frames(motion.poses).to(self.mean.device))
            n, self.mean[side], self.scatter[side] = merge_moments(
                torch.stack([self.count[side], batch[0]]),
                torch.stack([self.mean[side], batch[1]]),
                torch.stack([self.scatter[side], batch[2]]),
            )
            self.count[side] = n

    def pooled(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Counts (2,), means (2,165), scatters (2,165,165), pooled over synced partials."""
        return merge_moments(
            self.count.reshape(-1, 2),
            self.mean.reshape(-1, 2, POSE_DIM),
            self.scatter.reshape(-1, 2, POSE_DIM, POSE_DIM),
        )

    def skip_reason(self) -> str | None:
        n_ref, n_gen = (int(n) for n in self.count.reshape(-1, 2).sum(0))
        few = min(n_ref, n_gen) < 2  # a covariance needs two rows
        return (
            f"{self.name} needs at least 2 frames of each motion; got {n_ref} and {n_gen}"
            if few
            else None
        )

    def compute_values(self) -> dict[str, float | None]:
        n, mean, scatter = self.pooled()
        ref, gen = ((mean[i], scatter[i] / (n[i] - 1)) for i in SIDES)
        return {self.name: float(frechet_distance(*ref, *gen))}
