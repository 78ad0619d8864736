"""Gesture area coverage: bones rasterised on the frontal plane and the Dice overlap of two rasters (METRICS.md §9).

The grid is `extent` × `extent` metres centred on the pelvis, in square cells of side `cell`; cell (i, j)
holds the half-open square [i, i+1) × [j, j+1) in cell units. A segment marks every cell it passes through:
the cells of its two ends and, at each point where it crosses a grid line strictly between its ends, the two
cells on either side of that line. That is exact (no sampling step) and vectorised; a segment running exactly
through a grid corner may also mark the two cells that touch it only there.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from gesturebench.body.joints import DICE_BONES, PARENTS

#: Segments rasterised per chunk (bounds the memory of the crossing tables).
SEGMENT_CHUNK = 1 << 14


def grid_size(cell: float, extent: float) -> int:
    return int(round(extent / cell))


def _line_crossings(u0: torch.Tensor, u1: torch.Tensor, axis: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Cells on both sides of each strict-interior crossing of the grid lines ⟂ `axis`: ((S·K·2, 2), valid mask)."""
    a0, a1 = u0[:, axis], u1[:, axis]
    lo = torch.floor(torch.minimum(a0, a1)) + 1
    hi = torch.ceil(torch.maximum(a0, a1)) - 1
    count = (hi - lo + 1).clamp(min=0)
    k_max = int(count.max()) if count.numel() else 0
    k = lo[:, None] + torch.arange(k_max, dtype=u0.dtype, device=u0.device)  # (S, K)
    valid = torch.arange(k_max, device=u0.device)[None] < count[:, None]
    t = (k - a0[:, None]) / torch.where(a1 == a0, torch.ones_like(a0), a1 - a0)[:, None]
    other = torch.floor(u0[:, 1 - axis, None] + t * (u1[:, 1 - axis] - u0[:, 1 - axis])[:, None])
    cells = []
    for line_side in (k - 1, k):
        c = torch.empty(k.shape + (2,), dtype=u0.dtype, device=u0.device)
        c[..., axis], c[..., 1 - axis] = line_side, other
        cells.append(c)
    return torch.stack(cells, dim=2).reshape(-1, 2), valid[:, :, None].expand(-1, -1, 2).reshape(-1)


def rasterise_segments(
    starts: torch.Tensor, ends: torch.Tensor, cell: float = 0.005, extent: float = 2.0
) -> torch.Tensor:
    """Binary (G,G) raster, G = extent/cell, of the segments starts[s] → ends[s] ((S,2), metres, origin at the centre)."""
    g = grid_size(cell, extent)
    raster = torch.zeros(g * g, dtype=torch.bool, device=starts.device)
    for s0 in range(0, starts.shape[0], SEGMENT_CHUNK):
        u0 = starts[s0 : s0 + SEGMENT_CHUNK].double() / cell + g / 2
        u1 = ends[s0 : s0 + SEGMENT_CHUNK].double() / cell + g / 2
        cx, vx = _line_crossings(u0, u1, 0)
        cy, vy = _line_crossings(u0, u1, 1)
        cells = torch.cat([torch.floor(u0), torch.floor(u1), cx[vx], cy[vy]]).long()
        inside = ((cells >= 0) & (cells < g)).all(dim=1)
        cells = cells[inside]
        raster[cells[:, 0] * g + cells[:, 1]] = True
    return raster.reshape(g, g)


def bone_raster(
    joints: torch.Tensor, cell: float = 0.005, extent: float = 2.0, bones: Sequence[int] = DICE_BONES
) -> torch.Tensor:
    """Union over frames of the frontal-plane (x–y) raster of the bones child → parent for each child in `bones`.

    `joints` (T,55,3) are global positions; they are root-aligned here so the grid is centred on the pelvis.
    """
    child = list(bones)
    xy = (joints - joints[:, :1])[..., :2]
    return rasterise_segments(xy[:, child].reshape(-1, 2), xy[:, PARENTS[child]].reshape(-1, 2), cell, extent)


def dice(a: torch.Tensor, b: torch.Tensor) -> float:
    """2|A∩B| / (|A| + |B|) of two binary rasters; 1 when both are empty (identical)."""
    total = int(a.sum()) + int(b.sum())
    return 1.0 if total == 0 else 2.0 * int((a & b).sum()) / total
