"""The k-nearest-neighbour balls around the reference features that Density and Coverage (Naeem et
al. 2020) count generated features in (functional/density.py, functional/coverage.py).

r_i = distance from reference X_i to its k-th nearest other reference (the (k+1)-th smallest
distance counting X_i itself, as the `prdc` package does). Density = (1/kM) Σ_j Σ_i 1[‖Y_j − X_i‖ <
r_i]; Coverage = (1/N) Σ_i 1[min_j ‖Y_j − X_i‖ < r_i]. Distances are computed in float64 blocks of
`chunk_size` rows against all N references, so memory is O(chunk_size · N), never O(N · M).

Distances are computed point by point, not with cdist's matrix-product formula: that one rounds d(x,
y) and d(y, x) differently, so when generated features equal reference ones (ground truth) whether
the k-th neighbour counts as inside its own ball was decided by the last bit (Density anywhere in
[1, 1.2], and different on another device). Point by point, distances are symmetric and a point's
distance to itself is 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch


def distance_blocks(
    rows: torch.Tensor, cols: torch.Tensor, chunk_size: int
) -> Iterator[tuple[slice, torch.Tensor]]:
    """(slice of rows, (len, N) Euclidean distances to all `cols`) for consecutive row blocks, in
    float64."""
    cols = cols.double()
    for start in range(0, rows.shape[0], chunk_size):
        block = slice(start, start + chunk_size)
        yield (
            block,
            torch.cdist(rows[block].double(), cols, compute_mode="donot_use_mm_for_euclid_dist"),
        )


def knn_radii(real: torch.Tensor, k: int, chunk_size: int = 1024) -> torch.Tensor:
    """(N,) distance from each reference feature to its k-th nearest other reference feature; needs
    N > k."""
    if real.shape[0] <= k:
        raise ValueError(
            f"k={k} nearest neighbours need more than {k} reference features, got {real.shape[0]}"
        )
    radii = torch.empty(real.shape[0], dtype=torch.float64, device=real.device)
    for block, d in distance_blocks(real, real, chunk_size):
        radii[block] = d.kthvalue(k + 1, dim=1).values
    return radii


@dataclass(frozen=True)
class BallHits:
    """What the bootstrap of Density and Coverage resamples: `hits[s, i]`, the generated features of
    owner (sequence) s inside reference ball i; `real_owner` (N,), each ball's owner;
    `fake_counts` (owners,), each owner's generated features (float64)."""

    hits: torch.Tensor
    real_owner: torch.Tensor
    fake_counts: torch.Tensor


def ball_hits(
    real: torch.Tensor,  # (N, D)
    fake: torch.Tensor,  # (M, D)
    real_owner: torch.Tensor,  # (N,)
    fake_owner: torch.Tensor,  # (M,)
    owners: int,
    k: int = 5,
    chunk_size: int = 1024,
) -> BallHits:
    """`BallHits` of features owned by sequences 0..owners-1 (`real_owner`, `fake_owner`: each
    feature's sequence), the balls' radii those of the whole reference set."""
    radii = knn_radii(real, k, chunk_size)
    hits = torch.zeros(owners, real.shape[0], dtype=torch.float64, device=real.device)
    for block, d in distance_blocks(fake, real, chunk_size):
        hits.index_add_(0, fake_owner[block], (d < radii).double())
    fake_counts = torch.bincount(fake_owner, minlength=owners).double()
    return BallHits(hits, real_owner, fake_counts)
