"""The base of Density and Coverage (Naeem et al. 2020): generated motion-autoencoder features
counted in k-NN balls around the reference's (docs/metrics.md, Density and Coverage)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from torchmetrics.utilities import dim_zero_cat

from gesturebench.metrics.base import cat_state
from gesturebench.metrics.functional.neighbour import BallHits, ball_hits
from gesturebench.metrics.motion_features import GENERATED, REFERENCE, MotionFeatureMetric
from gesturebench.metrics.pair import MotionPair
from gesturebench.stats.bootstrap import Resamples


class NeighbourMetric(MotionFeatureMetric):
    """Base of Density and Coverage: all reference and generated features kept as `"cat"` states,
    with each sequence's split index and window counts; `statistic(real, fake, k, chunk_size)` is
    the functional form, `resampled(balls, draws, k)` its bootstrap."""

    direction = "higher"
    hidden_options = ("encoder_config", "weights", "chunk_size")
    statistic: Callable[[torch.Tensor, torch.Tensor, int, int], torch.Tensor]
    resampled: Callable[[BallHits, torch.Tensor, int], torch.Tensor]
    ref_features: list[torch.Tensor]
    gen_features: list[torch.Tensor]
    seq_index: list[torch.Tensor]
    seq_windows: list[torch.Tensor]

    def __init__(
        self,
        k: int = 5,
        chunk_size: int = 1024,
        encoder_config: Mapping | None = None,
        **kwargs: Any,
    ):
        super().__init__(encoder_config, **kwargs)
        self.k = k
        self.chunk_size = chunk_size
        self.add_state("ref_features", default=[], dist_reduce_fx="cat")
        self.add_state("gen_features", default=[], dist_reduce_fx="cat")
        self.add_state("seq_index", default=[], dist_reduce_fx="cat")
        self.add_state("seq_windows", default=[], dist_reduce_fx="cat")

    def update(self, pair: MotionPair) -> None:
        ref, gen = (self.pair_features(pair, i)[1] for i in (REFERENCE, GENERATED))
        self.ref_features.append(ref)
        self.gen_features.append(gen)
        self.seq_index.append(torch.tensor([pair.index], dtype=torch.int64, device=self.device))
        self.seq_windows.append(
            torch.tensor([[len(ref), len(gen)]], dtype=torch.int64, device=self.device)
        )

    def skip_reason(self) -> str | None:
        real, fake = cat_state(self.ref_features), cat_state(self.gen_features)
        n = 0 if real is None else real.shape[0]
        if n > self.k and fake is not None:
            return None
        return (
            f"{self.name} needs more than k={self.k} reference windows and at least one "
            f"generated; got {n}"
        )

    def compute_values(self) -> dict[str, float | None]:
        real, fake = dim_zero_cat(self.ref_features), dim_zero_cat(self.gen_features)
        return {self.name: float(self.statistic(real, fake, self.k, self.chunk_size))}

    def bootstrap(self, resamples: Resamples) -> dict[str, np.ndarray]:
        """The statistic of each resample, the reference balls keeping the radii of the full
        reference set (docs/statistics.md): one distance pass, then matrix products."""
        index = cat_state(self.seq_index)
        if index is None:
            return {}
        windows = dim_zero_cat(self.seq_windows).reshape(len(index), 2)
        owners = torch.arange(len(index), device=windows.device)
        real_owner, fake_owner = (owners.repeat_interleave(windows[:, i]) for i in (0, 1))
        real, fake = dim_zero_cat(self.ref_features), dim_zero_cat(self.gen_features)
        balls = ball_hits(real, fake, real_owner, fake_owner, len(index), self.k, self.chunk_size)
        draws = torch.from_numpy(resamples.of(index.cpu().numpy())).to(balls.hits)
        replicates = self.resampled(balls, draws, self.k)
        return {self.name: replicates.cpu().numpy()}
