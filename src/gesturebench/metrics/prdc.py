"""Density and Coverage (Naeem et al. 2020) of generated motion-autoencoder features around the
reference's (docs/metrics.md, Density and Coverage)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torchmetrics.utilities import dim_zero_cat

from gesturebench.metrics.base import cat_state
from gesturebench.metrics.functional.prdc import coverage, density
from gesturebench.metrics.motion_features import GENERATED, REFERENCE, MotionFeatureMetric
from gesturebench.metrics.pair import MotionPair


class NeighbourMetric(MotionFeatureMetric):
    """Base of Density and Coverage: all reference and generated features kept as `"cat"` states;
    `statistic(real, fake, k, chunk_size)` is the functional form."""

    direction = "higher"
    hidden_options = ("encoder_config", "weights", "chunk_size")
    statistic: Callable[[torch.Tensor, torch.Tensor, int, int], torch.Tensor]
    ref_features: list[torch.Tensor]
    gen_features: list[torch.Tensor]

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

    def update(self, pair: MotionPair) -> None:
        self.ref_features.append(self.pair_features(pair, REFERENCE)[1])
        self.gen_features.append(self.pair_features(pair, GENERATED)[1])

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


class Density(NeighbourMetric):
    """Density ↑: mean count of reference k-NN balls containing a generated feature, over k."""

    default_name = "density"
    statistic = staticmethod(density)


class Coverage(NeighbourMetric):
    """Coverage ↑: fraction of reference k-NN balls containing a generated feature."""

    default_name = "coverage"
    statistic = staticmethod(coverage)
