"""GestureLSM test support: a small configuration of the released structure, weights, inputs and
noise rebuilt from a seed (tests/fixtures/gesturelsm_parity.json and gesturelsm_variants.json were
made from these by the official code)."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch

from gesturebench.models.gesturelsm.config import (
    PART_WIDTHS,
    PARTS,
    CodecConfig,
    GeneratorConfig,
    Variant,
)
from gesturebench.models.gesturelsm.generator import GestureLSMGenerator
from gesturebench.models.gesturelsm.inference import (
    SAMPLES_PER_FRAME,
    Normalisation,
    draw_noise,
    window_count,
)
from gesturebench.models.gesturelsm.rvqvae import RVQVAE
from gesturebench.models.gesturelsm.weights import CODEC_FILES, GENERATOR_FILES, MEAN_STD_FILES
from tests.emage_support import seeded_weights

#: the official output layer assumes 128 latent channels per part, so input_dim stays
SMALL_GENERATOR = GeneratorConfig(
    latent_dim=32,
    ff_size=64,
    num_layers=2,
    num_heads=2,
    cond_proj_dim=32,
    audio_dim=32,
    vocab_size=50,
)
SMALL_CODECS = {p: CodecConfig(w, codes=64, width=32) for p, w in PART_WIDTHS.items()}
SEED = 2025
#: two whole windows (16 + 2·112 = 240 frames) and 13 frames the release drops (5 to reach a
#: multiple of 8, then 8 past the last window)
FRAMES = 253


def small_models(seed: int = SEED) -> tuple[GestureLSMGenerator, dict[str, RVQVAE]]:
    """The small generator and RVQ-VAEs in float64 eval mode with `seeded_weights` (part i gets
    seed + 1 + i)."""
    generator = GestureLSMGenerator(SMALL_GENERATOR).double().eval()
    generator.load_state_dict(seeded_weights(generator, seed))
    codecs = {}
    for i, part in enumerate(PARTS):
        codecs[part] = RVQVAE(SMALL_CODECS[part]).double().eval()
        codecs[part].load_state_dict(seeded_weights(codecs[part], seed + 1 + i))
    return generator, codecs


def seeded_inputs(seed: int = SEED) -> dict:
    """float64 ``audio`` (1, S, 2: envelope, 0/1 onsets), ``words`` (1, FRAMES) ids, reference
    ``poses`` (1, FRAMES, 165) axis-angle and ``trans`` (1, FRAMES, 3), a `Normalisation`
    ``norm`` and ``noise`` for every window."""
    g = torch.Generator().manual_seed(seed)
    f64 = {"generator": g, "dtype": torch.float64}
    samples = FRAMES * 16000 // 30
    audio = torch.stack(
        [torch.rand(samples, **f64), (torch.rand(samples, **f64) > 0.999).double()], -1
    )
    norm = Normalisation(
        torch.randn(330, **f64),
        0.5 + torch.rand(330, **f64),
        torch.randn(3, **f64),
        0.5 + torch.rand(3, **f64),
    )
    return {
        "audio": audio[None],
        "words": torch.randint(0, SMALL_GENERATOR.vocab_size, (1, FRAMES), generator=g),
        "poses": 0.4 * torch.randn(1, FRAMES, 165, **f64),
        "trans": torch.randn(1, FRAMES, 3, **f64),
        "norm": norm,
        "noise": draw_noise(1, window_count(FRAMES, SMALL_GENERATOR), SMALL_GENERATOR, g),
    }


def window_inputs(seed: int = SEED) -> dict[str, torch.Tensor]:
    """One window's float64 inputs to the small generator, as the test path slices them:
    ``audio`` (1, 128 · 533, 2: envelope, 0/1 onsets), ``words`` (1, 128) ids, ``seed``
    (1, 4, 384) latents and ``noise`` (1, 32, 384)."""
    g = torch.Generator().manual_seed(seed)
    f64 = {"generator": g, "dtype": torch.float64}
    cfg = SMALL_GENERATOR
    samples = cfg.pose_length * SAMPLES_PER_FRAME
    audio = torch.stack(
        [torch.rand(samples, **f64), (torch.rand(samples, **f64) > 0.999).double()], -1
    )
    width = cfg.parts * cfg.input_dim
    return {
        "audio": audio[None],
        "words": torch.randint(0, cfg.vocab_size, (1, cfg.pose_length), generator=g),
        "seed": torch.randn(1, cfg.seed_frames, width, **f64),
        "noise": torch.randn(1, cfg.seq_len, width, **f64),
    }


#: the small generator of a tiny release whose word table holds every mini-BEAT2 word
RELEASE_GENERATOR = replace(SMALL_GENERATOR, vocab_size=256)


def write_release(folder: Path, seed: int = SEED) -> list[str]:
    """Small seeded weights in the released layout (``module.``-prefixed generator, codecs under
    ``net``) and `seeded_inputs`' normalisation as ``mean_std/`` files, in `folder`; returns the
    ``model=gesturelsm`` overrides that run them."""
    generator = GestureLSMGenerator(RELEASE_GENERATOR).double().eval()
    generator.load_state_dict(seeded_weights(generator, seed))
    _, codecs = small_models(seed)
    folder.mkdir(parents=True, exist_ok=True)
    state = {f"module.{k}": v.float() for k, v in generator.state_dict().items()}
    torch.save({"model_state_dict": state}, folder / GENERATOR_FILES[Variant.shortcut_reflow])
    for part, codec in codecs.items():
        net = {k: v.float() if v.is_floating_point() else v for k, v in codec.state_dict().items()}
        torch.save({"net": net}, folder / CODEC_FILES[part])
    norm = seeded_inputs(seed)["norm"]
    (folder / "mean_std").mkdir(exist_ok=True)
    for field, name in MEAN_STD_FILES.items():
        np.save(folder / "mean_std" / name, getattr(norm, field).numpy())
    codec = SMALL_CODECS["upper"]
    return [
        f"model.weights={folder}",
        f"model.mean_std={folder / 'mean_std'}",
        *(f"model.generator.{k}={v}" for k, v in asdict(RELEASE_GENERATOR).items()),
        f"model.codec_codes={codec.codes}",
        f"model.codec_width={codec.width}",
    ]
