"""Foot-contact rate from the heel and toe vertices of both feet (docs/metrics.md, foot
contact).

A point touches the floor in a frame when its height above the floor is at most `height` metres and
its horizontal (x–z) speed, by central differences at `fps` (one-sided at the ends), is below
`speed` m/s. The floor is the `percentile`-th percentile of the six points' heights over the
sequence (y is up).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from gesturebench.body.joints import LEFT_FOOT_VERTICES, RIGHT_FOOT_VERTICES


def contact_frames(
    vertices: torch.Tensor,
    fps: float,
    height: float = 0.03,
    speed: float = 0.10,
    percentile: float = 1.0,
    feet: Sequence[Sequence[int]] = (LEFT_FOOT_VERTICES, RIGHT_FOOT_VERTICES),
    min_points: int = 2,
) -> torch.Tensor:
    """(T,) bool: frames where at least one foot has `min_points` of its points in contact.

    `vertices` (T,V,3) are global positions in metres.
    """
    points = vertices[:, [v for foot in feet for v in foot]].double()  # (T, P, 3)
    y = points[..., 1]
    floor = torch.quantile(y.reshape(-1), percentile / 100.0)
    if points.shape[0] > 1:
        velocity = torch.gradient(points[..., [0, 2]], spacing=1.0 / fps, dim=0)[0]
        horizontal_speed = torch.linalg.vector_norm(velocity, dim=-1)
    else:
        horizontal_speed = torch.zeros_like(y)
    touching = (y - floor <= height) & (horizontal_speed < speed)  # (T, P)
    per_foot = touching.reshape(points.shape[0], len(feet), -1).sum(dim=-1) >= min_points
    return per_foot.any(dim=-1)


def contact_rate(vertices: torch.Tensor, fps: float, **options: Any) -> torch.Tensor:
    """Fraction of frames in contact, float64 (see `contact_frames` for the options)."""
    return contact_frames(vertices, fps, **options).double().mean()
