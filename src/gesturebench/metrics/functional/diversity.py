"""Motion diversity of one sequence: L1 spread of joints (EMAGE-style; docs/metrics.md,
Diversity)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from gesturebench.body.joints import BODY_HANDS


def l1_diversity(joints: torch.Tensor, joint_ids: Sequence[int] = BODY_HANDS) -> torch.Tensor:
    """Mean over frames of Σ_{joint_ids, xyz} |p_t − p̄|, p root-aligned (T,55,3) → p̄ its temporal
    mean; metres (float64 scalar).

    One float64 copy, updated in place (all joints: no gather), for the same values as the plain
    expression at several times its speed; the root is subtracted one coordinate at a time, since a
    (T,J) minus (T,1) loop runs along the joints while a (T,J,3) minus (T,1,3) one runs three values
    at a time.
    """
    p = joints.to(torch.float64, copy=True)  # a copy even of float64 input: updated in place
    root = p[:, 0].clone()
    if tuple(joint_ids) != tuple(range(p.shape[1])):
        p = p[:, list(joint_ids)]
    for axis in range(3):
        p[..., axis] -= root[:, axis, None]
    p -= p.mean(dim=0)
    return p.abs_().sum(dim=(1, 2)).mean()
