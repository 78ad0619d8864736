"""GestureLSM's generator: the modality encoder (speech envelope/onset and words → one condition
token per latent frame) and the denoiser (latent body-part tokens, time, shortcut step and seed →
velocity). Attribute names follow the released checkpoint."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from gesturebench.models.emage.layers import wave_blocks
from gesturebench.models.gesturelsm.config import GeneratorConfig
from gesturebench.models.gesturelsm.layers import (
    CrossAttentionBlock,
    PositionTable,
    RotaryFrequencies,
    SpatialTemporalBlock,
    TimeEmbedding,
)

#: checkpoint entries that generation never reads (a position table, shared by the diffusion
#: time embedder, and that embedder's MLP); they are loaded strictly like every key
UNUSED_PREFIXES = ("denoiser.sequence_pos_encoder.", "denoiser.embed_timestep.")


class WavEncoder(nn.Module):
    """(B, S, channels) audio features at 16 kHz → (B, frames, dim): residual strided
    convolutions (5·6·6·3 = 540 samples per step after padding 1700 on each side), then cut or
    padded with its last frame to exactly `frames`."""

    def __init__(self, dim: int, channels: int, frames: int):
        super().__init__()
        self.frames = frames
        self.feat_extractor = wave_blocks(channels, dim, 1700)

    def forward(self, audio: torch.Tensor) -> torch.Tensor:
        out = self.feat_extractor(audio.transpose(1, 2))[:, :, : self.frames]
        if out.shape[2] < self.frames:
            out = torch.cat([out, out[:, :, -1:].expand(-1, -1, self.frames - out.shape[2])], 2)
        return out.transpose(1, 2)


class ModalityEncoder(nn.Module):
    """Audio features and per-frame word ids of one window → (B, seq_len, parts·latent_dim):
    audio and word features side by side, mixed, averaged over each latent frame's motion
    frames."""

    def __init__(self, cfg: GeneratorConfig):
        super().__init__()
        self.squeeze = cfg.squeeze
        self.WavEncoder = WavEncoder(cfg.audio_dim, cfg.audio_channels, cfg.pose_length)
        self.text_encoder_body = nn.Linear(cfg.word_dim, cfg.audio_dim)
        self.text_pre_encoder_body = nn.Embedding(cfg.vocab_size, cfg.word_dim)
        self.mix_audio_text = nn.Linear(2 * cfg.audio_dim, cfg.latent_dim * cfg.parts)

    def forward(self, audio: torch.Tensor, words: torch.Tensor) -> torch.Tensor:
        """`audio` (B, S, 2), `words` (B, pose_length) ids."""
        text = self.text_encoder_body(self.text_pre_encoder_body(words))
        mixed = self.mix_audio_text(torch.cat([self.WavEncoder(audio), text], dim=2))
        return F.avg_pool1d(mixed.transpose(1, 2), self.squeeze).transpose(1, 2)


class Linear(nn.Module):
    """A named linear layer (the checkpoint nests some under ``poseEmbedding``/``poseFinal``)."""

    def __init__(self, name: str, in_dim: int, out_dim: int):
        super().__init__()
        self.name = name
        self.add_module(name, nn.Linear(in_dim, out_dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._modules[self.name](x)  # type: ignore[misc]


class TimestepEmbedder(nn.Module):
    """The diffusion variant's time embedder, kept for its checkpoint keys."""

    def __init__(self, dim: int, positions: PositionTable):
        super().__init__()
        self.sequence_pos_encoder = positions
        self.time_embed = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))


class Denoiser(nn.Module):
    """Latents (B, seq_len, parts·input_dim), times t and their conditions d (B,) or None, seed
    latents (B, seed_frames, parts·input_dim) and the condition (B, seq_len, parts·latent_dim) →
    the network's output (a velocity, or the diffusion variant's clean latents) in the latents'
    layout."""

    def __init__(self, cfg: GeneratorConfig):
        super().__init__()
        self.cfg = cfg
        d, wide = cfg.latent_dim, cfg.latent_dim * cfg.parts
        ratio = cfg.ff_size // d
        self.sequence_pos_encoder = PositionTable(d, cfg.position_table)
        self.cross_attn_blocks = nn.ModuleList(
            CrossAttentionBlock(wide, cfg.num_heads, ratio) for _ in range(cfg.cross_blocks)
        )
        self.mytimmblocks = nn.ModuleList(
            SpatialTemporalBlock(d, cfg.num_heads, ratio) for _ in range(cfg.num_layers)
        )
        self.embed_timestep = TimestepEmbedder(d, self.sequence_pos_encoder)
        self.embed_text = nn.Linear(cfg.input_dim * cfg.parts * cfg.seed_frames, d)
        self.output_process = Linear("poseFinal", d, cfg.input_dim)
        self.rel_pos = RotaryFrequencies(d)
        self.input_process = Linear("poseEmbedding", cfg.input_dim, d)
        self.input_process2 = nn.Linear(2 * d, d)
        self.time_embedding = TimeEmbedding(d, cfg.cond_proj_dim)
        self.null_cond_embed = nn.Parameter(torch.zeros(cfg.seq_len, wide))

    def forward(
        self,
        x: torch.Tensor,
        t: torch.Tensor,
        d: torch.Tensor | None,
        seed: torch.Tensor,
        cond: torch.Tensor,
    ) -> torch.Tensor:
        b, n, _ = x.shape
        p = self.cfg.parts
        style = self.embed_text(seed.reshape(b, -1)) + self.time_embedding(t, d, x.dtype)
        tokens = self.input_process(x.view(b, n, p, -1).transpose(1, 2))  # (B, parts, n, d)
        tokens = torch.cat([style[:, None, None].expand(-1, p, n, -1), tokens], dim=-1)
        tokens = self.rel_pos.rotate(self.input_process2(tokens), seq_dim=2)
        # the release regroups the (parts, frames, d) tokens into n rows of parts·d by memory
        # order (not a transpose): a row holds `parts` consecutive frames of one part
        wide = tokens.reshape(b, n, -1)
        for block in self.cross_attn_blocks:
            wide = block(wide, cond)
        tokens = wide.reshape(b, p, n, -1)
        for st_block in self.mytimmblocks:
            tokens = st_block(tokens)
        return self.output_process(tokens).transpose(1, 2).reshape(b, n, -1)


class GestureLSMGenerator(nn.Module):
    """The checkpoint's two top-level modules."""

    def __init__(self, cfg: GeneratorConfig):
        super().__init__()
        self.cfg = cfg
        self.modality_encoder = ModalityEncoder(cfg)
        self.denoiser = Denoiser(cfg)
