"""`model.samples`: how many samples of each input a model is scored on (docs/statistics.md,
"Several samples per input"). Sample k of a stochastic model draws from ``model.seed + k``; a
deterministic model refuses more than one sample."""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from gesturebench.models.base import GestureModel
from gesturebench.run.config import build
from gesturebench.runtime.errors import ConfigError


def build_model(node: DictConfig) -> GestureModel:
    """The model of the config `node`, with `samples` (its ``samples`` key, default 1: not a
    constructor argument) checked and set."""
    options: Any = OmegaConf.to_container(node, resolve=True, throw_on_missing=True)
    samples = options.pop("samples", 1)
    if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
        raise ConfigError(f"model.samples must be a whole number >= 1, got {samples!r}")
    model = build(options)
    if samples > 1 and not model.stochastic:
        raise ConfigError(
            f"model.samples={samples}: model={model.name} is deterministic, so its samples would "
            f"be identical; use model.samples=1 (stochastic models: gesturelsm, random_clip, "
            f"perturbed with kind rotation_noise, jitter or beat_collapse)"
        )
    model.samples = samples
    return model
