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
from gesturebench.metrics.functional.frechet import frechet_distance, moments
from gesturebench.metrics.motion_features import GENERATED, REFERENCE, MotionFeatureMetric
from gesturebench.metrics.pair import MotionPair

#: Feature spaces of FGD's values, in `value_names` order: encoder features, raw pose.
SPACES = ("feat", "raw")


class FGD(MotionFeatureMetric):
    """FGD ↓ between reference and generated window features, plus `fgd_raw_pose`.

    States per feature space, index 0 = reference, 1 = generated: Σx, Σxxᵀ (float64) and window
    counts, all summed across processes.
    """

    direction = "lower"
    extras = ("{name}_raw_pose",)
    count: torch.Tensor

    def __init__(self, name: str = "fgd", encoder_config: Mapping | None = None, **kwargs: Any):
        super().__init__(name, encoder_config, **kwargs)
        dims = {"feat": self.encoder_config.latent_dim, "raw": REP_DIM}
        f64 = torch.float64
        for space, dim in dims.items():
            self.add_state(f"{space}_sum", torch.zeros(2, dim, dtype=f64), dist_reduce_fx="sum")
            self.add_state(
                f"{space}_outer", torch.zeros(2, dim, dim, dtype=f64), dist_reduce_fx="sum"
            )
        self.add_state("count", torch.zeros(2, dtype=f64), dist_reduce_fx="sum")

    def extra_options(self) -> dict:
        return {
            **super().extra_options(),
            "raw_pose_features": f"window mean of the {REP_DIM}-d representation",
        }

    def moments(self, space: str) -> tuple[torch.Tensor, torch.Tensor]:
        """The (2, dim) Σx and (2, dim, dim) Σxxᵀ states of feature space `space`."""
        return getattr(self, f"{space}_sum"), getattr(self, f"{space}_outer")

    def update(self, pair: MotionPair) -> None:
        for i in (REFERENCE, GENERATED):
            w, features = self.pair_features(pair, i)
            for space, f in (("feat", features), ("raw", w.mean(1))):
                f = f.double()
                total, outer = self.moments(space)
                total[i] += f.sum(0)
                outer[i] += f.T @ f
            self.count[i] += w.shape[0]

    def skip_reason(self) -> str | None:
        if self.count.min() >= 2:
            return None
        return (
            f"FGD needs at least 2 windows of reference and of generated motion; got "
            f"{int(self.count[REFERENCE])} and {int(self.count[GENERATED])}"
        )

    def compute_values(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for name, space in zip(self.value_names, SPACES, strict=True):
            total, outer = self.moments(space)
            ref, gen = (moments(total[i], outer[i], self.count[i]) for i in (REFERENCE, GENERATED))
            out[name] = float(frechet_distance(*ref, *gen))
        return out
