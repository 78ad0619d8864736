"""`MotionFeatureMetric`: the base of the metrics that pool motion-autoencoder features (FGD,
Density, Coverage).

Each sequence contributes the windows (`window`/`hop` of the encoder's training config) of its
reference and of its generated motion; features are pooled over all sequences. `prepare` loads the
dataset's encoder (`<checkpoints>/encoders/motion_ae-<dataset>.pt`), training it first where the
context allows auto-training.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

import torch

from gesturebench.data.records import Motion
from gesturebench.encoders.motion_ae import MotionAutoencoder
from gesturebench.encoders.motion_ae_training import MotionAEConfig
from gesturebench.encoders.representation import motion_representation, sliding_windows
from gesturebench.errors import CheckpointError
from gesturebench.metrics.base import GestureMetric
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.pair import MotionPair

REFERENCE, GENERATED = 0, 1


class MotionFeatureMetric(GestureMetric):
    """Encoder loading, provenance and windowing of the metrics in the motion autoencoder's feature
    space.

    `encoder_config` is the motion_ae training config used when the encoder has to be auto-trained;
    its `latent_dim` must match the checkpoint's. The generated motion's joint rotations (jaw and
    eyes among them) and root velocity (`trans`) enter the features.
    """

    reads = ("jaw", "eyes", "trans")
    hidden_options: ClassVar[tuple[str, ...]] = ("encoder_config",)

    def __init__(self, encoder_config: Mapping | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.encoder_config = MotionAEConfig.coerce(encoder_config)
        self.encoder: MotionAutoencoder | None = None
        self.encoder_info: dict | None = None

    def prepare(self, context: MetricContext) -> None:
        encoder, info = self.encoder_config.load_or_train(
            context.checkpoints_dir, context.dataset_name, context.split, context.auto_train
        )
        latent_dim = encoder.hparams["latent_dim"]
        if latent_dim != self.encoder_config.latent_dim:
            raise CheckpointError(
                f"{info['path']}: latent_dim={latent_dim}, but metric {self.name} is configured "
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

    def extra_options(self) -> dict:
        cfg = self._window_config()
        return {
            "encoder": "motion_ae",
            "window": cfg["window"],
            "hop": cfg["hop"],
            "dim": cfg["latent_dim"],
        }

    def provenance(self) -> dict:
        return {"motion_ae": dict(self.encoder_info)} if self.encoder_info else {}

    def encode(self, motion: Motion) -> tuple[torch.Tensor, torch.Tensor]:
        """A motion's (W, window, REP_DIM) representation windows and their (W, latent_dim) float64
        encoder features."""
        if self.encoder is None:
            raise RuntimeError(f"metric {self.name}: call prepare(context) before update()")
        cfg = self._window_config()
        windows = sliding_windows(
            motion_representation(motion, self.device), cfg["window"], cfg["hop"]
        )
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
