"""Distribution metrics in the motion autoencoder's feature space: FGD (with `fgd_raw_pose`),
Density, Coverage.

Each sequence contributes the windows (`window`/`hop` of the encoder's training config) of its
reference and of its generated motion; features are pooled over all sequences. `prepare` loads the
dataset's encoder (`<checkpoints>/encoders/motion_ae-<dataset>.pt`), training it first where the
context allows auto-training.

`fgd_raw_pose` is the same Fréchet distance on encoder-free features: the window mean of the
per-frame representation (55 6D rotations + root velocity, REP_DIM values).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import torch
from torchmetrics.utilities import dim_zero_cat

from gesturebench.encoders.motion_ae import MotionAutoencoder
from gesturebench.encoders.motion_ae_training import MotionAEConfig, load_or_train_motion_ae
from gesturebench.encoders.representation import REP_DIM, motion_representation, sliding_windows
from gesturebench.errors import CheckpointError
from gesturebench.metrics.base import GestureMetric
from gesturebench.metrics.functional.frechet import frechet_distance, moments
from gesturebench.metrics.functional.prdc import coverage, density
from gesturebench.metrics.pair import MotionPair

REFERENCE, GENERATED = 0, 1


class MotionFeatureMetric(GestureMetric):
    """Base of the metrics that pool motion-autoencoder features: encoder loading, provenance,
    windowing.

    `encoder_config` is the motion_ae training config used when the encoder has to be auto-trained;
    its `latent_dim` must match the checkpoint's.
    """

    def __init__(self, name: str, encoder_config: Mapping | None = None, **kwargs: Any):
        super().__init__(name, **kwargs)
        self.encoder_config = MotionAEConfig.coerce(encoder_config)
        self.encoder: MotionAutoencoder | None = None
        self.encoder_info: dict | None = None

    def prepare(self, context) -> None:
        encoder, info = load_or_train_motion_ae(
            context.checkpoints_dir,
            context.dataset_name,
            context.split,
            context.auto_train,
            self.encoder_config,
        )
        if encoder.hparams.latent_dim != self.encoder_config.latent_dim:
            raise CheckpointError(
                f"{info['path']}: latent_dim={encoder.hparams.latent_dim}, but metric {self.name} is configured "
                f"for encoder_config.latent_dim={self.encoder_config.latent_dim}"
            )
        self.encoder = encoder.to(self.device)
        self.encoder_info = info

    def _window_config(self) -> dict:
        return (
            self.encoder_info["config"]
            if self.encoder_info
            else dataclasses.asdict(self.encoder_config)
        )

    def options(self) -> dict:
        cfg = self._window_config()
        return {
            "encoder": "motion_ae",
            "window": cfg["window"],
            "hop": cfg["hop"],
            "dim": cfg["latent_dim"],
        }

    def provenance(self) -> dict:
        return {"motion_ae": dict(self.encoder_info)} if self.encoder_info else {}

    def windows(self, motion) -> torch.Tensor:
        """(W, window, REP_DIM) representation windows of a motion, on the metric's device."""
        if self.encoder is None:
            raise RuntimeError(f"metric {self.name}: call prepare(context) before update()")
        cfg = self._window_config()
        return sliding_windows(
            motion_representation(motion, self.device), cfg["window"], cfg["hop"]
        )

    def encode(self, motion) -> tuple[torch.Tensor, torch.Tensor]:
        """A motion's (W, window, REP_DIM) windows and their (W, latent_dim) float64 encoder
        features."""
        windows = self.windows(motion)
        return windows, self.encoder.features(windows).double()

    def pair_features(self, pair: MotionPair, side: int) -> tuple[torch.Tensor, torch.Tensor]:
        """`encode` of the pair's reference (`side` 0) or generated motion (1), once per pair for
        all metrics with the same encoder checkpoint, windowing and device."""
        cfg = self._window_config()
        key = (
            "motion_ae",
            (self.encoder_info or {}).get("sha256"),
            cfg["window"],
            cfg["hop"],
            str(self.device),
            side,
        )
        return pair.shared(
            key, lambda: self.encode(pair.generated if side == GENERATED else pair.reference)
        )


class FGD(MotionFeatureMetric):
    """Fréchet Gesture Distance between reference and generated window features (↓), plus
    `fgd_raw_pose`.

    States per feature space, index 0 = reference, 1 = generated: Σx, Σxxᵀ (float64) and window
    counts, all summed across processes.
    """

    higher_is_better = False
    extras = ("fgd_raw_pose",)
    spaces = ("feat", "raw")

    def __init__(self, name: str = "fgd", encoder_config: Mapping | None = None, **kwargs: Any):
        super().__init__(name, encoder_config, **kwargs)
        dims = {"feat": self.encoder_config.latent_dim, "raw": REP_DIM}
        for space, dim in dims.items():
            self.add_state(
                f"{space}_sum", torch.zeros(2, dim, dtype=torch.float64), dist_reduce_fx="sum"
            )
            self.add_state(
                f"{space}_outer",
                torch.zeros(2, dim, dim, dtype=torch.float64),
                dist_reduce_fx="sum",
            )
        self.add_state("count", torch.zeros(2, dtype=torch.float64), dist_reduce_fx="sum")

    def options(self) -> dict:
        return {
            **super().options(),
            "raw_pose_features": f"window mean of the {REP_DIM}-d representation",
        }

    def update(self, pair: MotionPair) -> None:
        for i in (REFERENCE, GENERATED):
            w, features = self.pair_features(pair, i)
            for space, f in (("feat", features), ("raw", w.mean(1))):
                f = f.double()
                getattr(self, f"{space}_sum")[i] += f.sum(0)
                getattr(self, f"{space}_outer")[i] += f.T @ f
            self.count[i] += w.shape[0]

    def compute(self) -> dict[str, float | None]:
        if self.count.min() < 2:
            return {n: None for n in self.value_names}
        out = {}
        for name, space in zip(self.value_names, self.spaces):
            s, o = getattr(self, f"{space}_sum"), getattr(self, f"{space}_outer")
            ref, gen = (moments(s[i], o[i], self.count[i]) for i in (REFERENCE, GENERATED))
            out[name] = float(frechet_distance(*ref, *gen))
        return out

    def skip_reason(self) -> str | None:
        if self.count.min() >= 2:
            return None
        return (
            f"FGD needs at least 2 windows of reference and of generated motion; got "
            f"{int(self.count[REFERENCE])} and {int(self.count[GENERATED])}"
        )


def _cat(state) -> torch.Tensor | None:
    """A `"cat"` state as one tensor (before or after a DDP sync), None when nothing was added."""
    if isinstance(state, list) and not state:
        return None
    return dim_zero_cat(state)


class NeighbourMetric(MotionFeatureMetric):
    """Base of Density and Coverage: all reference and generated features kept as `"cat"` states."""

    higher_is_better = True

    def __init__(
        self,
        name: str,
        k: int = 5,
        chunk_size: int = 1024,
        encoder_config: Mapping | None = None,
        **kwargs: Any,
    ):
        super().__init__(name, encoder_config, **kwargs)
        self.k = k
        self.chunk_size = chunk_size
        self.add_state("ref_features", default=[], dist_reduce_fx="cat")
        self.add_state("gen_features", default=[], dist_reduce_fx="cat")

    @staticmethod
    def statistic(real: torch.Tensor, fake: torch.Tensor, k: int, chunk_size: int) -> float:
        raise NotImplementedError

    def options(self) -> dict:
        return {**super().options(), "k": self.k}

    def update(self, pair: MotionPair) -> None:
        self.ref_features.append(self.pair_features(pair, REFERENCE)[1])
        self.gen_features.append(self.pair_features(pair, GENERATED)[1])

    def _features(self) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        return _cat(self.ref_features), _cat(self.gen_features)

    def compute(self) -> dict[str, float | None]:
        real, fake = self._features()
        if real is None or fake is None or real.shape[0] <= self.k:
            return {self.name: None}
        return {self.name: self.statistic(real, fake, self.k, self.chunk_size)}

    def skip_reason(self) -> str | None:
        real, fake = self._features()
        n = 0 if real is None else real.shape[0]
        if n > self.k and fake is not None:
            return None
        return f"{self.name} needs more than k={self.k} reference windows and at least one generated; got {n}"


class Density(NeighbourMetric):
    """Density (Naeem et al. 2020, ↑): mean count of reference k-NN balls containing a generated
    feature, over k."""

    statistic = staticmethod(density)

    def __init__(self, name: str = "density", **kwargs: Any):
        super().__init__(name, **kwargs)


class Coverage(NeighbourMetric):
    """Coverage (Naeem et al. 2020, ↑): fraction of reference k-NN balls containing a generated
    feature."""

    statistic = staticmethod(coverage)

    def __init__(self, name: str = "coverage", **kwargs: Any):
        super().__init__(name, **kwargs)
