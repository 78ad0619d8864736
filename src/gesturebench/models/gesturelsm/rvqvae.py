"""GestureLSM's per-part residual VQ-VAE (``net_300000_<part>.pth``): a 1D convolutional encoder
that downsamples time by 2^down, six residual codebooks whose codes pass through a learned
projection, and the mirrored decoder. Attribute names follow the released checkpoint."""

from __future__ import annotations

import torch
from torch import nn

from gesturebench.models.gesturelsm.config import (
    RVQ_DEPTH,
    RVQ_DILATION_GROWTH,
    RVQ_DOWN,
    CodecConfig,
)


class ResConv(nn.Module):
    """ReLU → dilated 3-tap conv → ReLU → 1-tap conv, plus the input."""

    def __init__(self, width: int, dilation: int):
        super().__init__()
        self.conv1 = nn.Conv1d(width, width, 3, padding=dilation, dilation=dilation)
        self.conv2 = nn.Conv1d(width, width, 1)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv2(self.act(self.conv1(self.act(x))))


class ResStack(nn.Module):
    """`depth` residual convolutions, dilations growth^(depth−1) … 1."""

    def __init__(self, width: int, depth: int, growth: int):
        super().__init__()
        self.model = nn.Sequential(*(ResConv(width, growth**i) for i in reversed(range(depth))))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)


class ConvNet(nn.Module):
    """A channels-first convolution stack held in `model` (the checkpoint's nesting)."""

    def __init__(self, layers: list[nn.Module]):
        super().__init__()
        self.model = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)


def encoder(cfg: CodecConfig) -> ConvNet:
    w = cfg.width
    layers: list[nn.Module] = [nn.Conv1d(cfg.input_width, w, 3, 1, 1), nn.ReLU()]
    for _ in range(RVQ_DOWN):
        layers.append(
            nn.Sequential(nn.Conv1d(w, w, 4, 2, 1), ResStack(w, RVQ_DEPTH, RVQ_DILATION_GROWTH))
        )
    return ConvNet([*layers, nn.Conv1d(w, cfg.code_dim, 3, 1, 1)])


def decoder(cfg: CodecConfig) -> ConvNet:
    w = cfg.width
    layers: list[nn.Module] = [nn.Conv1d(cfg.code_dim, w, 3, 1, 1), nn.ReLU()]
    for _ in range(RVQ_DOWN):
        layers.append(
            nn.Sequential(
                ResStack(w, RVQ_DEPTH, RVQ_DILATION_GROWTH),
                nn.Upsample(scale_factor=2, mode="nearest"),
                nn.Conv1d(w, w, 3, 1, 1),
            )
        )
    tail = [nn.Conv1d(w, w, 3, 1, 1), nn.ReLU(), nn.Conv1d(w, cfg.input_width, 3, 1, 1)]
    return ConvNet(layers + tail)


class Codebook(nn.Module):
    """One quantizer: `codebook` (a buffer) seen through `embedding_proj`."""

    codebook: torch.Tensor

    def __init__(self, codes: int, dim: int):
        super().__init__()
        self.embedding_proj = nn.Linear(dim, dim)
        self.register_buffer("codebook", torch.zeros(codes, dim))

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, dim) → the nearest projected code of each vector (squared Euclidean)."""
        codes = self.embedding_proj(self.codebook)
        dist = (x**2).sum(-1, keepdim=True) - 2 * x @ codes.T + (codes**2).sum(-1)
        return codes[dist.argmin(-1)]


class ResidualQuantizer(nn.Module):
    def __init__(self, cfg: CodecConfig):
        super().__init__()
        self.layers = nn.ModuleList(
            Codebook(cfg.codes, cfg.code_dim) for _ in range(cfg.quantizers)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, dim) → the sum of each codebook's nearest code to what the previous left."""
        out = torch.zeros_like(x)
        for layer in self.layers:
            code = layer.quantize(x - out)  # type: ignore[operator]
            out = out + code
        return out


class RVQVAE(nn.Module):
    def __init__(self, cfg: CodecConfig):
        super().__init__()
        self.encoder = encoder(cfg)
        self.decoder = decoder(cfg)
        self.quantizer = ResidualQuantizer(cfg)

    def encode(self, motion: torch.Tensor) -> torch.Tensor:
        """(B, T, input_width) → unquantised latents (B, T / 2^down, code_dim)."""
        return self.encoder(motion.transpose(1, 2)).transpose(1, 2)

    def decode(self, latents: torch.Tensor) -> torch.Tensor:
        """Latents (B, L, code_dim), quantised here → (B, L · 2^down, input_width)."""
        return self.decoder(self.quantizer(latents).transpose(1, 2)).transpose(1, 2)
