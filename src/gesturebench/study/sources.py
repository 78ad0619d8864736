"""A study's sources (`study.sources`: name → model node) as the model nodes a task builds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gesturebench.runtime.errors import ConfigError


def source_model(name: str, node: Mapping[str, Any]) -> dict:
    """The model node of study source `name` (`node`: its entry of `study.sources`), named after
    it; a mandatory option left unset (`???`) is a `ConfigError` naming its key, and so are
    `samples` above 1: a study rates one clip per source and window, whose metrics are that
    clip's."""
    if unset := _unset(node):
        key = f"study.sources.{name}.{unset}"
        raise ConfigError(f"{key} is not set: add {key}=... to the command line")
    samples = node.get("samples")
    if samples is not None and int(samples) > 1:
        raise ConfigError(
            f"study.sources.{name}.samples={samples}: a study rates one clip per source and"
            " window, and its metrics are that clip's; leave samples at 1"
        )
    return {**node, "name": name}


def _unset(node: Any, key: str = "") -> str | None:
    """The dotted key of the first value of `node` left unset (`???`), else None."""
    if node == "???":
        return key
    if isinstance(node, Mapping):
        for k, v in node.items():
            if (found := _unset(v, f"{key}.{k}" if key else str(k))) is not None:
                return found
    return None
