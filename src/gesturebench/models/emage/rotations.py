"""6D rotations (pytorch3d's layout: the first two rows of the matrix) to axis-angle, in torch, for
decoding EMAGE's motion codes on the device the model runs on."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def rotation_6d_to_matrix(d6: torch.Tensor) -> torch.Tensor:
    """(…, 6) → (…, 3, 3): Gram–Schmidt on the two rows the 6D form holds."""
    b1 = F.normalize(d6[..., :3], dim=-1)
    a2 = d6[..., 3:]
    b2 = F.normalize(a2 - (b1 * a2).sum(-1, keepdim=True) * b1, dim=-1)
    return torch.stack([b1, b2, torch.linalg.cross(b1, b2)], dim=-2)


def matrix_to_axis_angle(m: torch.Tensor) -> torch.Tensor:
    """(…, 3, 3) → (…, 3), angle in [0, π]: through the unit quaternion with w ≥ 0, whose vector
    part takes its signs from the antisymmetric part of `m`."""
    diag = m.diagonal(dim1=-2, dim2=-1)
    signs = torch.tensor([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], dtype=m.dtype)
    mags = 0.5 * (1 + diag @ signs.to(m.device).T).clamp(min=0).sqrt()  # |w|, |x|, |y|, |z|
    skew = torch.stack(
        [m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]], -1
    )
    vec = torch.where(skew < 0, -mags[..., 1:], mags[..., 1:])
    norm = vec.norm(dim=-1, keepdim=True)
    half = torch.atan2(norm, mags[..., :1])
    small = norm < 1e-9
    scale = torch.where(small, 2.0 / mags[..., :1], 2.0 * half / torch.where(small, 1.0, norm))
    return vec * scale


def rotation_6d_to_axis_angle(d6: torch.Tensor) -> torch.Tensor:
    """(…, 6) → (…, 3)."""
    return matrix_to_axis_angle(rotation_6d_to_matrix(d6))
