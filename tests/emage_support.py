"""EMAGE test support: a small configuration of the released structure, weights and inputs rebuilt
from a seed (tests/fixtures/emage_layout.json was made from these by the official code)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path

import torch
from torch import nn

from gesturebench.encoders.representation import rotation_6d
from gesturebench.models.emage.codecs import PARTS, BodyCodec
from gesturebench.models.emage.config import CodecConfig, GeneratorConfig
from gesturebench.models.emage.generator import EmageGenerator
from gesturebench.models.emage.release import CONFIG, WEIGHTS

SMALL_GENERATOR = GeneratorConfig(audio_f=32, motion_f=32, hidden_size=64, vae_codebook_size=32)
#: vae_test_dim of each part: jaw 6D + 100 expressions; 13 upper joints; 30 hand joints; 9 lower
#: joints + translation + foot contact (the global autoencoder reads the same)
PART_DIMS = {"face": 106, "upper": 78, "hands": 180, "lower": 61, "global": 61}
#: depth of each part's codec as the official code builds the released ones (docs/emage.md, "Codec
#: sizes"): 2 for face, upper body and hands, 4 for the lower body and the global autoencoder
CODEC_DEPTHS = {"face": 2, "upper": 2, "hands": 2, "lower": 4, "global": 4}
SMALL_CODECS = {
    p: CodecConfig(vae_test_dim=d, vae_length=32, vae_layer=CODEC_DEPTHS[p], vae_codebook_size=32)
    for p, d in PART_DIMS.items()
}
SEED = 2024
SECONDS = 4.5  # 135 frames: two full windows and a final one of 15 frames


def seeded_weights(module: nn.Module, seed: int) -> dict[str, torch.Tensor]:
    """A float64 state dict for `module`, drawn in sorted key order from `seed`: independent of the
    order modules are built in. Weights are scaled by 1/√fan-in, norms' scales near 1, batch-norm
    statistics non-trivial; position-code buffers (`pe`, rotary `inv_freq`) and batch counters are
    kept."""
    g = torch.Generator().manual_seed(seed)
    state = {}
    for key, value in sorted(module.state_dict().items()):
        shape = value.shape
        if key.endswith(("num_batches_tracked", ".pe", ".inv_freq")):
            state[key] = value.clone()
        elif key.endswith("running_var"):
            state[key] = 0.5 + torch.rand(shape, generator=g, dtype=torch.float64)
        elif ".norm" in key or ".bn" in key or key.endswith("downsample.1.weight"):
            state[key] = 1 + 0.1 * torch.randn(shape, generator=g, dtype=torch.float64)
        else:
            scale = 1 / math.sqrt(math.prod(shape[1:])) if len(shape) > 1 else 0.1
            state[key] = scale * torch.randn(shape, generator=g, dtype=torch.float64)
    return state


def small_models(seed: int = SEED) -> tuple[EmageGenerator, BodyCodec]:
    """The small generator and codecs in float64 eval mode with `seeded_weights` (codec part i gets
    seed + 1 + i)."""
    generator = EmageGenerator(SMALL_GENERATOR).double().eval()
    generator.load_state_dict(seeded_weights(generator, seed))
    codec = BodyCodec(SMALL_CODECS).double().eval()
    for i, part in enumerate(PARTS):
        codec.parts[part].load_state_dict(seeded_weights(codec.parts[part], seed + 1 + i))
    return generator, codec


def seeded_inputs(seed: int = SEED) -> dict[str, torch.Tensor]:
    """float64 ``audio`` (1, S) at 16 kHz and a random reference ``motion`` (1, T, 337: 6D joints,
    translation, 0/1 foot contact) covering it."""
    g = torch.Generator().manual_seed(seed)
    samples = int(SECONDS * 16000)
    frames = samples * 30 // 16000
    audio = 0.1 * torch.randn(1, samples, generator=g, dtype=torch.float64)
    axis_angle = 0.4 * torch.randn(frames, 55, 3, generator=g, dtype=torch.float64)
    rot = rotation_6d(axis_angle).reshape(1, frames, -1)
    trans = torch.randn(1, frames, 3, generator=g, dtype=torch.float64)
    contact = (torch.rand(1, frames, 4, generator=g, dtype=torch.float64) > 0.5).double()
    return {"audio": audio, "motion": torch.cat([rot, trans, contact], dim=-1)}


def write_release(folder: Path, seed: int = SEED) -> Path:
    """`small_models(seed)` in the released layout (float32 `pytorch_model.bin` + `config.json` with
    the official files' extra keys, at the top and under ``emage_vq/<part>/``); returns `folder`."""
    generator, codec = small_models(seed)
    nets = {"": (generator, asdict(SMALL_GENERATOR), "emage_audio")}
    for part in PARTS:
        nets[f"emage_vq/{part}/"] = (codec.parts[part], asdict(SMALL_CODECS[part]), "emage_vq")
    for sub, (net, config, kind) in nets.items():
        (folder / sub).mkdir(parents=True, exist_ok=True)
        (folder / sub / CONFIG).write_text(
            json.dumps({"model_type": kind, "torch_dtype": "float32", **config}, indent=2)
        )
        state = {k: v.float() if v.is_floating_point() else v for k, v in net.state_dict().items()}
        torch.save(state, folder / sub / WEIGHTS)
    return folder
