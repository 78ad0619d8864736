"""Training of the motion autoencoder (`task=train_encoder encoder=motion_ae`, and auto-training on
mini data).

`MotionAEConfig.train` fits a `MotionAutoencoder` on the train split's windows with a CPU Lightning
`Trainer` (seeded, early stopping on the validation loss) and writes its checkpoint.
Metrics load it with `MotionAEConfig.load_or_train` (training it first where auto-training is
allowed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from pytorch_lightning.callbacks import EarlyStopping
from torch.utils.data import DataLoader, TensorDataset

from gesturebench.data.records import SequenceRecord
from gesturebench.encoders.checkpoint import (
    MOTION_AE_FORMAT,
    load_motion_ae,
    motion_ae_path,
)
from gesturebench.encoders.motion_ae import DOWNSAMPLE, MotionAutoencoder
from gesturebench.encoders.representation import REP_DIM, motion_representation, sliding_windows
from gesturebench.encoders.training_common import EncoderConfig, Fitted
from gesturebench.runtime.errors import ConfigError


@dataclass(frozen=True)
class MotionAEConfig(EncoderConfig):
    """Training config of the motion autoencoder (`conf/encoder/motion_ae.yaml`); stored in the
    checkpoint.

    `window`/`hop` are also the windows the metrics encode; `train_hop` is the (denser) hop of
    training windows. The defaults train on mini-BEAT2 in well under a minute on 2 CPU cores; raise
    `max_steps`/`max_epochs` for full BEAT2.
    """

    name: str = "motion_ae"
    window: int = 64
    hop: int = 32
    train_hop: int = 16
    hidden_dim: int = 64
    latent_dim: int = 128
    kernel_size: int = 5
    velocity_weight: float = 1.0

    checkpoint_format = MOTION_AE_FORMAT

    def __post_init__(self):
        if self.window % DOWNSAMPLE or self.window <= 0:
            raise ConfigError(
                f"encoder.window={self.window} must be a positive multiple of {DOWNSAMPLE}"
            )
        if self.hop <= 0 or self.train_hop <= 0:
            raise ConfigError(
                f"encoder.hop={self.hop} and encoder.train_hop={self.train_hop} must be positive"
            )

    def load(self, path: Path, overrides: Sequence[str] = ()):
        return load_motion_ae(path, overrides)

    def checkpoint_path(self, checkpoints_dir: str | Path, dataset: str) -> Path:
        return motion_ae_path(checkpoints_dir, dataset)

    def module_kwargs(self) -> dict:
        return {
            "rep_dim": REP_DIM,
            "hidden_dim": self.hidden_dim,
            "latent_dim": self.latent_dim,
            "kernel_size": self.kernel_size,
            "lr": self.lr,
            "velocity_weight": self.velocity_weight,
        }

    def fit_module(self, train, val, fit, checkpoints_dir) -> Fitted:
        train_reps, train_w = _windows(train, self.window, self.train_hop, "train")
        _, val_w = _windows(val, self.window, self.hop, "val")
        module = MotionAutoencoder(**self.module_kwargs())
        module.set_normalisation(*representation_stats(train_reps, self.std_floor))
        shuffle = torch.Generator().manual_seed(self.seed)
        train_loader = DataLoader(
            TensorDataset(train_w), batch_size=self.batch_size, shuffle=True, generator=shuffle
        )
        val_loader = DataLoader(TensorDataset(val_w), batch_size=self.batch_size)
        early_stopping = EarlyStopping(monitor="val_loss", patience=self.patience)
        trainer = fit(module, train_loader, val_loader, [early_stopping])
        module.eval()
        figures = {
            **{f"val_{k}": v for k, v in reconstruction_errors(module, val_w).items()},
            "train_sequences": len(train_reps),
            "train_windows": len(train_w),
            "val_windows": len(val_w),
        }
        headline = (
            f"val_recon_mse={figures['val_recon_mse']:.4f} "
            f"(mean pose: {figures['val_mean_pose_mse']:.4f})"
        )
        return Fitted(module, trainer, figures, headline)


def representation_stats(
    reps: Sequence[torch.Tensor], std_floor: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-dimension mean and std (floored, so constant dimensions do not blow up) over all
    frames."""
    frames = torch.cat(list(reps)).double()
    return frames.mean(0).float(), frames.std(0).clamp_min(std_floor).float()


def _windows(
    records: Sequence[SequenceRecord], window: int, hop: int, what: str
) -> tuple[list, torch.Tensor]:
    reps = [motion_representation(r.motion) for r in records]
    if not reps:
        raise ConfigError(
            f"motion_ae training needs {what} sequences, and the {what} split is empty"
        )
    return reps, torch.cat([sliding_windows(r, window, hop) for r in reps]).contiguous()


@torch.no_grad()
def reconstruction_errors(module: MotionAutoencoder, windows: torch.Tensor) -> dict[str, float]:
    """Mean squared reconstruction error of normalised windows, and that of predicting the train
    mean pose."""
    x = module.normalise(windows)
    return {
        "recon_mse": float(torch.nn.functional.mse_loss(module(x), x)),
        "mean_pose_mse": float(x.pow(2).mean()),
    }
