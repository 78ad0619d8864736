"""PCK on root-aligned BODY_HANDS joints (docs/metrics.md, MJD and PCK)."""

from __future__ import annotations

import torch

from gesturebench.metrics.functional.joint_error import joint_distances


def pck(gen_joints: torch.Tensor, ref_joints: torch.Tensor, threshold: float = 0.1) -> torch.Tensor:
    """PCK: fraction of (frame, joint) pairs closer than `threshold` metres."""
    return (joint_distances(gen_joints, ref_joints) < threshold).double().mean()
