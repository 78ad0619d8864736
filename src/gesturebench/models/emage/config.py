"""The `config.json` fields EMAGE's generator and motion codecs are built from (the Hugging Face
layout of ``H-Liu1997/emage_audio``); other fields of those files are ignored.

The released files hold every field read here. Their values: the generator's are `GeneratorConfig`'s
defaults; the codecs' ``emage_vq/<part>/config.json`` give vae_length 256 and vae_codebook_size 256
throughout, vae_layer 2 for the face, upper body and hands and 4 for the lower body and the global
autoencoder (as PantoMatrix's EMAGE trainer builds them: docs/emage.md, "Codec sizes")."""

from __future__ import annotations

import json
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from gesturebench.runtime.errors import CheckpointError

C = TypeVar("C", bound="_FromJson")


class _FromJson:
    @classmethod
    def from_json(cls: type[C], path: Path) -> C:
        """The config in `path`; a missing or non-integer field is a `CheckpointError`."""
        try:
            data: dict[str, Any] = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"{path}: not a readable JSON config ({exc})") from exc
        values = {}
        for f in fields(cls):  # type: ignore[arg-type]
            if f.name not in data and f.default is MISSING:
                raise CheckpointError(f"{path}: lacks the field {f.name}")
            value = data.get(f.name, f.default)
            if not isinstance(value, int) or isinstance(value, bool):
                raise CheckpointError(f"{path}: {f.name} must be an integer, got {value!r}")
            values[f.name] = value
        return cls(**values)


@dataclass(frozen=True)
class GeneratorConfig(_FromJson):
    """The generator: feature widths, codebook size, window and seed lengths, and per body part
    whether it is decoded from class logits (``c*`` > 0) or from a regressed latent (``l*`` > 0)."""

    audio_f: int = 256
    motion_f: int = 256
    hidden_size: int = 768
    pose_dims: int = 330
    speaker_dims: int = 1
    vae_codebook_size: int = 256
    pose_length: int = 64
    seed_frames: int = 4
    audio_sr: int = 16000
    pose_fps: int = 30
    lf: int = 3
    lu: int = 3
    lh: int = 3
    ll: int = 3
    cf: int = 0
    cu: int = 1
    ch: int = 1
    cl: int = 1


@dataclass(frozen=True)
class CodecConfig(_FromJson):
    """A body part's convolutional VQ-VAE (or, for the global motion, plain autoencoder): every
    field is read from its config.json (they differ per part)."""

    vae_test_dim: int
    vae_length: int
    vae_layer: int
    vae_codebook_size: int
