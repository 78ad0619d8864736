"""Pose variance over time of one sequence (the GENEA Leaderboard's Div_k; docs/protocols.md)."""

from __future__ import annotations

import torch


def pose_variance(poses: torch.Tensor) -> torch.Tensor:
    """Mean over the pose values (T,D) of their variance over the T frames (population variance,
    as `numpy.var`); float64 scalar."""
    return poses.double().reshape(poses.shape[0], -1).var(dim=0, correction=0).mean()
