"""MJD on root-aligned BODY_HANDS joints (docs/metrics.md, MJD and PCK)."""

from __future__ import annotations

import torch

from gesturebench.metrics.functional.joint_error import joint_distances


def mean_joint_distance(gen_joints: torch.Tensor, ref_joints: torch.Tensor) -> torch.Tensor:
    """MJD: mean over frames and joints of the root-aligned joint distance, metres."""
    return joint_distances(gen_joints, ref_joints).mean()
