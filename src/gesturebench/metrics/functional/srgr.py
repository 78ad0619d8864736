"""SRGR (BEAT; docs/metrics.md, SRGR): PCK of the body+hand joints weighted per frame by semantic
relevance."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from gesturebench.data.records import SemInterval
from gesturebench.metrics.functional.joint_error import joint_distances


def semantic_weights(sem: Sequence[SemInterval], n_frames: int, fps: float) -> np.ndarray:
    """w_t per frame (T,): the score of the `sem` interval holding frame t's time t/fps (start ≤ t <
    end).

    Where intervals overlap the highest score wins; 0 outside every interval.
    """
    times = np.arange(n_frames) / fps
    weights = np.zeros(n_frames)
    for interval in sem:
        inside = (times >= interval.start) & (times < interval.end)
        weights[inside] = np.maximum(weights[inside], interval.score)
    return weights


def srgr(
    gen_joints: torch.Tensor, ref_joints: torch.Tensor, weights: np.ndarray, threshold: float = 0.1
) -> torch.Tensor:
    """(1/(T·J)) Σ_t w_t Σ_j 1[‖p − p̂‖ < δ] over root-aligned BODY_HANDS joints (float64 scalar)."""
    hits = (joint_distances(gen_joints, ref_joints) < threshold).double().cpu().numpy()
    return torch.tensor((np.asarray(weights)[:, None] * hits).mean(), dtype=torch.float64)
