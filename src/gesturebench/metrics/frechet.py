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
from gesturebench.metrics.functional.frechet import (
    batch_moments,
    frechet_distance,
    merge_moments,
    psd_range,
    resampled_moments,
)
from gesturebench.metrics.motion_features import GENERATED, REFERENCE, MotionFeatureMetric
from gesturebench.metrics.pair import MotionPair
from gesturebench.stats.bootstrap import Resamples

#: Feature spaces of FGD's values, in `value_names` order: encoder features, raw pose.
SPACES = ("feat", "raw")
#: Resamples whose moments are held at once by `FGD.bootstrap`.
BOOTSTRAP_CHUNK = 50


class FGD(MotionFeatureMetric):
    """FGD ↓ between reference and generated window features, plus `fgd_raw_pose`.

    States, per sequence (`"cat"`, with its split index; index 0 = reference, 1 = generated): the
    window counts and, per feature space, the mean and scatter Σ(x − μ)(x − μ)ᵀ of its windows
    (float64). `compute` pools them in split-index order with `merge_moments` (so one process and
    several give the same bits); the bootstrap pools each resample's sequences with their
    multiplicities (`resampled_moments`). Sums of x and xxᵀ would be simpler but lose the
    covariance to cancellation when the features' mean is large against their spread (1.8 % off at
    an offset of 1e6); partial moments pool exactly.
    """

    direction = "lower"
    extras = ("{name}_raw_pose",)
    seq_index: list[torch.Tensor]
    seq_count: list[torch.Tensor]

    def __init__(self, name: str = "fgd", encoder_config: Mapping | None = None, **kwargs: Any):
        super().__init__(name, encoder_config, **kwargs)
        for space in SPACES:
            self.add_state(f"{space}_mean", default=[], dist_reduce_fx="cat")
            self.add_state(f"{space}_scatter", default=[], dist_reduce_fx="cat")
        self.add_state("seq_index", default=[], dist_reduce_fx="cat")
        self.add_state("seq_count", default=[], dist_reduce_fx="cat")

    def extra_options(self) -> dict:
        return {
            **super().extra_options(),
            "raw_pose_features": f"window mean of the {REP_DIM}-d representation",
        }

    def sequence_moments(
        self, space: str
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """Split indices (S,), window counts (S, 2), means (S, 2, dim) and scatters
        (S, 2, dim, dim) of every scored sequence in feature space `space`, in split-index order;
        None before any."""
        index = cat_state(self.seq_index)
        if index is None:
            return None
        order = torch.argsort(index)
        s = len(index)
        count = dim_zero_cat(self.seq_count).reshape(s, 2)
        mean = dim_zero_cat(getattr(self, f"{space}_mean"))
        scatter = dim_zero_cat(getattr(self, f"{space}_scatter"))
        dim = mean.shape[-1]
        return (
            index[order],
            count[order],
            mean.reshape(s, 2, dim)[order],
            scatter.reshape(s, 2, dim, dim)[order],
        )

    def update(self, pair: MotionPair) -> None:
        sides = [self.pair_features(pair, i) for i in (REFERENCE, GENERATED)]
        for space in SPACES:
            parts = [
                batch_moments(features if space == "feat" else w.mean(1)) for w, features in sides
            ]
            getattr(self, f"{space}_mean").append(torch.stack([p[1] for p in parts])[None])
            getattr(self, f"{space}_scatter").append(torch.stack([p[2] for p in parts])[None])
        counts = [float(w.shape[0]) for w, _ in sides]
        self.seq_count.append(torch.tensor([counts], dtype=torch.float64, device=self.device))
        self.seq_index.append(torch.tensor([pair.index], dtype=torch.int64, device=self.device))

    def window_counts(self) -> torch.Tensor:
        """Reference and generated windows scored (2,)."""
        counts = cat_state(self.seq_count)
        return torch.zeros(2) if counts is None else counts.reshape(-1, 2).sum(0)

    def skip_reason(self) -> str | None:
        count = self.window_counts()
        if count.min() >= 2:
            return None
        return (
            f"FGD needs at least 2 windows of reference and of generated motion; got "
            f"{int(count[REFERENCE])} and {int(count[GENERATED])}"
        )

    def compute_values(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for name, space in zip(self.value_names, SPACES, strict=True):
            moments = self.sequence_moments(space)
            assert moments is not None  # skip_reason: some windows were scored
            n, mean, scatter = merge_moments(*moments[1:])
            ref, gen = ((mean[i], scatter[i] / (n[i] - 1)) for i in (REFERENCE, GENERATED))
            out[name] = float(frechet_distance(*ref, *gen))
        return out

    def bootstrap(self, resamples: Resamples) -> dict[str, np.ndarray]:
        """FGD of each resample: the drawn sequences' moments pooled with their multiplicities
        (exactly those of the resampled window sets), in chunks of `BOOTSTRAP_CHUNK` resamples to
        bound memory; NaN where a resample has fewer than 2 windows a side.

        The means are centred on the reference's, and where the features span fewer than half the
        dimensions (fewer windows than dimensions, e.g. the raw pose of a small split), everything
        is projected onto the span: the distance is the same, its decompositions far smaller. A
        resample with more windows a side than dimensions takes the Cholesky route."""
        out = {}
        for name, space in zip(self.value_names, SPACES, strict=True):
            moments = self.sequence_moments(space)
            if moments is None:
                return {}
            index, count, mean, scatter = moments
            _, mu, pooled = merge_moments(count, mean, scatter)
            shift = mu[REFERENCE] - mu[GENERATED]
            basis = psd_range(pooled.sum(0) + torch.outer(shift, shift))
            mean = mean - mu[REFERENCE]
            if basis.shape[1] < mean.shape[-1] / 2:
                mean, scatter = mean @ basis, basis.T @ scatter @ basis
            dim = mean.shape[-1]
            draws = torch.from_numpy(resamples.of(index.cpu().numpy())).to(mean)
            replicates = []
            for n, mu_b, m in resampled_moments(draws, count, mean, scatter, BOOTSTRAP_CHUNK):
                ref, gen = ((mu_b[:, i], m[:, i] / (n[:, i, None, None] - 1)) for i in (0, 1))
                fd = frechet_distance(*ref, *gen, definite=n.min(1).values > dim)
                replicates.append(torch.where(n.min(1).values >= 2, fd, torch.nan))
            out[name] = torch.cat(replicates).cpu().numpy()
        return out
