"""Coverage (Naeem et al. 2020): the fraction of reference k-NN balls holding a generated feature
(functional/neighbour.py).
"""

from __future__ import annotations

import torch

from gesturebench.metrics.functional.neighbour import BallHits, distance_blocks, knn_radii


def coverage(
    real: torch.Tensor, fake: torch.Tensor, k: int = 5, chunk_size: int = 1024
) -> torch.Tensor:
    """Fraction of reference balls that contain at least one generated feature (float64)."""
    radii = knn_radii(real, k, chunk_size)
    nearest = torch.full_like(radii, float("inf"))
    for _, d in distance_blocks(fake, real, chunk_size):
        nearest = torch.minimum(nearest, d.min(dim=0).values)
    return (nearest < radii).double().mean()


def resampled_coverage(balls: BallHits, draws: torch.Tensor, k: int) -> torch.Tensor:
    """(B,) Coverage with each owner's reference balls and generated features counted as often as
    (B, owners) `draws` say: the drawn balls' weighted fraction hit by a drawn generated feature
    (`k` enters through the radii)."""
    drawn = draws[:, balls.real_owner]
    covered = (draws @ (balls.hits > 0).double()) > 0
    return (drawn * covered).sum(1) / drawn.sum(1)
