"""Metrics computed from other metrics, for the perceptual study: per-sequence scoring and the
fitted composites.

A metric's `update` sees one `MotionPair`, never the other metrics' values, so a metric that needs
other metrics holds them itself (as child modules) and scores each sequence with them alone
(`score_alone`: the batch value of torchmetrics' `forward`, which syncs nothing across processes,
then `reset()`). This keeps the composite self-contained — the sub-metrics are built from the very
configs the study used, so their options cannot drift from the fit — and per-sequence, so DDP and
the per-sequence table work as for any `SequenceMetric`.

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

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from hydra.errors import InstantiationException
from hydra.utils import instantiate

from gesturebench.metrics.base import GestureMetric, SequenceMetric
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.pair import MotionPair
from gesturebench.runtime.errors import ConfigError, GestureBenchError
from gesturebench.runtime.weights import sha256_file


def predict(composite: dict, values: np.ndarray) -> np.ndarray:
    """Predicted ratings of rows of predictor `values` (columns in `composite["predictors"]`
    order)."""
    z = (np.asarray(values, dtype=float) - np.asarray(composite["mean"])) / np.asarray(
        composite["scale"]
    )
    return composite["intercept"] + z @ np.asarray(composite["coef"])


def score_alone(metric: GestureMetric, pair: MotionPair) -> dict[str, float | None]:
    """`metric`'s values on this one pair: its batch value (`forward`, no cross-process reduction),
    its states reset after."""
    values = metric(pair)
    metric.reset()
    return values


def _finite(values: list[float | None]) -> list[float] | None:
    if any(v is None or not np.isfinite(v) for v in values):
        return None
    return [float(v) for v in values if v is not None]


class DerivedMetric(SequenceMetric):
    """A per-sequence metric whose values come from `derived_values(pair)`; None counts the sequence
    as missing."""

    def derived_values(self, pair: MotionPair) -> list[float] | None:
        raise NotImplementedError

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float] | None:
        values = self.derived_values(pair)
        return None if values is None else (list(values), 1.0)

    def unscored_reason(self) -> str:
        return (
            f"no sequence had all the inputs and sub-metric values {self.name} needs "
            f"({int(self.missing)} lacked them)"
        )


class PerSequence(DerivedMetric):
    """`metric` (any GestureMetric, typically distributional) scored on each sequence alone; same
    value names, direction and fields read."""

    hidden_options = ("metric",)

    def __init__(self, metric: GestureMetric, **kwargs: Any):
        if not isinstance(metric, GestureMetric):
            raise ConfigError(
                f"PerSequence needs a metric config with a _target_, got {type(metric).__name__}"
            )
        self.direction = metric.direction
        self.extras = tuple(metric.value_names[1:])
        self.requires = metric.requires
        self.needs_vertices = metric.needs_vertices
        self.reads = metric.reads
        self.reference_only = tuple(r.format(name=metric.name) for r in metric.reference_only)
        super().__init__(name=metric.name, **kwargs)
        self.metric = metric

    def extra_options(self) -> dict:
        return {**self.metric.options(), "scored": "per sequence"}

    def provenance(self) -> dict:
        return self.metric.provenance()

    def prepare(self, context: MetricContext) -> None:
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
                f"{path}: composite {d!r} needs predictors, mean, scale, coef of one length "
                "and intercept"
            )
    return spec


class CompositeRatings(DerivedMetric):
    """Predicted ratings ``{name}_{dimension}`` of the composites in `path` (one value per
    dimension, ↑); it reads what its sub-metrics read."""

    direction = "higher"
    hidden_options = ("path", "dimensions")

    def __init__(
        self,
        name: str = "composite",
        path: str | None = None,
        dimensions: list[str] | None = None,
        **kwargs: Any,
    ):
        if not path:
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
        super().__init__(name=f"{name}_{dims[0]}", **kwargs)
        self.path, self.dimensions = str(path), dims
        self.sha256 = sha256_file(Path(path))
        self.composites = {d: spec["composites"][d] for d in dims}
        needed = {p for d in dims for p in self.composites[d]["predictors"]}
        self.sub_metrics = self._build(spec["metrics"], needed)
        subs = self.sub_metric_list()
        self.requires = tuple(dict.fromkeys(r for m in subs for r in m.requires))
        self.needs_vertices = any(m.needs_vertices for m in subs)
        self.reads = tuple(dict.fromkeys(f for m in subs for f in m.reads))

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

    def sub_metric_list(self) -> list[GestureMetric]:
        return [m for m in self.sub_metrics.values() if isinstance(m, GestureMetric)]

    def extra_options(self) -> dict:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "dimensions": self.dimensions,
            "sub_metrics": {
                k: m.options() for k, m in self.sub_metrics.items() if isinstance(m, GestureMetric)
            },
        }

    def provenance(self) -> dict:
        out = {}
        for m in self.sub_metric_list():
            out.update(m.provenance())
        return out

    def prepare(self, context: MetricContext) -> None:
        for m in self.sub_metric_list():
            m.prepare(context)

    def derived_values(self, pair: MotionPair) -> list[float] | None:
        values: dict[str, float | None] = {}
        for m in self.sub_metric_list():
            values.update(score_alone(m, pair))
        out = []
        for d in self.dimensions:
            x = _finite([values.get(p) for p in self.composites[d]["predictors"]])
            if x is None:
                return None
            out.append(float(predict(self.composites[d], np.asarray(x))))
        return out
