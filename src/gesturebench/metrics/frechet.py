"""FGD: Fréchet Gesture Distance between reference and generated motion-autoencoder features, with
`fgd_raw_pose` (docs/metrics.md, FGD).

`fgd_raw_pose` is the same Fréchet distance on encoder-free features: the window mean of the
per-frame representation (55 6D rotations + root velocity, REP_DIM values).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from gesturebench.encoders.representation import REP_DIM
from gesturebench.metrics.functional.frechet import batch_moments, frechet_distance, merge_moments
from gesturebench.metrics.motion_features import GENERATED, REFERENCE, MotionFeatureMetric
from gesturebench.metrics.pair import MotionPair

#: Feature spaces of FGD's values, in `value_names` order: encoder features, raw pose.
SPACES = ("feat", "raw")


class FGD(MotionFeatureMetric):
    """FGD ↓ between reference and generated window features, plus `fgd_raw_pose`.

    States, index 0 = reference, 1 = generated: each process's window count and, per feature space,
    the mean and scatter Σ(x − μ)(x − μ)ᵀ of its windows (float64), each batch pooled in by
    `merge_moments`. Sums of x and xxᵀ would be simpler to reduce but lose the covariance to
    cancellation when the features' mean is large against their spread (1.8 % off at an offset of
    1e6); partial moments pool exactly, but not by adding. So the states are not reduced
    arithmetically (``dist_reduce_fx=None``): a DDP sync stacks every process's partial along a
    new first axis, and `compute` pools all of them with the same `merge_moments`.
    """

    default_name = "fgd"
    direction = "lower"
    extras = ("{name}_raw_pose",)
    count: torch.Tensor

    def __init__(self, encoder_config: Mapping | None = None, **kwargs: Any):
        super().__init__(encoder_config, **kwargs)
        dims = {"feat": self.encoder_config.latent_dim, "raw": REP_DIM}
        f64 = torch.float64
        for space, dim in dims.items():
            self.add_state(f"{space}_mean", torch.zeros(2, dim, dtype=f64), dist_reduce_fx=None)
            self.add_state(
                f"{space}_scatter", torch.zeros(2, dim, dim, dtype=f64), dist_reduce_fx=None
            )
        self.add_state("count", torch.zeros(2, dtype=f64), dist_reduce_fx=None)

    def extra_options(self) -> dict:
        return {
            **super().extra_options(),
            "raw_pose_features": f"window mean of the {REP_DIM}-d representation",
        }

    def pooled(self, space: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Window counts (2,), means (2, dim) and scatters (2, dim, dim) of feature space `space`,
        pooled over the partials that a sync stacked (one partial before a sync)."""
        mean, scatter = getattr(self, f"{space}_mean"), getattr(self, f"{space}_scatter")
        dim = mean.shape[-1]
        return merge_moments(
            self.count.reshape(-1, 2), mean.reshape(-1, 2, dim), scatter.reshape(-1, 2, dim, dim)
        )

    def update(self, pair: MotionPair) -> None:
        for i in (REFERENCE, GENERATED):
            w, features = self.pair_features(pair, i)
            n = self.count[i].clone()
            for space, f in (("feat", features), ("raw", w.mean(1))):
                mean, scatter = getattr(self, f"{space}_mean"), getattr(self, f"{space}_scatter")
                batch = batch_moments(f)
                _, mean[i], scatter[i] = merge_moments(
                    torch.stack([n, batch[0]]),
                    torch.stack([mean[i], batch[1]]),
                    torch.stack([scatter[i], batch[2]]),
                )
            self.count[i] += w.shape[0]

    def skip_reason(self) -> str | None:
        count = self.count.reshape(-1, 2).sum(0)
        if count.min() >= 2:
            return None
        return (
            f"FGD needs at least 2 windows of reference and of generated motion; got "
            f"{int(count[REFERENCE])} and {int(count[GENERATED])}"
        )

    def compute_values(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for name, space in zip(self.value_names, SPACES, strict=True):
            n, mean, scatter = self.pooled(space)
            ref, gen = ((mean[i], scatter[i] / (n[i] - 1)) for i in (REFERENCE, GENERATED))
            out[name] = float(frechet_distance(*ref, *gen))
        return out
