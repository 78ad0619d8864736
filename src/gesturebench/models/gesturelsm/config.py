"""The sizes GestureLSM's networks are built from, as the paper's shortcut model is configured
(``configs_new/shortcut_rvqvae_128.yaml`` and the trainer's RVQ-VAE arguments upstream), and the
released generator variants: the same network sampled by another method."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

#: body parts the generator denoises, in the order their latents are concatenated
PARTS = ("upper", "hands", "lower")
#: 6D channels each part's RVQ-VAE reads (the lower body adds 3 normalised translation channels)
PART_WIDTHS = {"upper": 13 * 6, "hands": 30 * 6, "lower": 9 * 6 + 3}
#: word table rows of BEAT2's ``weights/vocab.pkl`` (fastText, 300 dimensions)
BEAT2_VOCAB = 11195


@dataclass(frozen=True)
class GeneratorConfig:
    """The denoiser (``latent_dim`` per part token, ``num_layers`` spatial–temporal blocks, three
    cross-attention blocks at ``latent_dim`` × parts) and the modality encoder."""

    input_dim: int = 128
    latent_dim: int = 256
    ff_size: int = 1024
    num_layers: int = 8
    num_heads: int = 4
    cross_blocks: int = 3
    seq_len: int = 32
    seed_frames: int = 4
    cond_proj_dim: int = 256
    audio_dim: int = 256
    audio_channels: int = 2
    word_dim: int = 300
    vocab_size: int = BEAT2_VOCAB
    pose_length: int = 128
    position_table: int = 5000

    @property
    def parts(self) -> int:
        return len(PARTS)

    @property
    def squeeze(self) -> int:
        """Motion frames per latent frame."""
        return self.pose_length // self.seq_len


#: every RVQ-VAE: time ÷ 2^RVQ_DOWN, RVQ_DEPTH residual convolutions per scale (dilations 9, 3, 1)
RVQ_DOWN, RVQ_DEPTH, RVQ_DILATION_GROWTH = 2, 3, 3


@dataclass(frozen=True)
class CodecConfig:
    """A body part's residual VQ-VAE: a strided 1D convolutional encoder/decoder `width` wide
    around ``quantizers`` codebooks of ``codes`` × ``code_dim``."""

    input_width: int
    codes: int = 1024
    code_dim: int = 128
    width: int = 512
    quantizers: int = 6


class Variant(str, Enum):
    """``model.variant``: a released generator and how upstream samples it (`SAMPLINGS`)."""

    shortcut_reflow = "shortcut_reflow"
    shortcut = "shortcut"
    diffusion = "diffusion"
    meanflow = "meanflow"


@dataclass(frozen=True)
class SamplingConfig:
    """Test-time sampling of one window: `method` "shortcut" (`steps` Euler steps of the
    velocity, the step size as its shortcut condition), "ddim" (`steps` DDIM steps, the network
    predicting the clean latents) or "meanflow" (one step of the mean velocity); classifier-free
    guidance `guidance` against the learned null condition when above 1. Latents are divided by
    `latent_scale` for the generator."""

    method: str = "shortcut"
    steps: int = 2
    guidance: float = 2.0
    latent_scale: float = 5.0


#: each released variant's sampling as its upstream config sets it
#: (``configs_new/{shortcut,diffusion,meanflow}_rvqvae_128.yaml``)
SAMPLINGS = {
    Variant.shortcut_reflow: SamplingConfig(),
    Variant.diffusion: SamplingConfig("ddim", steps=20, guidance=1.5),
    Variant.meanflow: SamplingConfig("meanflow", steps=1, guidance=1.0),
}
