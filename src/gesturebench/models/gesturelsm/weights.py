"""GestureLSM's released files and their strict loading.

Hugging Face ``pliu23/GestureLSM`` holds the generators of the variants the upstream README lists
(``shortcut_reflow.bin``: the shortcut model with reflow, sampled in 2 steps;
``new_540_diffusion.bin``; ``meanflow.pth``), all of one network layout, and the RVQ-VAEs
``net_300000_{upper,hands,lower}.pth``.
The generator checkpoints hold ``model_state_dict`` (or ``model_state``) saved from a DataParallel
wrapper (``module.`` prefix); upstream loads them non-strictly, dropping legacy
``modality_encoder.audio_encoder.*`` entries. Ours drops the prefix and those entries and then
loads strictly: any other difference is a one-line error naming the missing/unexpected keys.
The normalisation files are in the GitHub repository's ``mean_std/`` folder. `task=fetch` gets
them all (`gesturebench.assets.table`, which also pins the SHA-256 a Hub download must match)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch

from gesturebench.assets.table import pinned
from gesturebench.models.gesturelsm.config import (
    PART_WIDTHS,
    PARTS,
    CodecConfig,
    GeneratorConfig,
    Variant,
)
from gesturebench.models.gesturelsm.generator import GestureLSMGenerator
from gesturebench.models.gesturelsm.inference import Normalisation
from gesturebench.models.gesturelsm.rvqvae import RVQVAE
from gesturebench.runtime.atomic import one_line
from gesturebench.runtime.caches import check_weights
from gesturebench.runtime.errors import CheckpointError, DataError
from gesturebench.runtime.weights import HubFiles

#: generator checkpoint of each released variant
GENERATOR_FILES = {
    Variant.shortcut_reflow: "shortcut_reflow.bin",
    Variant.diffusion: "new_540_diffusion.bin",
    Variant.meanflow: "meanflow.pth",
}
#: variants whose checkpoint is not released, and why
UNRELEASED = {
    Variant.shortcut: "the shortcut model without reflow (20 steps; new_540_shortcut.bin in the "
    "legacy configs/shortcut_rvqvae_128.yaml) is not among the checkpoints GestureLSM's README "
    "lists for pliu23/GestureLSM",
}
CODEC_FILES = {part: f"net_300000_{part}.pth" for part in PARTS}


def release_files(variant: Variant) -> HubFiles:
    """The files `variant` needs: its generator, then the RVQ-VAEs."""
    files = (GENERATOR_FILES[variant], *CODEC_FILES.values())
    pins = pinned("pliu23/GestureLSM", "gesturelsm")
    return HubFiles(
        repo_id="pliu23/GestureLSM",
        files=files,
        folder="gesturelsm",
        sha256={name: pins[name] for name in files if name in pins},
    )


GESTURELSM_FILES = release_files(Variant.shortcut_reflow)
#: ``mean_std/`` of github.com/andypinxinliu/GestureLSM, as `Normalisation` fields
MEAN_STD_FILES = {
    "mean": "beatx_2_330_mean.npy",
    "std": "beatx_2_330_std.npy",
    "trans_mean": "beatx_2_trans_mean.npy",
    "trans_std": "beatx_2_trans_std.npy",
}
LEGACY_PREFIX = "modality_encoder.audio_encoder."


def _read(path: Path, keys: tuple[str, ...]) -> Mapping[str, torch.Tensor]:
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # missing, corrupt or refused: the file is unusable either way
        raise CheckpointError(f"{path}: not loadable ({one_line(exc)})") from exc
    for key in keys:
        if isinstance(payload, Mapping) and key in payload:
            check_weights(payload[key], path)
            return payload[key]
    raise CheckpointError(f"{path}: holds none of {', '.join(keys)}")


def load_strict(module: torch.nn.Module, state: Mapping[str, torch.Tensor], path: Path) -> None:
    """`state` without a ``module.`` prefix and legacy audio-encoder entries, loaded strictly;
    missing or unexpected keys are one `CheckpointError` line."""
    state = {k.removeprefix("module."): v for k, v in state.items()}
    state = {k: v for k, v in state.items() if not k.startswith(LEGACY_PREFIX)}
    expected = module.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:
        raise CheckpointError(
            f"{path}: does not fit {type(module).__name__}: {len(missing)} missing keys "
            f"{missing[:3]}, {len(unexpected)} unexpected keys {unexpected[:3]}"
        )
    try:
        module.load_state_dict(state)
    except RuntimeError as exc:
        raise CheckpointError(f"{path}: {one_line(exc)[:400]}") from exc


def load_generator(path: Path, cfg: GeneratorConfig | None = None) -> GestureLSMGenerator:
    """The generator (full size unless `cfg`) from a released checkpoint."""
    generator = GestureLSMGenerator(cfg or GeneratorConfig())
    load_strict(generator, _read(path, ("model_state_dict", "model_state")), path)
    return generator.eval()


def load_codecs(root: Path, configs: Mapping[str, CodecConfig] | None = None) -> dict[str, RVQVAE]:
    """The RVQ-VAEs from ``<root>/net_300000_<part>.pth`` (their weights under ``net``)."""
    codecs = {}
    for part in PARTS:
        codec = RVQVAE(configs[part] if configs else CodecConfig(PART_WIDTHS[part]))
        load_strict(codec, _read(root / CODEC_FILES[part], ("net",)), root / CODEC_FILES[part])
        codecs[part] = codec.eval()
    return codecs


def load_normalisation(folder: Path) -> Normalisation:
    """The four ``mean_std`` arrays in `folder` (float64)."""
    arrays = {}
    for field, name in MEAN_STD_FILES.items():
        path = folder / name
        if not path.is_file():
            raise DataError(
                path,
                "GestureLSM normalisation file not found (copy mean_std/ from its repository, or "
                "run python launch.py task=fetch model=gesturelsm)",
            )
        arrays[field] = torch.from_numpy(np.load(path).astype(np.float64))
    return Normalisation(**arrays)
