"""One window of latents from explicit noise, by the sampler of each released generator (the
same network): the shortcut model's Euler steps of the guided velocity, the diffusion model's
DDIM steps (squared-cosine schedule over 1000 training steps, "leading" spacing, η = 0, the
network predicting the clean latents) and MeanFlow's single step of the mean velocity from t = 1
to r = 0. Classifier-free guidance runs a second, null-conditioned pass only when the guidance
scale is above 1, as upstream."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from gesturebench.models.gesturelsm.config import SamplingConfig
from gesturebench.models.gesturelsm.generator import GestureLSMGenerator

#: the diffusion variant's training steps (its scheduler's ``num_train_timesteps``)
TRAIN_STEPS = 1000
Model = Callable[[torch.Tensor, torch.Tensor, torch.Tensor | None], torch.Tensor]


def cosine_alphas(train_steps: int = TRAIN_STEPS) -> torch.Tensor:
    """ᾱ_t (float32) of the squared-cosine schedule: β_i = min(1 − ā((i + 1)/T) / ā(i/T), 0.999)
    with ā(s) = cos²((s + 0.008)/1.008 · π/2), ᾱ the running product of 1 − β."""

    def bar(s: float) -> float:
        return math.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2

    betas = [
        min(1 - bar((i + 1) / train_steps) / bar(i / train_steps), 0.999)
        for i in range(train_steps)
    ]
    return torch.cumprod(1 - torch.tensor(betas, dtype=torch.float32), dim=0)


def shortcut(model: Model, noise: torch.Tensor, steps: int) -> torch.Tensor:
    """Integrate the velocity from t = 0 to 1 in `steps` equal steps (times and step size in
    float32, as upstream), the step size as the shortcut condition."""
    b = len(noise)
    times = torch.linspace(1e-8, 1 - 1e-8, steps + 1, device=noise.device)
    size = torch.tensor(1 / steps, device=noise.device).expand(b)
    x = noise
    for k in range(steps):
        x = x + (times[k + 1] - times[k]) * model(x, times[k].expand(b), size)
    return x


def ddim(model: Model, noise: torch.Tensor, steps: int) -> torch.Tensor:
    """Deterministic DDIM over timesteps 1000/steps · (steps − 1, …, 0), started from zero latents
    noised to the first one; each step predicts the clean latents x̂ and moves to the previous
    timestep along ε̂ = (x − √ᾱ_t x̂)/√(1 − ᾱ_t) (ᾱ = 1 past the last)."""
    alphas = cosine_alphas()
    stride = TRAIN_STEPS // steps
    times = [stride * i for i in reversed(range(steps))]
    x = (1 - alphas[times[0]].to(noise.dtype)) ** 0.5 * noise
    for t in times:
        clean = model(x, torch.full((len(noise),), t, device=noise.device), None)
        now = alphas[t]
        before = alphas[t - stride] if t >= stride else torch.tensor(1.0)
        eps = (x - now**0.5 * clean) / (1 - now) ** 0.5
        x = before**0.5 * clean + (1 - before) ** 0.5 * eps
    return x


def meanflow(model: Model, noise: torch.Tensor) -> torch.Tensor:
    """One step: the noise minus the mean velocity over [r, t] = [0, 1] (r as the condition)."""
    ones = torch.ones(len(noise), device=noise.device)
    return noise - model(noise, ones, torch.zeros_like(ones))


@torch.no_grad()
def sample_window(
    generator: GestureLSMGenerator,
    audio: torch.Tensor,
    words: torch.Tensor,
    seed: torch.Tensor,
    noise: torch.Tensor,
    sampling: SamplingConfig,
) -> torch.Tensor:
    """One window: `audio` (B, S, 2), `words` (B, pose_length), `seed` (B, seed_frames, 384),
    `noise` (B, seq_len, 384) → latents (B, seq_len, 384) by `sampling`."""
    cond = generator.modality_encoder(audio, words)
    null = generator.denoiser.null_cond_embed.to(cond.dtype).expand_as(cond)
    g = sampling.guidance

    def model(x: torch.Tensor, t: torch.Tensor, d: torch.Tensor | None) -> torch.Tensor:
        if g <= 1:
            return generator.denoiser(x, t, d, seed, cond)
        pair = generator.denoiser(
            torch.cat([x, x]),
            torch.cat([t, t]),
            None if d is None else torch.cat([d, d]),
            torch.cat([seed, seed]),
            torch.cat([cond, null]),
        )
        v_cond, v_null = pair.chunk(2)
        return v_null + g * (v_cond - v_null)

    if sampling.method == "shortcut":
        return shortcut(model, noise, sampling.steps)
    if sampling.method == "ddim":
        return ddim(model, noise, sampling.steps)
    if sampling.method == "meanflow" and sampling.steps == 1:
        return meanflow(model, noise)
    raise ValueError(f"no sampler for {sampling}")
