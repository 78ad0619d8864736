"""Motion-autoencoder checkpoints: a plain dict readable with `torch.load(weights_only=True)`, written atomically,
identified by the SHA-256 of its bytes, with its training config as JSON beside it.

Layout of `checkpoints/encoders/motion_ae-<dataset>.pt`: {"format", "state_dict" (weights and the
normalisation buffers `mean`, `std`), "hparams" (the module's constructor arguments), "config" (the full
training config), "summary" (training figures)}.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from pathlib import Path

import torch

from gesturebench.encoders.motion_ae import MotionAutoencoder
from gesturebench.errors import CheckpointError

FORMAT = "gesturebench.motion_ae.v1"
PREFIX = "motion_ae-"


def motion_ae_path(checkpoints_dir: str | Path, dataset: str) -> Path:
    """Where the encoder trained on `dataset` lives: `<checkpoints_dir>/encoders/motion_ae-<dataset>.pt`."""
    return Path(checkpoints_dir) / "encoders" / f"{PREFIX}{dataset}.pt"


def train_command(path: Path) -> str:
    """The command that creates the checkpoint at `path`."""
    dataset = path.stem[len(PREFIX):] if path.stem.startswith(PREFIX) else "<name>"
    return f"python launch.py task=train_encoder encoder=motion_ae dataset={dataset}"


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def save_motion_ae(module: MotionAutoencoder, path: str | Path, config: dict, summary: dict) -> str:
    """Write the checkpoint and `<path>.json` (config, summary, hash); return the checkpoint's SHA-256."""
    path = Path(path)
    payload = {
        "format": FORMAT,
        "state_dict": {k: v.detach().cpu() for k, v in module.state_dict().items()},
        "hparams": dict(module.hparams),
        "config": dict(config),
        "summary": dict(summary),
    }
    buf = io.BytesIO()
    torch.save(payload, buf)
    data = buf.getvalue()
    sha = hashlib.sha256(data).hexdigest()
    _atomic_write(path, data)
    meta = {"checkpoint": path.name, "sha256": sha, "config": payload["config"],
            "hparams": payload["hparams"], "summary": payload["summary"]}
    _atomic_write(path.with_suffix(".json"), (json.dumps(meta, indent=2) + "\n").encode())
    return sha


def load_motion_ae(path: str | Path) -> tuple[MotionAutoencoder, dict]:
    """Load a checkpoint as a frozen module in eval mode, with info {"path", "sha256", "config"}."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no motion_ae encoder checkpoint; create it with `{train_command(path)}`")
    data = path.read_bytes()
    try:
        payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
        if payload.get("format") != FORMAT:
            raise ValueError(f"format {payload.get('format')!r}, expected {FORMAT!r}")
        module = MotionAutoencoder(**payload["hparams"])
        module.load_state_dict(payload["state_dict"])
    except Exception as e:  # any unreadable or mismatched file is the same user-facing problem
        raise CheckpointError(
            f"{path}: not a usable motion_ae checkpoint ({e}); recreate it with `{train_command(path)}`"
        ) from e
    module.eval().requires_grad_(False)
    info = {"path": str(path), "sha256": hashlib.sha256(data).hexdigest(), "config": payload["config"]}
    return module, info
