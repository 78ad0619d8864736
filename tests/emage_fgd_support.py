"""EMAGE FGD encoder test support: seeded random weights in the released layout
(tests/fixtures/emage_fgd_official.json was made from these by the official class)."""

from __future__ import annotations

import torch

from gesturebench.encoders.emage_fgd import FIXED, IGNORED, EmageFGDEncoder

SEED = 15


def released_state(seed: int = SEED) -> dict[str, torch.Tensor]:
    """A state dict in the released file's layout (ignored keys included), drawn in sorted key
    order: weights uniform in ±1/√fan-in, GroupNorm scales near 1; masks and pooling matrices as
    the joint tree gives them."""
    g = torch.Generator().manual_seed(seed)
    built = EmageFGDEncoder().state_dict()
    shapes = {k: tuple(v.shape) for k, v in built.items()} | IGNORED
    state = {}
    for key, shape in sorted(shapes.items()):
        if key.endswith(FIXED):
            state[key] = built[key].clone()
            continue
        fan_in = max(1, torch.Size(shape[1:]).numel())
        draw = (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) / fan_in**0.5
        if ".residual.1.weight" in key:
            draw = 1 + draw
        state[key] = draw.float()
    return state
