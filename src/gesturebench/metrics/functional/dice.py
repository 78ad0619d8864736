"""Gesture area coverage: bones rasterised on the frontal plane and the Dice overlap of two rasters
(docs/metrics.md, Dice).

The grid is `extent` × `extent` metres centred on the pelvis, in square cells of side `cell`; cell
(i, j) holds the half-open square [i, i+1) × [j, j+1) in cell units. A segment marks every cell it
passes through: the cells of its two ends and, at each point where it crosses a grid line strictly
between its ends, the two cells on either side of that line. That is exact (no sampling step) and
vectorised; a segment running exactly through a grid corner may also mark the two cells that touch
it only there.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from gesturebench.body.joints import DICE_BONES, PARENTS

#: Segments rasterised per chunk (bounds the memory of the crossing tables).
SEGMENT_CHUNK = 1 << 14


def grid_size(cell: float, extent: float) -> int:
    return round(extent / cell)


def _crossing_cells(u0: torch.Tensor, u1: torch.Tensor, axis: int, g: int) -> torch.Tensor:
    """Flat indices of the in-grid cells on both sides of each crossing of a grid line ⟂ `axis`
    strictly between a segment's ends (`u0`, `u1`: (S,2) in cell units). Only lines 0…g can border
    an in-grid cell, so a segment reaching far outside the grid costs no more than one spanning it.
    """
    a0, a1, b0, b1 = u0[:, axis], u1[:, axis], u0[:, 1 - axis], u1[:, 1 - axis]
    lo = (torch.floor(torch.minimum(a0, a1)) + 1).clamp(min=0)
    hi = (torch.ceil(torch.maximum(a0, a1)) - 1).clamp(max=g)
    count = (hi - lo + 1).clamp(min=0).long()  # lines lo, lo+1, …, hi
    seg = torch.repeat_interleave(count)
    step = torch.arange(len(seg), device=u0.device) - (torch.cumsum(count, 0) - count)[seg]
    k = lo[seg] + step
    slope = (b1 - b0) / torch.where(count > 0, a1 - a0, torch.ones_like(a0))
    other = torch.floor(b0[seg] + (k - a0[seg]) * slope[seg]).long()
    k = k.long()
    ok = (other >= 0) & (other < g)
    stride_k, stride_o = (g, 1) if axis == 0 else (1, g)
    flat = k * stride_k + other * stride_o
    return torch.cat([(flat - stride_k)[ok & (k >= 1) & (k <= g)], flat[ok & (k >= 0) & (k < g)]])


def rasterise_segments(
    starts: torch.Tensor, ends: torch.Tensor, cell: float = 0.005, extent: float = 2.0
) -> torch.Tensor:
    """Binary (G,G) raster, G = extent/cell, of the segments starts[s] → ends[s] ((S,2), metres,
    origin at the centre)."""
    g = grid_size(cell, extent)
    raster = torch.zeros(g * g, dtype=torch.bool, device=starts.device)
    for s0 in range(0, starts.shape[0], SEGMENT_CHUNK):
        u0 = starts[s0 : s0 + SEGMENT_CHUNK].double() / cell + g / 2
        u1 = ends[s0 : s0 + SEGMENT_CHUNK].double() / cell + g / 2
        for u in (u0, u1):
            c = torch.floor(u).long()
            c = c[((c >= 0) & (c < g)).all(dim=1)]
            raster[c[:, 0] * g + c[:, 1]] = True
        for axis in (0, 1):
            raster[_crossing_cells(u0, u1, axis, g)] = True
    return raster.reshape(g, g)


def bone_raster(
    joints: torch.Tensor,
    cell: float = 0.005,
    extent: float = 2.0,
    bones: Sequence[int] = DICE_BONES,
) -> torch.Tensor:
    """Union over frames of the frontal-plane (x–y) raster of the bones child → parent for each
    child in `bones`.

    `joints` (T,55,3) are global positions; they are root-aligned here so the grid is centred on the
    pelvis.
    """
    child = list(bones)
    xy = (joints - joints[:, :1])[..., :2]
    return rasterise_segments(
        xy[:, child].reshape(-1, 2), xy[:, PARENTS[child]].reshape(-1, 2), cell, extent
    )


def dice(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """2|A∩B| / (|A| + |B|) of two binary rasters, float64; 1 when both are empty (identical)."""
    total = int(a.sum()) + int(b.sum())
    if total == 0:
        return torch.tensor(1.0, dtype=torch.float64)
    return 2.0 * torch.tensor(int((a & b).sum()), dtype=torch.float64) / total
