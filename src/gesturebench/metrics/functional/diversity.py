"""L1 motion diversity of one sequence (EMAGE-style; docs/metrics.md, Diversity)."""

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
