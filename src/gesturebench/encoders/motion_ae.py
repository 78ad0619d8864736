"""`MotionAutoencoder`: the temporal convolutional autoencoder whose latent is the FGD / Density /
Coverage feature.

Input windows (B, window, REP_DIM) are normalised with the train split's per-dimension mean and std
(buffers, so they travel in the state dict). Per-frame 1×1 convolutions map between REP_DIM and
`hidden_dim` (cheap on CPU); between them, strided temporal convolutions downsample time by 4 into a
`latent_dim` latent per time step. A window's feature is the mean of its latent over time. The
decoder upsamples back and reconstructs the normalised window. Loss = MSE(reconstruction) +
`velocity_weight` · MSE(frame differences).
"""

from __future__ import annotations

import pytorch_lightning as pl
import torch
from torch import nn
from torch.nn import functional as F

from gesturebench.encoders.conv import conv1d, downsampling_layers
from gesturebench.encoders.representation import REP_DIM

#: total temporal downsampling of the encoder; windows must be a multiple of it.
DOWNSAMPLE = 4


class MotionAutoencoder(pl.LightningModule):
    #: Per-dimension normalisation of the representation (buffers, saved in the checkpoint).
    mean: torch.Tensor
    std: torch.Tensor

    def __init__(
        self,
        rep_dim: int = REP_DIM,
        hidden_dim: int = 64,
        latent_dim: int = 128,
        kernel_size: int = 5,
        lr: float = 1e-3,
        velocity_weight: float = 1.0,
    ):
        super().__init__()
        self.save_hyperparameters()
        self.register_buffer("mean", torch.zeros(rep_dim))
        self.register_buffer("std", torch.ones(rep_dim))
        act = nn.LeakyReLU(0.2)
        k = kernel_size
        self.encoder = nn.Sequential(
            *downsampling_layers(rep_dim, hidden_dim, k, act), conv1d(hidden_dim, latent_dim, 1)
        )
        self.decoder = nn.Sequential(
            conv1d(latent_dim, hidden_dim, 1),
            act,
            nn.Upsample(scale_factor=2),
            conv1d(hidden_dim, hidden_dim, k),
            act,
            nn.Upsample(scale_factor=2),
            conv1d(hidden_dim, hidden_dim, k),
            act,
            conv1d(hidden_dim, rep_dim, 1),
        )

    def set_normalisation(self, mean: torch.Tensor, std: torch.Tensor) -> None:
        self.mean.copy_(mean)
        self.std.copy_(std)

    def normalise(self, windows: torch.Tensor) -> torch.Tensor:
        return (windows - self.mean) / self.std

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised windows (B, window, D) → latent (B, window/4, latent_dim)."""
        return self.encoder(x.transpose(1, 2)).transpose(1, 2)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return self.decoder(z.transpose(1, 2)).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Reconstruct normalised windows."""
        return self.decode(self.encode(x))

    @torch.no_grad()
    def features(self, windows: torch.Tensor, batch_size: int = 512) -> torch.Tensor:
        """Raw representation windows (W, window, D) → features (W, latent_dim): the time-mean
        latent."""
        out = [self.encode(self.normalise(w)).mean(1) for w in windows.split(batch_size)]
        return torch.cat(out) if out else windows.new_zeros((0, self.hparams["latent_dim"]))

    def losses(self, windows: torch.Tensor) -> dict[str, torch.Tensor]:
        x = self.normalise(windows)
        x_hat = self(x)
        recon = F.mse_loss(x_hat, x)
        velocity = F.mse_loss(x_hat.diff(dim=1), x.diff(dim=1))
        return {
            "loss": recon + self.hparams["velocity_weight"] * velocity,
            "recon": recon,
            "velocity": velocity,
        }

    def training_step(self, batch, batch_idx):
        losses = self.losses(batch[0])
        self.log("train_loss", losses["loss"], prog_bar=True)
        return losses["loss"]

    def validation_step(self, batch, batch_idx):
        losses = self.losses(batch[0])
        self.log("val_loss", losses["loss"], prog_bar=True)
        self.log("val_recon", losses["recon"])

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams["lr"])
