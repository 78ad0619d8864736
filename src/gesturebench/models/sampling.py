"""`model.samples`: how many samples of each input a model is scored on (docs/statistics.md,
"Several samples per input"). Sample k of a stochastic model draws from ``model.seed + k``; a
deterministic model refuses more than one sample."""

from __future__ import annotations

from typing import Any

from gesturebench.models.base import GestureModel
from gesturebench.runtime.errors import ConfigError


def with_samples(model: GestureModel, samples: Any) -> GestureModel:
    """`model` with `samples` (a model config's ``samples`` key) checked and set."""
    if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
        raise ConfigError(f"model.samples must be a whole number >= 1, got {samples!r}")
    if samples > 1 and not model.stochastic:
        raise ConfigError(
            f"model.samples={samples}: model={model.name} is deterministic, so its samples would "
            f"be identical; use model.samples=1 (stochastic models: gesturelsm, random_clip, "
            f"perturbed with perturbation rotation_noise, jitter or beat_collapse)"
        )
    model.samples = samples
    return model
