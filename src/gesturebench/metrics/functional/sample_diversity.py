"""Diversity across samples of the same input: the GENEA Leaderboard's Div_sample
(docs/statistics.md, "Several samples per input")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from gesturebench.metrics.functional.div_k import pose_variance


def sample_diversity(samples: Sequence[np.ndarray | torch.Tensor]) -> torch.Tensor:
    """Mean over frames and pose values of their variance across K ≥ 2 samples (each (T_k, D), cut
    to the shortest; population variance, as `numpy.var`); float64 scalar."""
    if len(samples) < 2:
        raise ValueError(f"sample diversity needs at least 2 samples, got {len(samples)}")
    frames = min(len(s) for s in samples)
    stacked = torch.stack([torch.as_tensor(s[:frames], dtype=torch.float64) for s in samples])
    return pose_variance(stacked.reshape(len(samples), -1))
