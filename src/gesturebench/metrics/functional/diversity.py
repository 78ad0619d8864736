"""Motion diversity of one sequence: L1 spread of joints (EMAGE-style; docs/metrics.md, Diversity)
and pose variance over time (the GENEA Leaderboard's Div_k; docs/protocols.md)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from gesturebench.body.joints import BODY_HANDS


def l1_diversity(joints: torch.Tensor, joint_ids: Sequence[int] = BODY_HANDS) -> torch.Tensor:
    """Mean over frames of Σ_{joint_ids, xyz} |p_t − p̄|, p root-aligned (T,55,3) → p̄ its temporal
    mean; metres (float64 scalar)."""
    joints = joints.double()
    p = joints[:, list(joint_ids)] - joints[:, :1]
    return (p - p.mean(dim=0)).abs().sum(dim=(1, 2)).mean()


def pose_variance(poses: torch.Tensor) -> torch.Tensor:
    """Mean over the pose values (T,D) of their variance over the T frames (population variance,
    as `numpy.var`); float64 scalar."""
    return poses.double().reshape(poses.shape[0], -1).var(dim=0, correction=0).mean()
