"""A `source=module` network's weights, loaded without unpickling arbitrary objects."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

import torch

from gesturebench.runtime.atomic import one_line
from gesturebench.runtime.caches import check_weights
from gesturebench.runtime.errors import CheckpointError


def load_weights(module: torch.nn.Module, path: Path, target: str) -> None:
    """Load a state dict (plain, or a Lightning checkpoint's ``state_dict``) with
    ``torch.load(weights_only=True)``."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # unpickling refusals and corrupt files alike: the file is unusable
        raise CheckpointError(
            f"{path}: not loadable with torch.load(weights_only=True) ({one_line(exc)}); save the "
            f"weights as torch.save(model.state_dict(), path)"
        ) from exc
    if isinstance(state, Mapping) and "state_dict" in state:
        state = state["state_dict"]
    if isinstance(state, Mapping):
        check_weights(state, path)
    try:
        module.load_state_dict(state)
    except (RuntimeError, TypeError, AttributeError) as exc:
        raise CheckpointError(f"{path}: does not fit {target} ({one_line(exc)[:600]})") from exc


def file_digest(path: Path) -> str:
    """The SHA-256 of a file (the weights a module's results were generated with)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
