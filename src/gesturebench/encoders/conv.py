"""The temporal convolutions the motion encoders share (`MotionAutoencoder`'s encoder,
`TextMotionModel`'s motion tower)."""

from __future__ import annotations

from torch import nn


def conv1d(c_in: int, c_out: int, kernel_size: int, stride: int = 1) -> nn.Conv1d:
    """A 1-D convolution padded so that stride 1 keeps the length."""
    return nn.Conv1d(c_in, c_out, kernel_size, stride=stride, padding=kernel_size // 2)


def downsampling_layers(
    c_in: int, hidden_dim: int, kernel_size: int, act: nn.Module
) -> list[nn.Module]:
    """A per-frame projection to `hidden_dim`, then two stride-2 convolutions (time / 4), each
    followed by `act`.

    A list, not a module: each caller splices it into its own `nn.Sequential`, so the parameter
    names of saved checkpoints (``encoder.2.weight``, ``motion_tower.3.weight``) stay as they are.
    """
    return [
        conv1d(c_in, hidden_dim, 1),
        act,
        conv1d(hidden_dim, hidden_dim, kernel_size, stride=2),
        act,
        conv1d(hidden_dim, hidden_dim, kernel_size, stride=2),
        act,
    ]
