"""Per-(frame, joint) position errors on root-aligned joints, shared by MJD, PCK and SRGR
(docs/metrics.md)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from gesturebench.body.joints import BODY_HANDS


def joint_distances(
    gen_joints: torch.Tensor, ref_joints: torch.Tensor, joint_ids: Sequence[int] = BODY_HANDS
) -> torch.Tensor:
    """‖p − p̂‖₂ per (frame, joint of `joint_ids`) after root alignment: (T, 51) by default."""
    idx = list(joint_ids)
    gen = gen_joints[:, idx] - gen_joints[:, :1]
    ref = ref_joints[:, idx] - ref_joints[:, :1]
    return torch.linalg.vector_norm(gen.double() - ref.double(), dim=-1)
