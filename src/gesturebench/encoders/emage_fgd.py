"""EMAGE's FGD encoder (`VAESKConv`'s encoder, `AESKConv_240_100.bin`), written from its
architecture so that the released file loads unchanged (docs/protocols.md, FGD).

Input: a whole sequence's 55 SMPL-X joint rotations as 6D rotations (the first two rows of each
rotation matrix, 330 values a frame, global orientation included, no translation), its frames cut
to a multiple of `TRIM` from the end. Four levels, each: a masked skeleton convolution (kernel 4,
stride 2, zero padding 1, each edge's outputs seeing the edges within two hops) followed by
GroupNorm(10), plus a stride-2 masked 1×1 shortcut; their sum is pooled along the edge chains
(`encoders.skeleton`) and passed through tanh. Channels per edge grow 6, 6, 6, 12, 12; edges
shrink 55, 35, 20, 20, 20. Each of the T/16 output steps, 20 edges × 12 channels = 240 values, is
one FGD feature (the official evaluation stacks them over all sequences). GroupNorm pools over
the whole sequence, so a sequence is encoded in one pass, never in windows.

The released file also holds the unused variational heads and the decoder (`IGNORED`, checked
by name and shape, then dropped); the masks and pooling matrices it holds are compared with the
ones built here from the hard-coded joint tree.
"""

from __future__ import annotations

import io
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from gesturebench.data.records import N_JOINTS
from gesturebench.encoders.representation import rotation_6d
from gesturebench.encoders.skeleton import Edge, edge_neighbours, pool_edges, smplx_edges
from gesturebench.runtime.caches import check_weights
from gesturebench.runtime.errors import CheckpointError

#: frames are cut to a multiple of this (the official `vae_test_len`)
TRIM = 32
FEATURE_DIM = 240
LEVELS = 4
GROWTH = (1, 1, 2, 1)
BASE_CHANNELS = 6
KERNEL = 4
NEIGHBOUR_DISTANCE = 2
GROUPS = 10
#: the released file's keys that the encoder does not use, with their shapes: the variational
#: heads (the evaluation runs with `variational=False`) and the decoder
IGNORED: dict[str, tuple[int, ...]] = {
    **{f"fc_{h}.weight": (FEATURE_DIM, FEATURE_DIM) for h in ("mu", "logvar")},
    **{f"fc_{h}.bias": (FEATURE_DIM,) for h in ("mu", "logvar")},
    **{
        f"decoder.main.{i}.model.{j}.weight": (FEATURE_DIM, FEATURE_DIM, 3)
        for i in (0, 1)
        for j in (0, 2)
    },
    **{f"decoder.main.{i}.model.{j}.bias": (FEATURE_DIM,) for i in (0, 1) for j in (0, 2)},
    **{f"decoder.main.{i}.weight": (FEATURE_DIM, FEATURE_DIM, 3) for i in (3, 6, 9)},
    **{f"decoder.main.{i}.bias": (FEATURE_DIM,) for i in (3, 6, 9)},
    "decoder.main.12.weight": (N_JOINTS * 6, FEATURE_DIM, 3),
    "decoder.main.12.bias": (N_JOINTS * 6,),
    "decoder.main.14.weight": (N_JOINTS * 6, N_JOINTS * 6, 3),
    "decoder.main.14.bias": (N_JOINTS * 6,),
}
#: state-dict entries fixed by the joint tree (masks, pooling matrices), checked on loading
FIXED = ("mask", "common.0.weight")


class SkeletonConv(nn.Module):
    """A temporal convolution whose output channels of each edge see only the input channels of
    that edge's neighbours (`mask`, saved in the state dict like the official one)."""

    mask: torch.Tensor

    def __init__(
        self,
        neighbours: list[list[int]],
        in_per_edge: int,
        out_per_edge: int,
        kernel: int,
        stride: int,
        padding: int,
    ):
        super().__init__()
        n = len(neighbours)
        self.stride, self.padding = stride, padding
        self.weight = nn.Parameter(torch.zeros(n * out_per_edge, n * in_per_edge, kernel))
        self.bias = nn.Parameter(torch.zeros(n * out_per_edge))
        mask = torch.zeros_like(self.weight)
        for i, near in enumerate(neighbours):
            cols = [e * in_per_edge + c for e in near for c in range(in_per_edge)]
            mask[i * out_per_edge : (i + 1) * out_per_edge, cols] = 1
        self.register_buffer("mask", mask)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv1d(x, self.weight * self.mask, self.bias, self.stride, self.padding)


class SkeletonPool(nn.Module):
    """Mean of each group of edges, channel by channel, as a fixed (groups·C, edges·C) matrix."""

    weight: torch.Tensor

    def __init__(self, groups: list[list[int]], n_edges: int, per_edge: int):
        super().__init__()
        weight = torch.zeros(len(groups) * per_edge, n_edges * per_edge)
        for g, members in enumerate(groups):
            for e in members:
                for c in range(per_edge):
                    weight[g * per_edge + c, e * per_edge + c] = 1.0 / len(members)
        self.register_buffer("weight", weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight @ x


class SkeletonLevel(nn.Module):
    """One level: tanh(pool(GroupNorm(conv(x)) + shortcut(x))), time halved."""

    def __init__(self, edges: list[Edge], in_per_edge: int, out_per_edge: int, last: bool) -> None:
        super().__init__()
        near = edge_neighbours(edges, NEIGHBOUR_DISTANCE)
        out = len(edges) * out_per_edge
        self.residual = nn.Sequential(
            SkeletonConv(near, in_per_edge, out_per_edge, KERNEL, 2, (KERNEL - 1) // 2),
            nn.GroupNorm(GROUPS, out),
        )
        self.shortcut = SkeletonConv(near, in_per_edge, out_per_edge, 1, 2, 0)
        groups, self.next_edges = pool_edges(edges, last)
        pool = [SkeletonPool(groups, len(edges), out_per_edge)] if len(groups) != len(edges) else []
        self.common = nn.Sequential(*pool, nn.Tanh())
        if last:
            self.next_edges = edges

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.common(self.residual(x) + self.shortcut(x))


class SkeletonEncoder(nn.Module):
    """The stack of levels: (B, 330, T) → (B, 240, T/16)."""

    def __init__(self) -> None:
        super().__init__()
        edges = smplx_edges()
        channels = [BASE_CHANNELS]
        for g in GROWTH:
            channels.append(channels[-1] * g)
        levels = []
        for i in range(LEVELS):
            level = SkeletonLevel(edges, channels[i], channels[i + 1], last=i == LEVELS - 1)
            levels.append(nn.Sequential(level))
            edges = level.next_edges
        self.layers = nn.ModuleList(levels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class EmageFGDEncoder(nn.Module):
    """EMAGE's FGD encoder; `state_dict` keys are the released file's less `IGNORED`."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = SkeletonEncoder()

    def forward(self, rot6d: torch.Tensor) -> torch.Tensor:
        """(B, T, 330) 6D rotations, T a multiple of 16 → (B, T/16, 240) features."""
        return self.encoder(rot6d.transpose(1, 2)).transpose(1, 2)

    @torch.no_grad()
    def features(self, poses: torch.Tensor) -> torch.Tensor:
        """One sequence's (T, 165) axis-angle poses → its (T'/16, 240) features, T' = T cut to a
        multiple of `TRIM` (no rows for a sequence shorter than `TRIM`)."""
        t = poses.shape[0] - poses.shape[0] % TRIM
        if t == 0:
            return poses.new_zeros((0, FEATURE_DIM))
        rot = rotation_6d(poses[:t].reshape(t, N_JOINTS, 3)).reshape(1, t, N_JOINTS * 6)
        return self(rot)[0]

    def load_released(self, state: dict[str, torch.Tensor], source: str) -> None:
        """Load the released state dict (a leading `module.` stripped from its keys, as the
        official loader does): its keys must be exactly ours plus `IGNORED`, shapes equal,
        and its masks and pooling matrices equal to the ones of the hard-coded tree."""
        state = {k.removeprefix("module."): v for k, v in state.items()}
        built = {k: v.clone() for k, v in self.state_dict().items() if k.endswith(FIXED)}
        ours = set(self.state_dict())
        expected = ours | set(IGNORED)
        missing, unexpected = sorted(expected - set(state)), sorted(set(state) - expected)
        if missing or unexpected:
            raise CheckpointError(
                f"{source}: not EMAGE's FGD encoder layout (missing {missing[:3]}, "
                f"unexpected {unexpected[:3]}; {len(missing)} missing, {len(unexpected)} "
                "unexpected in all)"
            )
        if wrong := [k for k, shape in IGNORED.items() if tuple(state[k].shape) != shape]:
            raise CheckpointError(f"{source}: {wrong[0]} has shape {tuple(state[wrong[0]].shape)}")
        try:
            self.load_state_dict({k: state[k] for k in ours}, strict=True)
        except RuntimeError as exc:
            raise CheckpointError(f"{source}: {str(exc).splitlines()[-1].strip()}") from None
        for name, value in built.items():
            if not torch.equal(value, state[name]):
                raise CheckpointError(f"{source}: {name} differs from the SMPL-X tree's")


def load_emage_fgd_encoder(path: str | Path) -> EmageFGDEncoder:
    """The encoder in eval mode with the weights of `path` (a file holding {"model_state": …})."""
    path = Path(path)
    try:
        payload = torch.load(io.BytesIO(path.read_bytes()), map_location="cpu", weights_only=True)
        state = payload["model_state"]
    except Exception as exc:  # unreadable file or another layout: the same user-facing problem
        raise CheckpointError(
            f"{path}: not a readable EMAGE FGD encoder file ({type(exc).__name__})"
        ) from None
    check_weights(state, path)
    module = EmageFGDEncoder()
    module.load_released(state, str(path))
    return module.eval().requires_grad_(False)
