"""FGD: Fréchet Gesture Distance between reference and generated motion-autoencoder features, with
`fgd_raw_pose` (docs/metrics.md, FGD).

`fgd_raw_pose` is the same Fréchet distance on encoder-free features: the window mean of the
per-frame representation (55 6D rotations + root velocity, REP_DIM values).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torchmetrics.utilities import dim_zero_cat

from gesturebench.encoders.representation import REP_DIM
from gesturebench.metrics.base import cat_state
from gesturebench.metrics.functional.frechet import frechet_distance, moments
from gesturebench.metrics.motion_features import GENERATED, REFERENCE, MotionFeatureMetric
from gesturebench.metrics.pair import MotionPair
from gesturebench.stats.bootstrap import Resamples

#: Feature spaces of FGD's values, in `value_names` order: encoder features, raw pose.
SPACES = ("feat", "raw")
#: Resamples whose (2, dim, dim) moments are held at once by `FGD.bootstrap`.
BOOTSTRAP_CHUNK = 100


class FGD(MotionFeatureMetric):
    """FGD ↓ between reference and generated window features, plus `fgd_raw_pose`.

    States per feature space, index 0 = reference, 1 = generated: Σx, Σxxᵀ (float64) and window
    counts, all summed across processes; and the same per sequence (`"cat"`, with split indices),
    from which the bootstrap sums the resampled sequences' moments exactly.
    """

    direction = "lower"
    extras = ("{name}_raw_pose",)
    count: torch.Tensor
    seq_index: list[torch.Tensor]
    seq_count: list[torch.Tensor]

    def __init__(self, name: str = "fgd", encoder_config: Mapping | None = None, **kwargs: Any):
        super().__init__(name, encoder_config, **kwargs)
        dims = {"feat": self.encoder_config.latent_dim, "raw": REP_DIM}
        f64 = torch.float64
        for space, dim in dims.items():
            self.add_state(f"{space}_sum", torch.zeros(2, dim, dtype=f64), dist_reduce_fx="sum")
            self.add_state(
                f"{space}_outer", torch.zeros(2, dim, dim, dtype=f64), dist_reduce_fx="sum"
            )
            self.add_state(f"{space}_seq_sum", default=[], dist_reduce_fx="cat")
            self.add_state(f"{space}_seq_outer", default=[], dist_reduce_fx="cat")
        self.add_state("count", torch.zeros(2, dtype=f64), dist_reduce_fx="sum")
        self.add_state("seq_index", default=[], dist_reduce_fx="cat")
        self.add_state("seq_count", default=[], dist_reduce_fx="cat")

    def extra_options(self) -> dict:
        return {
            **super().extra_options(),
            "raw_pose_features": f"window mean of the {REP_DIM}-d representation",
        }

    def moments(self, space: str) -> tuple[torch.Tensor, torch.Tensor]:
        """The (2, dim) Σx and (2, dim, dim) Σxxᵀ states of feature space `space`."""
        return getattr(self, f"{space}_sum"), getattr(self, f"{space}_outer")

    def update(self, pair: MotionPair) -> None:
        sides = [self.pair_features(pair, i) for i in (REFERENCE, GENERATED)]
        for space in SPACES:
            sums, outers = [], []
            for i, (w, features) in enumerate(sides):
                f = (features if space == "feat" else w.mean(1)).double()
                sums.append(f.sum(0))
                outers.append(f.T @ f)
                total, outer = self.moments(space)
                total[i] += sums[i]
                outer[i] += outers[i]
            getattr(self, f"{space}_seq_sum").append(torch.stack(sums)[None])
            getattr(self, f"{space}_seq_outer").append(torch.stack(outers)[None])
        counts = [float(w.shape[0]) for w, _ in sides]
        self.count += torch.tensor(counts, dtype=torch.float64, device=self.count.device)
        self.seq_count.append(self.count.new_tensor([counts]))
        self.seq_index.append(torch.tensor([pair.index], dtype=torch.int64, device=self.device))

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

    def bootstrap(self, resamples: Resamples) -> dict[str, np.ndarray]:
        """FGD of each resample, from the drawn sequences' summed moments (a sum of sums is
        exact); computed in chunks of `BOOTSTRAP_CHUNK` resamples to bound memory."""
        index = cat_state(self.seq_index)
        if index is None:
            return {}
        counts = torch.from_numpy(resamples.of(index.cpu().numpy())).to(self.device, torch.float64)
        windows = counts @ dim_zero_cat(self.seq_count).reshape(len(index), 2)  # (B, 2)
        out = {}
        for name, space in zip(self.value_names, SPACES, strict=True):
            sums = dim_zero_cat(getattr(self, f"{space}_seq_sum")).reshape(len(index), -1)
            outers = dim_zero_cat(getattr(self, f"{space}_seq_outer")).reshape(len(index), -1)
            dim = self.moments(space)[0].shape[-1]
            replicates = []
            for chunk in torch.split(torch.arange(len(counts)), BOOTSTRAP_CHUNK):
                c, n = counts[chunk], windows[chunk]
                total = (c @ sums).reshape(-1, 2, dim)
                outer = (c @ outers).reshape(-1, 2, dim, dim)
                ref, gen = (moments(total[:, i], outer[:, i], n[:, i]) for i in (0, 1))
                fd = frechet_distance(*ref, *gen)
                replicates.append(torch.where(n.min(1).values >= 2, fd, torch.nan))
            out[name] = torch.cat(replicates).cpu().numpy()
        return out
