"""FGD: Fréchet Gesture Distance between reference and generated motion-autoencoder features, with
`fgd_raw_pose` (docs/metrics.md, FGD).

`fgd_raw_pose` is the same Fréchet distance on encoder-free features: the window mean of the
per-frame representation (55 6D rotations + root velocity, REP_DIM values).

`covariance_offset` ε adds ε·I to both covariances inside the matrix square root only, as EMAGE's
2025 evaluation code does (ε = 1e-6; its traces stay unshifted); 0 is the plain formula (EMAGE's
2024 code, which shifts only when the square root is not finite).

`sqrt_check`: ``none`` takes the exact square root's trace, always real and finite; ``emage2024``
follows EMAGE's 2024 code where its own square root (scipy's `sqrtm` of Σ_gen Σ_ref) fails: not
finite → the 1e-6 offset, as that code retries; an imaginary diagonal part above 1e-3 (where that
code returns 1e10) → no value, with the reason (docs/protocols.md, FGD).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import torch
from torchmetrics.utilities import dim_zero_cat

from gesturebench.encoders.representation import REP_DIM
from gesturebench.metrics.base import cat_state
from gesturebench.metrics.functional.fgd import emage2024_sqrt
from gesturebench.metrics.functional.frechet import (
    batch_moments,
    frechet_distance,
    merge_moments,
    psd_range,
    resampled_moments,
)
from gesturebench.metrics.motion_features import GENERATED, REFERENCE, MotionFeatureMetric
from gesturebench.metrics.pair import MotionPair
from gesturebench.runtime.errors import ConfigError
from gesturebench.stats.bootstrap import Resamples

#: Feature spaces of FGD's values, in `value_names` order: encoder features, raw pose.
SPACES = ("feat", "raw")
#: The `sqrt_check` options: the exact square root, or EMAGE 2024's failure path.
SqrtCheck = Literal["none", "emage2024"]
#: A feature set's mean and covariance.
Moments = tuple[torch.Tensor, torch.Tensor]
#: Resamples whose moments are held at once by `FGD.bootstrap`.
BOOTSTRAP_CHUNK = 50


class FGD(MotionFeatureMetric):
    """FGD ↓ between reference and generated window features, plus `fgd_raw_pose`.

    States, per sequence (`"cat"`, with its split index; index 0 = reference, 1 = generated), per
    feature space: the feature count (windows for the raw pose; for EMAGE's encoder one feature
    per 16 frames, so the spaces' counts differ), mean and scatter Σ(x − μ)(x − μ)ᵀ (float64).
    `compute` pools them in split-index order with `merge_moments` (so one process and several
    give the same bits); the bootstrap pools each resample's sequences with their multiplicities
    (`resampled_moments`). Sums of x and xxᵀ would be simpler but lose the covariance to
    cancellation when the features' mean is large against their spread (1.8 % off at an offset of
    1e6); partial moments pool exactly.
    """

    default_name = "fgd"
    direction = "lower"
    extras = ("{name}_raw_pose",)
    seq_index: list[torch.Tensor]
    feat_count: list[torch.Tensor]

    def __init__(
        self,
        encoder_config: Mapping | None = None,
        covariance_offset: float = 0.0,
        sqrt_check: SqrtCheck = "none",
        **kwargs: Any,
    ):
        super().__init__(encoder_config, **kwargs)
        if sqrt_check == "emage2024" and covariance_offset:
            raise ConfigError(
                f"metric {self.name}: sqrt_check emage2024 is the 2024 code's plain formula and "
                f"needs covariance_offset 0, got {covariance_offset}"
            )
        self.covariance_offset, self.sqrt_check = covariance_offset, sqrt_check
        for space in SPACES:
            for state in ("count", "mean", "scatter"):
                self.add_state(f"{space}_{state}", default=[], dist_reduce_fx="cat")
        self.add_state("seq_index", default=[], dist_reduce_fx="cat")

    def extra_options(self) -> dict:
        return {
            **super().extra_options(),
            "raw_pose_features": f"window mean of the {REP_DIM}-d representation",
        }

    def sequence_moments(
        self, space: str
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """Split indices (S,), feature counts (S, 2), means (S, 2, dim) and scatters
        (S, 2, dim, dim) of every scored sequence in feature space `space`, in split-index order;
        None before any."""
        index = cat_state(self.seq_index)
        if index is None:
            return None
        order = torch.argsort(index)
        s = len(index)
        count = dim_zero_cat(getattr(self, f"{space}_count")).reshape(s, 2)
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
            for i, state in enumerate(("count", "mean", "scatter")):
                getattr(self, f"{space}_{state}").append(torch.stack([p[i] for p in parts])[None])
        self.seq_index.append(torch.tensor([pair.index], dtype=torch.int64, device=self.device))

    def skip_reason(self) -> str | None:
        counts = cat_state(self.feat_count)
        count = torch.zeros(2) if counts is None else counts.reshape(-1, 2).sum(0)
        if count.min() < 2:
            return (
                f"FGD needs at least 2 features of reference and of generated motion; got "
                f"{int(count[REFERENCE])} and {int(count[GENERATED])}"
            )
        failure = self.emage2024_path()[1]
        return None if failure is None else f"EMAGE's 2024 code gives no distance here: {failure}"

    def pooled(self, space: str) -> tuple[torch.Tensor, Moments, Moments]:
        """Feature counts (2,) and the (mean, covariance) of reference and generated features
        in `space`, pooled over the scored sequences."""
        moments = self.sequence_moments(space)
        assert moments is not None  # skip_reason: some windows were scored
        n, mean, scatter = merge_moments(*moments[1:])
        ref, gen = ((mean[i], scatter[i] / (n[i] - 1)) for i in (REFERENCE, GENERATED))
        return n, ref, gen

    def emage2024_path(self) -> tuple[float, str | None]:
        """(covariance offset, failure) of the encoder features under `sqrt_check`
        (`emage2024_sqrt`); (`covariance_offset`, None) with ``none``."""
        if self.sqrt_check == "none":
            return self.covariance_offset, None
        _, ref, gen = self.pooled("feat")
        return emage2024_sqrt(gen[1], ref[1])

    def compute_values(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for name, space in zip(self.value_names, SPACES, strict=True):
            n, ref, gen = self.pooled(space)
            if n.min() < 2:
                out[name] = None
                continue
            offset = self.emage2024_path()[0] if space == "feat" else self.covariance_offset
            out[name] = float(frechet_distance(*ref, *gen, offset=offset))
        return out

    def bootstrap(self, resamples: Resamples) -> dict[str, np.ndarray]:
        """FGD of each resample: the drawn sequences' moments pooled with their multiplicities
        (exactly those of the resampled window sets), in chunks of `BOOTSTRAP_CHUNK` resamples to
        bound memory; NaN where a resample has fewer than 2 windows a side.

        The means are centred on the reference's, and where the features span fewer than half the
        dimensions (fewer windows than dimensions, e.g. the raw pose of a small split), everything
        is projected onto the span: the distance is the same, its decompositions far smaller. With
        no `covariance_offset`, the square root's trace is further taken in the span of the side
        with fewer windows, where that is fewer than the dimensions (`frechet_distance`'s `basis`):
        on a small split the two sides together span the raw pose's 333 dimensions, each alone
        fewer. A resample whose distinct windows a side span its dimensions takes the
        Cholesky route. With a `covariance_offset` ε, the dropped dimensions' share of
        Tr(((ΣA + εI)(ΣG + εI))^½), ε each, is added back."""
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
            full = mean.shape[-1]
            if basis.shape[1] < full / 2:
                mean, scatter = mean @ basis, basis.T @ scatter @ basis
                pooled = basis.T @ pooled @ basis
            dim = mean.shape[-1]
            dropped = 2 * self.covariance_offset * (full - dim)
            side = min((psd_range(pooled[i]) for i in (0, 1)), key=lambda u: u.shape[1])
            use = not self.covariance_offset and 0 < side.shape[1] < dim
            narrow, rank = (side, side.shape[1]) if use else (None, dim)
            draws = torch.from_numpy(resamples.of(index.cpu().numpy())).to(mean)
            distinct = torch.split((draws > 0).to(count) @ count, BOOTSTRAP_CHUNK)
            replicates = []
            chunks = resampled_moments(draws, count, mean, scatter, BOOTSTRAP_CHUNK)
            for (n, mu_b, m), seen in zip(chunks, distinct, strict=True):
                ref, gen = ((mu_b[:, i], m[:, i] / (n[:, i, None, None] - 1)) for i in (0, 1))
                definite = seen.min(1).values - 1 >= rank
                fd = frechet_distance(
                    *ref, *gen, definite, offset=self.covariance_offset, basis=narrow
                )
                replicates.append(torch.where(n.min(1).values >= 2, fd - dropped, torch.nan))
            out[name] = torch.cat(replicates).cpu().numpy()
        return out
