"""Density (Naeem et al. 2020): how many reference k-NN balls hold each generated feature, over k
(functional/neighbour.py).
"""

from __future__ import annotations

import torch

from gesturebench.metrics.functional.neighbour import BallHits, distance_blocks, knn_radii


def density(
    real: torch.Tensor, fake: torch.Tensor, k: int = 5, chunk_size: int = 1024
) -> torch.Tensor:
    """Expected number of reference balls a generated feature falls in, divided by k (float64)."""
    radii = knn_radii(real, k, chunk_size)
    hits = sum(int((d < radii).sum()) for _, d in distance_blocks(fake, real, chunk_size))
    return torch.tensor(hits, dtype=torch.float64) / (k * fake.shape[0])


def resampled_density(balls: BallHits, draws: torch.Tensor, k: int) -> torch.Tensor:
    """(B,) Density with each owner's reference balls and generated features counted as often as
    (B, owners) `draws` say; the balls keep their radii."""
    owners = balls.hits.shape[0]
    per_owner = balls.hits.new_zeros(owners, owners).index_add_(1, balls.real_owner, balls.hits)
    return torch.einsum("bs,st,bt->b", draws, per_owner, draws) / (k * draws @ balls.fake_counts)
