"""Metrics computed from other metrics, for the perceptual study: per-sequence scoring and the
fitted composites.

A metric's `update` sees one `MotionPair`, never the other metrics' values, so a metric that needs
other metrics holds them itself (as child modules) and scores each sequence with them alone
(`score_alone`: reset, update with the pair, compute without any cross-process sync). This keeps the
composite self-contained — the sub-metrics are built from the very configs the study used, so their
options cannot drift from the fit — and per-sequence, so DDP and the per-sequence table work as for
any `SequenceMetric`.

* `PerSequence(metric)` scores a distributional metric (FGD, Density, Coverage) on every sequence
  alone, giving it per-sequence values (a study clip's FGD against its own reference); model level =
  mean over sequences.
* `CompositeRatings(path)` reads the `composites.json` of a `task=analyze` run and reports, per
  sequence, the predicted rating of each dimension: intercept + Σ coef · (x − mean) / scale over the
  composite's predictor metrics; values ``composite_hl`` … ``composite_cm`` (model level = mean over
  sequences, ↑). The composites were fitted on the study's clips (10 s windows by default), so they
  are calibrated for clips of that length.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from hydra.errors import InstantiationException
from hydra.utils import instantiate

from gesturebench.errors import ConfigError, GestureBenchError
from gesturebench.metrics.base import GestureMetric, SequenceMetric
from gesturebench.metrics.pair import MotionPair
from gesturebench.study.composites import predict


def score_alone(metric: GestureMetric, pair: MotionPair) -> dict[str, float | None]:
    """`metric`'s values on this one pair (its states are reset first; no cross-process reduction)."""
    metric.sync_on_compute = False
    metric._to_sync = False
    metric.reset()
    if metric.missing_inputs(pair):
        return {n: None for n in metric.value_names}
    metric.update(pair)
    return metric.compute()


def _finite(values: list[float | None]) -> list[float] | None:
    if any(v is None or not np.isfinite(v) for v in values):
        return None
    return [float(v) for v in values]


class DerivedMetric(SequenceMetric):
    """A per-sequence metric whose values come from `derived_values(pair)`; None counts the sequence
    as missing."""

    def derived_values(self, pair: MotionPair) -> list[float] | None:
        raise NotImplementedError

    def sequence_values(self, pair: MotionPair) -> tuple[list[float], float] | None:
        values = self.derived_values(pair)
        return None if values is None else (values, 1.0)

    def skip_reason(self) -> str | None:
        if self.weight > 0:
            return None
        return f"no sequence had all the inputs and sub-metric values {self.name} needs ({int(self.missing)} lacked them)"


class PerSequence(DerivedMetric):
    """`metric` (any GestureMetric, typically distributional) scored on each sequence alone; same
    value names."""

    def __init__(self, metric: GestureMetric, **kwargs: Any):
        if not isinstance(metric, GestureMetric):
            raise ConfigError(
                f"PerSequence needs a metric config with a _target_, got {type(metric).__name__}"
            )
        self.extras = tuple(metric.value_names[1:])
        super().__init__(metric.name, **kwargs)
        self.metric = metric
        self.requires = metric.requires
        self.needs_vertices = metric.needs_vertices

    @property
    def direction(self) -> str:
        return self.metric.direction

    def options(self) -> dict:
        return {**self.metric.options(), "scored": "per sequence"}

    def provenance(self) -> dict:
        return self.metric.provenance()

    def prepare(self, context: Any) -> None:
        self.metric.prepare(context)

    def derived_values(self, pair: MotionPair) -> list[float] | None:
        values = score_alone(self.metric, pair)
        return _finite([values.get(n) for n in self.value_names])


def load_composites(path: str | Path) -> dict:
    """A composites.json written by `task=analyze`
    (`gesturebench.study.composites.composites_document`), checked."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(
            f"{path}: composites file not found (run `python launch.py task=analyze` to create one)"
        )
    try:
        spec = json.loads(path.read_text())
    except ValueError as err:
        raise ConfigError(f"{path}: not a readable composites.json ({err})") from err
    if (
        not isinstance(spec, dict)
        or not isinstance(spec.get("composites"), dict)
        or "metrics" not in spec
    ):
        raise ConfigError(f"{path}: not a composites.json (needs 'composites' and 'metrics')")
    for d, c in spec["composites"].items():
        sizes = {len(c.get(k, ())) for k in ("predictors", "mean", "scale", "coef")}
        if len(sizes) != 1 or "intercept" not in c:
            raise ConfigError(
                f"{path}: composite {d!r} needs predictors, mean, scale, coef of one length and intercept"
            )
    return spec


class CompositeRatings(DerivedMetric):
    """Predicted ratings ``{name}_{dimension}`` of the composites in `path` (one value per
    dimension, ↑)."""

    higher_is_better = True

    def __init__(
        self,
        name: str = "composite",
        path: str | None = None,
        dimensions: list[str] | None = None,
        **kwargs: Any,
    ):
        if path in (None, "", "???"):
            raise ConfigError(
                "metric composite needs path=/run/folder/of/task=analyze/composites.json"
            )
        spec = load_composites(path)
        dims = list(dimensions or spec["composites"])
        unknown = [d for d in dims if d not in spec["composites"]]
        if unknown or not dims:
            raise ConfigError(
                f"{path}: no composite for dimension(s) {unknown or dims}; "
                f"it has {sorted(spec['composites'])}"
            )
        self.extras = tuple(f"{name}_{d}" for d in dims[1:])
        super().__init__(f"{name}_{dims[0]}", **kwargs)
        self.path, self.dimensions = str(path), dims
        self.sha256 = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        self.composites = {d: spec["composites"][d] for d in dims}
        needed = {p for d in dims for p in self.composites[d]["predictors"]}
        self.sub_metrics = self._build(spec["metrics"], needed)
        self.requires = tuple(
            dict.fromkeys(r for m in self.sub_metrics.values() for r in m.requires)
        )
        self.needs_vertices = any(m.needs_vertices for m in self.sub_metrics.values())

    def _build(self, configs: dict, needed: set[str]) -> torch.nn.ModuleDict:
        metrics = {}
        for key, cfg in configs.items():
            try:
                metric = instantiate(cfg, _convert_="all")
            except (InstantiationException, GestureBenchError, TypeError) as err:
                raise ConfigError(f"{self.path}: metric {key!r} cannot be built ({err})") from None
            if needed & set(metric.value_names):
                metrics[key] = metric
        missing = needed - {n for m in metrics.values() for n in m.value_names}
        if missing:
            raise ConfigError(
                f"{self.path}: no metric config produces predictor(s) {sorted(missing)}"
            )
        return torch.nn.ModuleDict(metrics)

    def options(self) -> dict:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "dimensions": self.dimensions,
            "sub_metrics": {k: m.options() for k, m in self.sub_metrics.items()},
        }

    def provenance(self) -> dict:
        out = {}
        for m in self.sub_metrics.values():
            out.update(m.provenance())
        return out

    def prepare(self, context: Any) -> None:
        for m in self.sub_metrics.values():
            m.prepare(context)

    def derived_values(self, pair: MotionPair) -> list[float] | None:
        values = {}
        for m in self.sub_metrics.values():
            values.update(score_alone(m, pair))
        out = []
        for d in self.dimensions:
            x = _finite([values.get(p) for p in self.composites[d]["predictors"]])
            if x is None:
                return None
            out.append(float(predict(self.composites[d], np.asarray(x))))
        return out
