"""SRGR (BEAT; docs/metrics.md, SRGR): PCK of the body+hand joints weighted per frame by semantic
relevance."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import torch

from gesturebench.body.joints import BODY_HANDS
from gesturebench.data.records import SemInterval
from gesturebench.metrics.functional.joint_error import joint_distances

#: `semantic_weights` frame conventions: frames whose time lies in [start, end) (ours), or the
#: GENEA Leaderboard's frames ⌊start·fps⌋ … ⌈end·fps⌉ − 1 of each interval with end > start.
SemFrames = Literal["contains", "official"]


def semantic_weights(
    sem: Sequence[SemInterval], n_frames: int, fps: float, frames: SemFrames = "contains"
) -> np.ndarray:
    """w_t per frame (T,): the score of the `sem` interval holding frame t (`frames` says which
    frames an interval holds: `SemFrames`).

    Where intervals overlap the highest score wins; 0 outside every interval.
    """
    times = np.arange(n_frames) / fps
    weights = np.zeros(n_frames)
    for interval in sem:
        inside: slice | np.ndarray
        if frames == "official":
            if interval.end <= interval.start:
                continue
            inside = slice(int(np.floor(interval.start * fps)), int(np.ceil(interval.end * fps)))
        else:
            inside = (times >= interval.start) & (times < interval.end)
        weights[inside] = np.maximum(weights[inside], interval.score)
    return weights


def srgr(
    gen_joints: torch.Tensor,
    ref_joints: torch.Tensor,
    weights: np.ndarray,
    threshold: float = 0.1,
    joint_ids: Sequence[int] = BODY_HANDS,
) -> torch.Tensor:
    """(1/(T·J)) Σ_t w_t Σ_j 1[‖p − p̂‖ < δ] over the root-aligned `joint_ids` (float64 scalar)."""
    hits = (joint_distances(gen_joints, ref_joints, joint_ids) < threshold).double().cpu().numpy()
    return torch.tensor((np.asarray(weights)[:, None] * hits).mean(), dtype=torch.float64)
