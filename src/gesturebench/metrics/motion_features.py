"""`MotionFeatureMetric`: the base of the metrics that pool learned motion features (FGD,
Density, Coverage).

Two feature encoders (`encoder`): ``motion_ae``, our autoencoder trained on the dataset
(`<checkpoints>/encoders/motion_ae-<dataset>.pt`, trained first where the context allows
auto-training), one feature per window (`window`/`hop` of its training config); or ``emage``,
EMAGE's released FGD encoder (`encoders.emage_fgd`; weights from `weights`, else
`<checkpoints>/emage_eval/`, else the Hugging Face Hub), one feature per 16 frames of each whole
sequence as EMAGE's evaluation computes them. Each metrics preset names its encoder: EMAGE's
presets ``emage``, the others the dataset's own (``${dataset.feature_encoder}``: ``emage`` on real
BEAT2, whose tables EMAGE's encoder made, ``motion_ae`` elsewhere). Features are pooled over all
sequences.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import torch

from gesturebench.assets.table import FGD_TAG, Need, Table
from gesturebench.data.records import Motion
from gesturebench.encoders.emage_fgd import (
    FEATURE_DIM,
    TRIM,
    EmageFGDEncoder,
    load_emage_fgd_encoder,
)
from gesturebench.encoders.motion_ae import MotionAutoencoder
from gesturebench.encoders.motion_ae_training import MotionAEConfig
from gesturebench.encoders.representation import motion_representation, sliding_windows
from gesturebench.metrics.base import GestureMetric
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.emage_eval_files import FGD_ENCODER
from gesturebench.metrics.pair import MotionPair
from gesturebench.runtime.errors import CheckpointError
from gesturebench.runtime.weights import resolve_weights

REFERENCE, GENERATED = 0, 1
#: the feature encoders (module docstring); the config schema offers only these
Encoder = Literal["motion_ae", "emage"]


class MotionFeatureMetric(GestureMetric):
    """Encoder loading, provenance and windowing of the metrics in a learned feature space.

    `encoder` is ``motion_ae`` or ``emage`` (module docstring); `weights` a file or folder
    holding EMAGE's encoder weights (``emage`` only). `encoder_config` is the motion_ae training
    config used when that encoder has to be auto-trained (its `latent_dim` must match the
    checkpoint's); its `window`/`hop` also cut the windows of the encoder-free features. The
    generated motion's joint rotations (jaw and eyes among them) and root velocity (`trans`,
    motion_ae only) enter the features.
    """

    reads = ("jaw", "eyes", "trans")
    hidden_options: ClassVar[tuple[str, ...]] = ("encoder_config", "weights")
    distributional = True
    value_range: ClassVar[tuple[float, float]] = (0.0, math.inf)

    def __init__(
        self,
        encoder_config: Mapping | None = None,
        encoder: Encoder = "motion_ae",
        weights: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.encoder_name = encoder
        self.weights = weights
        self.encoder_config = MotionAEConfig.coerce(encoder_config)
        self.encoder: MotionAutoencoder | EmageFGDEncoder | None = None
        self.encoder_info: dict | None = None

    @property
    def feature_dim(self) -> int:
        """The feature size of the configured encoder."""
        return FEATURE_DIM if self.encoder_name == "emage" else self.encoder_config.latent_dim

    @classmethod
    def public_assets(cls, options: Mapping[str, Any], table: Table) -> list[Need]:
        """EMAGE's FGD encoder, where `encoder` is ``emage`` and `weights` names no file of the
        user's."""
        if options.get("encoder") != "emage" or options.get("weights"):
            return []
        return [(a, None) for a in table.needed_by(FGD_TAG)]

    def prepare(self, context: MetricContext) -> None:
        if self.encoder_name == "emage":
            resolved = resolve_weights(
                FGD_ENCODER,
                self.weights,
                context.checkpoints_dir,
                owner=f"metric {self.name}",
                key=f"metrics.{self.name}.weights",
            )
            (name,) = FGD_ENCODER.files
            self.encoder = load_emage_fgd_encoder(resolved.path(name)).to(self.device)
            self.encoder_info = {
                **resolved.info(),
                "path": str(resolved.path(name)),
                "sha256": resolved.sha256[name],
                "source": f"{FGD_ENCODER.url} {name}",
            }
            return
        encoder, info = context.encoder(self.encoder_config)
        latent_dim = encoder.hparams["latent_dim"]
        if latent_dim != self.encoder_config.latent_dim:
            raise CheckpointError(
                f"{info['path']}: latent_dim={latent_dim}, but metric {self.name} is configured "
                f"for encoder_config.latent_dim={self.encoder_config.latent_dim}"
            )
        self.encoder = encoder.to(self.device)
        self.encoder_info = info

    def _window_config(self) -> dict:
        if self.encoder_info and self.encoder_name == "motion_ae":
            return self.encoder_info["config"]
        return dataclasses.asdict(self.encoder_config)

    def extra_options(self) -> dict:
        cfg = self._window_config()
        if self.encoder_name == "emage":
            return {
                "encoder": "emage",
                "features": f"per 16 frames of each sequence cut to a multiple of {TRIM}",
                "dim": FEATURE_DIM,
            }
        return {
            "encoder": self.encoder_name,
            "window": cfg["window"],
            "hop": cfg["hop"],
            "dim": cfg["latent_dim"],
        }

    def provenance(self) -> dict:
        if not self.encoder_info:
            return {}
        key = "emage_fgd" if self.encoder_name == "emage" else "motion_ae"
        return {key: dict(self.encoder_info)}

    def encode(self, motion: Motion) -> tuple[torch.Tensor, torch.Tensor]:
        """A motion's (W, window, REP_DIM) representation windows and its (N, dim) float64 encoder
        features (N = W for motion_ae)."""
        if self.encoder is None:
            raise RuntimeError(f"metric {self.name}: call prepare(context) before update()")
        cfg = self._window_config()
        windows = sliding_windows(
            motion_representation(motion, self.device), cfg["window"], cfg["hop"]
        )
        if isinstance(self.encoder, EmageFGDEncoder):
            poses = torch.as_tensor(motion.poses, dtype=torch.float32, device=self.device)
            return windows, self.encoder.features(poses).double()
        return windows, self.encoder.features(windows).double()

    def pair_features(self, pair: MotionPair, side: int) -> tuple[torch.Tensor, torch.Tensor]:
        """`encode` of the pair's reference (`side` 0) or generated motion (1), once per pair for
        all metrics with the same encoder weights, windowing and device."""
        cfg = self._window_config()
        key = (
            self.encoder_name,
            (self.encoder_info or {}).get("sha256"),
            cfg["window"],
            cfg["hop"],
            str(self.device),
            side,
        )
        return pair.shared(
            key, lambda: self.encode(pair.generated if side == GENERATED else pair.reference)
        )
