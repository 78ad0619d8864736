"""EMAGE's motion codecs: one convolutional VQ-VAE per body part (face, upper body, hands, lower
body with translation and foot contact) and the autoencoder that turns the lower body into global
translation. `BodyCodec.decode` assembles SMPL-X parameters from the generator's codes."""

from __future__ import annotations

from typing import cast

import torch
from torch import nn

from gesturebench.data.records import FPS, N_JOINTS
from gesturebench.encoders.representation import rotation_6d
from gesturebench.models.emage.config import CodecConfig
from gesturebench.models.emage.layers import conv_decoder, conv_encoder
from gesturebench.models.emage.rotations import rotation_6d_to_axis_angle

#: SMPL-X joints of each body-part code (jaw 22 is the face's; the eyes 23, 24 stay zero)
UPPER_JOINTS = (3, 6, 9, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21)
LOWER_JOINTS = (0, 1, 2, 4, 5, 7, 8, 10, 11)
HANDS_JOINTS = tuple(range(25, 55))
JAW = 22
#: the subfolders of ``emage_vq/`` in the released layout, in the order `BodyCodec` holds them
PARTS = ("face", "upper", "hands", "lower", "global")


class Codebook(nn.Module):
    """The code vectors (`embedding`) and nearest-code lookup."""

    def __init__(self, size: int, dim: int):
        super().__init__()
        self.embedding = nn.Embedding(size, dim)

    def nearest(self, z: torch.Tensor) -> torch.Tensor:
        """(B, T, dim) → (B, T) index of the closest code (squared Euclidean distance)."""
        codes = self.embedding.weight
        dist = (z**2).sum(-1, keepdim=True) + (codes**2).sum(-1) - 2 * z @ codes.T
        return dist.argmin(-1)


class MotionVQ(nn.Module):
    """A body part's VQ-VAE; generation only uses the codebook and decoder (the encoder's keys are
    in the released files)."""

    def __init__(self, cfg: CodecConfig):
        super().__init__()
        self.encoder = conv_encoder(cfg.vae_test_dim, cfg.vae_length, cfg.vae_layer)
        self.quantizer = Codebook(cfg.vae_codebook_size, cfg.vae_length)
        self.decoder = conv_decoder(cfg.vae_length, cfg.vae_test_dim, cfg.vae_layer)

    def decode(self, code: torch.Tensor) -> torch.Tensor:
        """(B, T) code indices, or (B, T, dim) latents snapped to their nearest code → (B, T, D)."""
        if code.is_floating_point():
            code = self.quantizer.nearest(code)
        return self.decoder(self.quantizer.embedding(code))


class MotionAE(nn.Module):
    """The global-motion autoencoder: lower body (6D joints, translation, foot contact) → the same
    channels, of which 54:57 are the root velocity used for translation."""

    def __init__(self, cfg: CodecConfig):
        super().__init__()
        self.encoder = conv_encoder(cfg.vae_test_dim, cfg.vae_length, cfg.vae_layer)
        self.decoder = conv_decoder(cfg.vae_length, cfg.vae_test_dim, cfg.vae_layer)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.encoder(x))


def _scatter(values: torch.Tensor, joints: tuple[int, ...], out: torch.Tensor) -> None:
    out[:, :, list(joints)] = rotation_6d_to_axis_angle(values.reshape(*values.shape[:2], -1, 6))


class BodyCodec(nn.Module):
    """The five codecs, in `parts` under their subfolder names."""

    def __init__(self, configs: dict[str, CodecConfig]):
        super().__init__()
        self.parts = nn.ModuleDict(
            {p: (MotionAE if p == "global" else MotionVQ)(configs[p]) for p in PARTS}
        )

    def _vq(self, part: str) -> MotionVQ:
        return cast(MotionVQ, self.parts[part])

    def decode(
        self,
        face: torch.Tensor,
        upper: torch.Tensor,
        hands: torch.Tensor,
        lower: torch.Tensor,
        start_trans: torch.Tensor | None = None,
    ) -> dict[str, torch.Tensor]:
        """Codes (indices or latents, see `MotionVQ.decode`) → ``poses`` (B, T, 55·3) axis-angle,
        ``expressions`` (B, T, 100), ``motion`` (B, T, 55·6 + 7: 6D joints, translation and foot
        contact, the generator's seed input) and, given `start_trans` (B, 3), ``trans`` (B, T, 3):
        x and z integrated from the root velocity at 30 fps starting at `start_trans`, y as
        decoded."""
        face_out = self._vq("face").decode(face)
        lower_out = self._vq("lower").decode(lower)
        b, t = face_out.shape[:2]
        poses = face_out.new_zeros(b, t, N_JOINTS, 3)
        _scatter(self._vq("upper").decode(upper), UPPER_JOINTS, poses)
        _scatter(self._vq("hands").decode(hands), HANDS_JOINTS, poses)
        _scatter(lower_out[..., :-7], LOWER_JOINTS, poses)
        _scatter(face_out[..., :6], (JAW,), poses)
        out = {
            "poses": poses.reshape(b, t, -1),
            "expressions": face_out[..., 6:],
            "motion": torch.cat([rotation_6d(poses).reshape(b, t, -1), lower_out[..., -7:]], -1),
        }
        if start_trans is not None:
            velocity = self.parts["global"](lower_out)[..., 54:57]
            steps = torch.cumsum(velocity[:, :-1] / FPS, dim=1)
            path = start_trans[:, None] + torch.cat([torch.zeros_like(steps[:, :1]), steps], 1)
            out["trans"] = torch.stack([path[..., 0], velocity[..., 1], path[..., 2]], -1)
        return out
