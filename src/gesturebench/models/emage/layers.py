"""The building blocks of EMAGE's generator and motion codecs, as plain torch layers whose
attribute names give the released checkpoints' `state_dict` keys (``main.3.weight``, ``fc1.bias``…).

Every sequence tensor is batch-first (B, T, C); the convolutions run on (B, C, T) inside."""

from __future__ import annotations

import math

import torch
from torch import nn


class ResBlock(nn.Module):
    """Two 3-tap convolutions around a LeakyReLU(0.2), plus the input."""

    def __init__(self, channels: int):
        super().__init__()
        self.model = nn.Sequential(
            nn.Conv1d(channels, channels, 3, padding=1),
            nn.LeakyReLU(0.2),
            nn.Conv1d(channels, channels, 3, padding=1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.model(x)


class ConvStack(nn.Module):
    """A length-preserving 1D convolution stack over (B, T, C) sequences, held in `main`."""

    def __init__(self, layers: list[nn.Module]):
        super().__init__()
        self.main = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.main(x.transpose(1, 2)).transpose(1, 2)


def conv_encoder(in_dim: int, width: int, depth: int) -> ConvStack:
    """`depth` × (3-tap conv → LeakyReLU(0.2) → ResBlock), the first from `in_dim` to `width`."""
    layers: list[nn.Module] = []
    for i in range(depth):
        layers += [
            nn.Conv1d(in_dim if i == 0 else width, width, 3, padding=1),
            nn.LeakyReLU(0.2),
            ResBlock(width),
        ]
    return ConvStack(layers)


def conv_decoder(width: int, out_dim: int, depth: int) -> ConvStack:
    """Two ResBlocks, `depth` × (3-tap conv → LeakyReLU(0.2)), the last to `out_dim`, then a 3-tap
    output conv."""
    layers: list[nn.Module] = [ResBlock(width), ResBlock(width)]
    for i in range(depth):
        layers += [
            nn.Conv1d(width, out_dim if i == depth - 1 else width, 3, padding=1),
            nn.LeakyReLU(0.2),
        ]
    layers.append(nn.Conv1d(out_dim, out_dim, 3, padding=1))
    return ConvStack(layers)


class MLP(nn.Module):
    """Linear → LeakyReLU(0.1) → Linear."""

    def __init__(self, in_dim: int, hidden: int, out_dim: int):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden)
        self.fc2 = nn.Linear(hidden, out_dim)
        self.act = nn.LeakyReLU(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class AudioBlock(nn.Module):
    """Residual block of the waveform encoder: strided conv → BN → LeakyReLU → conv → BN, plus the
    input (through a strided conv → BN when `project`), then LeakyReLU."""

    def __init__(
        self, in_ch: int, out_ch: int, stride: int, padding: int, project: bool, kernel: int = 15
    ):
        super().__init__()
        self.conv1 = nn.Conv1d(in_ch, out_ch, kernel, stride=stride, padding=padding)
        self.bn1 = nn.BatchNorm1d(out_ch)
        self.conv2 = nn.Conv1d(out_ch, out_ch, kernel, padding=kernel // 2)
        self.bn2 = nn.BatchNorm1d(out_ch)
        self.act = nn.LeakyReLU()
        self.downsample = (
            nn.Sequential(
                nn.Conv1d(in_ch, out_ch, kernel, stride=stride, padding=padding),
                nn.BatchNorm1d(out_ch),
            )
            if project
            else None
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn2(self.conv2(self.act(self.bn1(self.conv1(x)))))
        return self.act(y + (x if self.downsample is None else self.downsample(x)))


def wave_blocks(channels: int, dim: int, padding: int) -> nn.Sequential:
    """Six `AudioBlock`s from `channels` to `dim` features with strides 5·6·1·6·1·3 = 540, the
    input padded by `padding` samples on each side (the waveform encoder of EMAGE and of
    GestureLSM)."""
    q, h = dim // 4, dim // 2
    return nn.Sequential(
        AudioBlock(channels, q, 5, padding, True),
        AudioBlock(q, q, 6, 0, True),
        AudioBlock(q, q, 1, 7, False),
        AudioBlock(q, h, 6, 0, True),
        AudioBlock(h, h, 1, 7, False),
        AudioBlock(h, dim, 3, 0, True),
    )


class WaveEncoder(nn.Module):
    """16 kHz waveform (B, S) → (B, T, dim) features, about 30 per second (strides 5·6·6·3 = 540
    after padding the input by 1600 samples on each side)."""

    def __init__(self, dim: int):
        super().__init__()
        self.feat_extractor = wave_blocks(1, dim, 1600)

    def forward(self, wave: torch.Tensor) -> torch.Tensor:
        return self.feat_extractor(wave.unsqueeze(1)).transpose(1, 2)


class PeriodicPositions(nn.Module):
    """Adds a sinusoidal position code that repeats every `period` frames; `pe` (1, 2·period, dim)
    is a checkpoint buffer."""

    pe: torch.Tensor

    def __init__(self, dim: int, period: int):
        super().__init__()
        position = torch.arange(period, dtype=torch.float32)[:, None]
        freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
        pe = torch.zeros(period, dim)
        pe[:, 0::2] = torch.sin(position * freq)
        pe[:, 1::2] = torch.cos(position * freq)
        self.register_buffer("pe", pe.repeat(2, 1)[None])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.pe[:, : x.shape[1]]
