"""FGD: Fréchet Gesture Distance between reference and generated motion-autoencoder features, with
`fgd_raw_pose` (docs/metrics.md, FGD).

`fgd_raw_pose` is the same Fréchet distance on encoder-free features: the window mean of the
per-frame representation (55 6D rotations + root velocity, REP_DIM values).

`covariance_offset` ε adds ε·I to both covariances inside the matrix square root only, as EMAGE's
2025 evaluation code does (ε = 1e-6; its traces stay unshifted); 0 is the plain formula (EMAGE's
2024 code, which shifts only when the square root is not finite).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from gesturebench.encoders.representation import REP_DIM
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.functional.frechet import batch_moments, frechet_distance, merge_moments
from gesturebench.metrics.motion_features import GENERATED, REFERENCE, MotionFeatureMetric
from gesturebench.metrics.pair import MotionPair

#: Feature spaces of FGD's values, in `value_names` order: encoder features, raw pose.
SPACES = ("feat", "raw")


class FGD(MotionFeatureMetric):
    """FGD ↓ between reference and generated window features, plus `fgd_raw_pose`.

    States, index 0 = reference, 1 = generated, per feature space: each process's feature count,
    mean and scatter Σ(x − μ)(x − μ)ᵀ of its windows (float64), each batch pooled in by
    `merge_moments`. Sums of x and xxᵀ would be simpler to reduce but lose the covariance to
    cancellation when the features' mean is large against their spread (1.8 % off at an offset of
    1e6); partial moments pool exactly, but not by adding. So the states are not reduced
    arithmetically (``dist_reduce_fx=None``): a DDP sync stacks every process's partial along a
    new first axis, and `compute` pools all of them with the same `merge_moments`.
    """

    default_name = "fgd"
    direction = "lower"
    extras = ("{name}_raw_pose",)
    feat_count: torch.Tensor

    def __init__(
        self,
        encoder_config: Mapping | None = None,
        covariance_offset: float = 0.0,
        **kwargs: Any,
    ):
        super().__init__(encoder_config, **kwargs)
        self.covariance_offset = covariance_offset
        self.add_space_states("feat", self.feature_dim)
        self.add_space_states("raw", REP_DIM)

    def add_space_states(self, space: str, dim: int) -> None:
        f64 = torch.float64
        self.add_state(f"{space}_count", torch.zeros(2, dtype=f64), dist_reduce_fx=None)
        self.add_state(f"{space}_mean", torch.zeros(2, dim, dtype=f64), dist_reduce_fx=None)
        self.add_state(f"{space}_scatter", torch.zeros(2, dim, dim, dtype=f64), dist_reduce_fx=None)

    def prepare(self, context: MetricContext) -> None:
        """Load the encoder; re-create the feature states when `encoder: auto` chose EMAGE's."""
        dim = self.feature_dim
        super().prepare(context)
        if self.feature_dim != dim:
            self.add_space_states("feat", self.feature_dim)
            self.to(self.device)

    def extra_options(self) -> dict:
        return {
            **super().extra_options(),
            "raw_pose_features": f"window mean of the {REP_DIM}-d representation",
        }

    def pooled(self, space: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Window counts (2,), means (2, dim) and scatters (2, dim, dim) of feature space `space`,
        pooled over the partials that a sync stacked (one partial before a sync)."""
        count = getattr(self, f"{space}_count")
        mean, scatter = getattr(self, f"{space}_mean"), getattr(self, f"{space}_scatter")
        dim = mean.shape[-1]
        return merge_moments(
            count.reshape(-1, 2), mean.reshape(-1, 2, dim), scatter.reshape(-1, 2, dim, dim)
        )

    def update(self, pair: MotionPair) -> None:
        for i in (REFERENCE, GENERATED):
            w, features = self.pair_features(pair, i)
            for space, f in (("feat", features), ("raw", w.mean(1))):
                count = getattr(self, f"{space}_count")
                mean, scatter = getattr(self, f"{space}_mean"), getattr(self, f"{space}_scatter")
                batch = batch_moments(f)
                count[i], mean[i], scatter[i] = merge_moments(
                    torch.stack([count[i], batch[0]]),
                    torch.stack([mean[i], batch[1]]),
                    torch.stack([scatter[i], batch[2]]),
                )

    def skip_reason(self) -> str | None:
        count = self.feat_count.reshape(-1, 2).sum(0)
        if count.min() >= 2:
            return None
        return (
            f"FGD needs at least 2 features of reference and of generated motion; got "
            f"{int(count[REFERENCE])} and {int(count[GENERATED])}"
        )

    def compute_values(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for name, space in zip(self.value_names, SPACES, strict=True):
            n, mean, scatter = self.pooled(space)
            if n.min() < 2:
                out[name] = None
                continue
            ref, gen = ((mean[i], scatter[i] / (n[i] - 1)) for i in (REFERENCE, GENERATED))
            out[name] = float(frechet_distance(*ref, *gen, offset=self.covariance_offset))
        return out
