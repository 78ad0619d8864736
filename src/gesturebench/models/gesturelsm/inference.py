"""GestureLSM's generation over a whole recording, as the release's test path does it.

The motion is cut to a multiple of 8 frames; windows of `pose_length` (128) frames = `seq_len`
(32) latent frames advance by 112 frames, so consecutive windows overlap by the 4 latent seed
frames (16 motion frames). The first window is seeded with the first 4 latent frames of the
reference (its RVQ-VAE encoding, divided by `latent_scale`), later ones with the last 4 latent
frames the previous window generated; a later window's first 4 latent frames are dropped. Frames
past the last whole window are not generated. Each window's latents are drawn from explicit noise
by the variant's sampler (`samplers.sample_window`); the latents of all windows are decoded
once at the end. The jaw (joint 22) is the reference's, as upstream; expressions and translation
are not generated (upstream copies the reference's: they are copied fields)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from gesturebench.data.records import FPS, N_JOINTS, SAMPLE_RATE
from gesturebench.encoders.representation import rotation_6d
from gesturebench.models.emage.codecs import (
    HANDS_JOINTS,
    JAW,
    LOWER_JOINTS,
    UPPER_JOINTS,
)
from gesturebench.models.emage.rotations import rotation_6d_to_axis_angle
from gesturebench.models.gesturelsm.config import (
    PARTS,
    SAMPLINGS,
    GeneratorConfig,
    SamplingConfig,
    Variant,
)
from gesturebench.models.gesturelsm.generator import GestureLSMGenerator
from gesturebench.models.gesturelsm.rvqvae import RVQVAE
from gesturebench.models.gesturelsm.samplers import sample_window
from gesturebench.runtime.errors import DataError

JOINTS = {"upper": UPPER_JOINTS, "hands": HANDS_JOINTS, "lower": LOWER_JOINTS}
#: audio samples per motion frame as upstream slices the 16 kHz features (16000 // 30, not
#: 533.3: later windows' audio drifts ahead of the motion by 1/3 sample per frame)
SAMPLES_PER_FRAME = SAMPLE_RATE // FPS
#: the default variant's sampling (shortcut with reflow: 2 steps, guidance 2)
PAPER = SAMPLINGS[Variant.shortcut_reflow]


@dataclass(frozen=True)
class Normalisation:
    """The release's ``mean_std`` files: `mean`/`std` (330,) over 55 joints' 6D rotations and
    `trans_mean`/`trans_std` (3,) over the translation velocity."""

    mean: torch.Tensor
    std: torch.Tensor
    trans_mean: torch.Tensor
    trans_std: torch.Tensor

    def channels(self, part: str) -> tuple[torch.Tensor, torch.Tensor]:
        """A part's mean and std, translation velocity last for the lower body."""
        idx = torch.tensor([6 * j + k for j in JOINTS[part] for k in range(6)])
        mean, std = self.mean[idx], self.std[idx]
        if part == "lower":
            return torch.cat([mean, self.trans_mean]), torch.cat([std, self.trans_std])
        return mean, std


def translation_velocity(trans: torch.Tensor) -> torch.Tensor:
    """(B, T, 3) → (B, T, 3): x and z frame differences (the first frame repeats the second), y
    as it is — the lower RVQ-VAE's last 3 channels, before normalisation."""
    step = trans[:, 1:] - trans[:, :-1]
    step = torch.cat([step[:, :1], step], dim=1)
    return torch.stack([step[..., 0], trans[..., 1], step[..., 2]], dim=-1)


def part_motion(
    poses: torch.Tensor, trans: torch.Tensor, norm: Normalisation
) -> dict[str, torch.Tensor]:
    """Reference axis-angle `poses` (B, T, 165) and `trans` (B, T, 3) → each part's normalised
    RVQ-VAE input."""
    rot = rotation_6d(poses.reshape(*poses.shape[:2], N_JOINTS, 3))
    out = {}
    for part in PARTS:
        values = rot[:, :, list(JOINTS[part])].flatten(2)
        if part == "lower":
            values = torch.cat([values, translation_velocity(trans)], dim=-1)
        mean, std = norm.channels(part)
        out[part] = (values - mean.to(values)) / std.to(values)
    return out


def window_count(frames: int, cfg: GeneratorConfig) -> int:
    """How many windows the release generates for `frames` reference frames."""
    seed = cfg.seed_frames * cfg.squeeze
    return (frames - frames % 8 - seed) // (cfg.pose_length - seed)


def draw_noise(
    batch: int, windows: int, cfg: GeneratorConfig, generator: torch.Generator, **like
) -> torch.Tensor:
    """Standard normal initial latents (B, windows, seq_len, parts·input_dim) from `generator`
    (the model's seed), drawn on the CPU so a seed gives the same draw on every device."""
    shape = (batch, windows, cfg.seq_len, cfg.parts * cfg.input_dim)
    return torch.randn(shape, generator=generator, dtype=torch.float64).to(**like)


@torch.no_grad()
def generate(
    generator: GestureLSMGenerator,
    codecs: dict[str, RVQVAE],
    norm: Normalisation,
    audio: torch.Tensor,
    words: torch.Tensor,
    poses: torch.Tensor,
    trans: torch.Tensor,
    noise: torch.Tensor,
    sampling: SamplingConfig = PAPER,
    on_window: Callable[[int, int], None] | None = None,
) -> dict[str, torch.Tensor]:
    """A recording: `audio` (B, S, 2) envelope and onset channels at 16 kHz, `words` (B, T) ids
    per motion frame, the reference `poses` (B, T, 165) and `trans` (B, T, 3), `noise` from
    `draw_noise` → ``poses`` (B, F, 165) axis-angle (F = 16 + 112 · windows ≤ T; jaw from the
    reference) and ``latents`` (B, F / 4, 384). `on_window(done, total)` follows the windows."""
    cfg = generator.cfg
    windows = window_count(poses.shape[1], cfg)
    if windows < 1 or words.shape[1] < poses.shape[1]:
        raise DataError(
            "reference",
            f"GestureLSM needs at least {cfg.pose_length} frames of motion and a word id per "
            f"frame; got {poses.shape[1]} frames and {words.shape[1]} word ids",
        )
    if noise.shape[1] < windows:
        raise ValueError(f"noise holds {noise.shape[1]} windows, {windows} are needed")
    motion = part_motion(poses, trans, norm)
    latent = torch.cat([codecs[p].encode(motion[p]) for p in PARTS], -1) / sampling.latent_scale
    s = cfg.seed_frames
    stride = cfg.pose_length - s * cfg.squeeze
    seed, pieces = latent[:, :s], []
    for i in range(windows):
        start = i * stride
        window_audio = audio[
            :, start * SAMPLES_PER_FRAME : (start + cfg.pose_length) * SAMPLES_PER_FRAME
        ]
        window = sample_window(
            generator,
            window_audio,
            words[:, start : start + cfg.pose_length],
            seed,
            noise[:, i],
            sampling,
        )
        pieces.append(window if i == 0 else window[:, s:])
        seed = window[:, -s:]
        if on_window:
            on_window(i + 1, windows)
    latents = torch.cat(pieces, dim=1)
    frames = cfg.squeeze * latents.shape[1]
    out = poses.new_zeros(poses.shape[0], frames, N_JOINTS, 3)
    scaled = latents * sampling.latent_scale
    for j, part in enumerate(PARTS):
        width = cfg.input_dim
        decoded = codecs[part].decode(scaled[..., j * width : (j + 1) * width])
        mean, std = norm.channels(part)
        decoded = decoded * std.to(decoded) + mean.to(decoded)
        rot = decoded[..., : 6 * len(JOINTS[part])].reshape(*decoded.shape[:2], -1, 6)
        out[:, :, list(JOINTS[part])] = rotation_6d_to_axis_angle(rot)
    out[:, :, JAW] = poses[:, :frames].reshape(*out.shape[:2], N_JOINTS, 3)[:, :, JAW]
    return {"poses": out.reshape(out.shape[0], frames, -1), "latents": latents}
