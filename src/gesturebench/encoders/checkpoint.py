"""Encoder checkpoints: a plain dict readable with `torch.load(weights_only=True)`, written
atomically, identified by the SHA-256 of its bytes, with its training config as JSON beside it.

`<checkpoints>/encoders/<encoder>-<dataset>.pt` holds {"format", "state_dict" (weights and buffers,
e.g. the motion autoencoder's normalisation `mean`/`std`), "hparams" (the module's constructor
arguments), "config" (the full training config)}: only what determines the weights, so that a
retrain with the same seed writes the same bytes and the same SHA-256 (results.json's
`encoders.*.sha256` then shows that two runs used the same encoder). The `.json` beside it is its
cache sidecar (`runtime.caches`: format, file name, SHA-256, schema: every weight finite) with the
training figures ("summary", with its wall-clock seconds). Loading refuses non-finite weights,
naming the file; an auto-trained encoder that fails its sidecar is set aside and retrained. The
helpers are
generic over the encoder class; metrics call their config's `EncoderConfig.load_or_train` in
`prepare` (load the dataset's checkpoint, training it first where auto-training is allowed).
"""

from __future__ import annotations

import hashlib
import io
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytorch_lightning as pl
import torch

from gesturebench.encoders.motion_ae import MotionAutoencoder
from gesturebench.runtime.atomic import one_line
from gesturebench.runtime.caches import WEIGHTS, CacheEntry, check_weights
from gesturebench.runtime.errors import CheckpointError

MOTION_AE = "motion_ae"
MOTION_AE_FORMAT = "gesturebench.motion_ae.v1"

Encoder = TypeVar("Encoder", bound=pl.LightningModule)


def encoder_entry(
    path: str | Path, fmt: str, load: Callable[[Path], tuple[Any, dict]]
) -> CacheEntry[tuple[Any, dict]]:
    """The checkpoint at `path` as a cache entry of format `fmt`, read by `load`, its `.json` the
    sidecar."""
    path = Path(path)
    return CacheEntry(
        path,
        fmt,
        {"checkpoint": path.name},
        WEIGHTS,
        decode=load,
        arrays=lambda loaded: loaded[0].state_dict(),
        sidecar=path.with_suffix(".json"),
    )


def encoder_path(checkpoints_dir: str | Path, encoder: str, dataset: str) -> Path:
    """`<checkpoints_dir>/encoders/<encoder>-<dataset>.pt`."""
    return Path(checkpoints_dir) / "encoders" / f"{encoder}-{dataset}.pt"


def train_command(path: Path, encoder: str, overrides: Sequence[str] = ()) -> str:
    """The command that creates `encoder`'s checkpoint at `path` (named
    `<encoder>-<dataset>.pt`), with the ``dataset.*`` and ``paths.*`` ones of the run's command-line
    `overrides` (where the data is, where the checkpoint goes)."""
    prefix = f"{encoder}-"
    dataset = path.stem[len(prefix) :] if path.stem.startswith(prefix) else ""
    carried = [
        shlex.quote(override)
        for override in overrides
        if override.lstrip("+~").startswith(("dataset.", "paths."))
    ]
    return " ".join(
        [
            f"python launch.py task=train_encoder encoder={encoder} dataset={dataset or '<name>'}",
            *carried,
        ]
    )


def save_encoder(
    module: pl.LightningModule,
    entry: CacheEntry,
    config: dict,
    summary: dict,
    extra: dict | None = None,
) -> str:
    """Write the checkpoint (weights, hparams, config) of `entry` and its `.json` sidecar (with the
    config, hparams, summary and `extra` fields); return the SHA-256."""
    payload = {
        "format": entry.producer,
        "state_dict": {k: v.detach().cpu() for k, v in module.state_dict().items()},
        "hparams": dict(module.hparams),
        "config": dict(config),
    }
    buf = io.BytesIO()
    torch.save(payload, buf)
    data = buf.getvalue()
    fields = {"config": payload["config"], "hparams": payload["hparams"], "summary": dict(summary)}
    entry.write(data, {**fields, **(extra or {})})
    return hashlib.sha256(data).hexdigest()


def load_encoder(
    path: str | Path,
    module_cls: type[Encoder],
    fmt: str,
    encoder: str,
    overrides: Sequence[str] = (),
) -> tuple[Encoder, dict]:
    """A frozen module in eval mode and its info {"path", "sha256", "config"}; `CheckpointError` if
    unusable, naming the command that creates it (`train_command` with `overrides`)."""
    path = Path(path)
    if not path.is_file():
        command = train_command(path, encoder, overrides)
        raise CheckpointError(
            f"{path}: no {encoder} encoder checkpoint; create it with `{command}`"
        )
    data = path.read_bytes()
    try:
        payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
        if payload.get("format") != fmt:
            raise ValueError(f"format {payload.get('format')!r}, expected {fmt!r}")
        module = module_cls(**payload["hparams"])
        module.load_state_dict(payload["state_dict"])
    except Exception as exc:  # any unreadable or mismatched file is the same user-facing problem
        raise CheckpointError(
            f"{path}: not a usable {encoder} checkpoint ({one_line(exc)}); "
            f"recreate it with `{train_command(path, encoder, overrides)}`"
        ) from exc
    check_weights(payload["state_dict"], path)
    module.eval().requires_grad_(False)
    return module, {
        "path": str(path),
        "sha256": hashlib.sha256(data).hexdigest(),
        "config": payload["config"],
    }


def motion_ae_path(checkpoints_dir: str | Path, dataset: str) -> Path:
    return encoder_path(checkpoints_dir, MOTION_AE, dataset)


def save_motion_ae(module: MotionAutoencoder, path: str | Path, config: dict, summary: dict) -> str:
    return save_encoder(
        module, encoder_entry(path, MOTION_AE_FORMAT, load_motion_ae), config, summary
    )


def load_motion_ae(
    path: str | Path, overrides: Sequence[str] = ()
) -> tuple[MotionAutoencoder, dict]:
    return load_encoder(path, MotionAutoencoder, MOTION_AE_FORMAT, MOTION_AE, overrides)
