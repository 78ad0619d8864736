"""GestureLSM's building blocks: rotary and sinusoidal position codes, the shortcut time
embedding, the cross-attention block (speech → motion tokens) and the spatial–temporal block
(attention over time per body part, then over the parts per frame)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(…, 2d) → (…, 2d): the halves (a, b) become (−b, a)."""
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


class RotaryFrequencies(nn.Module):
    """Rotary position angles for `dim` channels: (n, dim) for positions 0…n−1, the frequency
    table repeated over the two halves; `inv_freq` is a checkpoint buffer."""

    inv_freq: torch.Tensor

    def __init__(self, dim: int):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(0, dim, 2).float() / dim))

    def forward(self, n: int) -> torch.Tensor:
        t = torch.arange(n, device=self.inv_freq.device).type_as(self.inv_freq)
        freqs = torch.outer(t, self.inv_freq)
        return torch.cat([freqs, freqs], dim=-1)

    def rotate(self, x: torch.Tensor, seq_dim: int) -> torch.Tensor:
        """`x` with each position along `seq_dim` rotated by its angles (last dim = `dim`)."""
        angles = self(x.shape[seq_dim])
        angles = angles.view(angles.shape[0], *([1] * (x.dim() - seq_dim - 2)), angles.shape[1])
        return x * angles.cos().to(x.dtype) + rotate_half(x) * angles.sin().to(x.dtype)


class PositionTable(nn.Module):
    """The sinusoidal table `pe` (length, 1, dim) the release keeps as a buffer (never read at
    generation)."""

    pe: torch.Tensor

    def __init__(self, dim: int, length: int):
        super().__init__()
        position = torch.arange(length, dtype=torch.float32)[:, None]
        freq = torch.exp(torch.arange(0, dim, 2).float() * (-math.log(10000.0) / dim))
        pe = torch.zeros(length, dim)
        pe[:, 0::2] = torch.sin(position * freq)
        pe[:, 1::2] = torch.cos(position * freq)
        self.register_buffer("pe", pe[:, None])


def timestep_features(t: torch.Tensor, dim: int) -> torch.Tensor:
    """(B,) times → (B, dim) float32 [cos, sin] features at frequencies 10000^(−i/(dim/2)), in
    float32 as the release computes them."""
    half = dim // 2
    freq = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
    angles = t.float()[:, None] * freq.to(t.device)[None]
    return torch.cat([torch.cos(angles), torch.sin(angles)], dim=-1)


class TimeEmbedding(nn.Module):
    """Time t and its condition d (the shortcut step; MeanFlow's r) → (B, dim): Linear → GELU →
    Linear on the features of t plus a bias-free projection of the features of d (none without d,
    as the diffusion variant)."""

    def __init__(self, dim: int, cond_dim: int):
        super().__init__()
        self.linear_1 = nn.Linear(dim, dim)
        self.cond_proj = nn.Linear(cond_dim, dim, bias=False)
        self.act = nn.GELU()
        self.linear_2 = nn.Linear(dim, dim)

    def forward(self, t: torch.Tensor, d: torch.Tensor | None, dtype: torch.dtype) -> torch.Tensor:
        dim = self.linear_1.in_features
        sample = timestep_features(t, dim).to(dtype)
        if d is not None:
            d_features = timestep_features(d, self.cond_proj.in_features).to(dtype)
            sample = sample + self.cond_proj(d_features)
        return self.linear_2(self.act(self.linear_1(sample)))


class Mlp(nn.Module):
    """Linear → GELU → Linear."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class CrossAttention(nn.Module):
    """Multi-head attention of `x` over `context`: bias-free query and key/value projections,
    scaled dot product, output projection."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.kv = nn.Linear(dim, 2 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        q = self.q(x).view(b, n, self.heads, -1).transpose(1, 2)
        k, v = self.kv(context).view(b, context.shape[1], 2, self.heads, -1).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v)
        return self.proj(out.transpose(1, 2).reshape(b, n, c))


class CrossAttentionBlock(nn.Module):
    """Pre-norm residual cross-attention then MLP (4× wide)."""

    def __init__(self, dim: int, heads: int, mlp_ratio: int):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.cross_attn = CrossAttention(dim, heads)
        self.mlp = Mlp(dim, dim * mlp_ratio)

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        x = x + self.cross_attn(self.norm1(x), context)
        return x + self.mlp(self.norm2(x))


class JointAttention(nn.Module):
    """Self-attention along time within each part, then across the parts within each frame; each
    with per-head rotary positions on its input, and that rotated input as its residual."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.temporal_attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.spatial_attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.temporal_pos = RotaryFrequencies(dim // heads)
        self.spatial_pos = RotaryFrequencies(dim // heads)

    def _attend(self, x: torch.Tensor, attn: nn.MultiheadAttention, pos: RotaryFrequencies):
        b, n, d = x.shape
        x = pos.rotate(x.view(b, n, self.heads, d // self.heads), seq_dim=1).reshape(b, n, d)
        return attn(x, x, x, need_weights=False)[0] + x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, p, t, d = x.shape
        x = self._attend(x.reshape(b * p, t, d), self.temporal_attention, self.temporal_pos)
        x = x.view(b, p, t, d).transpose(1, 2).reshape(b * t, p, d)
        x = self._attend(x, self.spatial_attention, self.spatial_pos)
        return x.view(b, t, p, d).transpose(1, 2)


class SpatialTemporalBlock(nn.Module):
    """Residual joint attention then MLP, pre-norm with `norm2` and `norm3`; `norm1` is in the
    checkpoint but never applied (as in the release)."""

    def __init__(self, dim: int, heads: int, mlp_ratio: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.spatial_temporal_attn = JointAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, dim * mlp_ratio)
        self.norm3 = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.spatial_temporal_attn(self.norm2(x))
        return x + self.mlp(self.norm3(x))
