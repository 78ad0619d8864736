"""`GestureMetric`, the interface every metric of the harness has, and `SequenceMetric`, the base of
per-sequence metrics.

A subclass implements `sequence_values(pair)`, returning its value for one sequence (and any extra
values named in `extras`, such as ``diversity_ref``). The base keeps, with `dist_reduce_fx="sum"` in
float64, the weighted sum and the weight of each value (model level = weighted mean over sequences;
weight 1 unless a subclass returns one), and, as `"cat"` list states, every sequence's values with
its split index for the per-sequence table. Sequences lacking an input named in `requires`, or for
which `sequence_values` returns None, are counted in `missing`, not scored; a metric with no scored
sequence reports `None` with a reason.
"""

from __future__ import annotations

from typing import Any

import torch
from torchmetrics import Metric
from torchmetrics.utilities import dim_zero_cat

from gesturebench.metrics.pair import MotionPair

DIRECTIONS = {True: "higher", False: "lower", None: "zero"}


class GestureMetric(Metric):
    """What the evaluation loop relies on: a name, a direction, options, a dict result and a skip
    reason.

    `update(pair: MotionPair)` takes one sequence; `compute()` returns ``{value_name: float | None}``.
    `prepare(context)` runs once before evaluation (load or train an encoder, compute dataset
    statistics).
    """

    full_state_update = False
    is_differentiable = False
    higher_is_better: bool | None = None
    #: optional MotionPair fields this metric needs (e.g. ``("sem",)``).
    requires: tuple[str, ...] = ()
    #: names of extra values reported beside the main one (e.g. ``("diversity_ref",)``).
    extras: tuple[str, ...] = ()
    #: whether `update` reads `pair.*_body.vertices` (the body forward skips vertices when no metric
    #: does).
    needs_vertices: bool = False

    def __init__(self, name: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.name = name

    @property
    def direction(self) -> str:
        return DIRECTIONS[self.higher_is_better]

    @property
    def value_names(self) -> tuple[str, ...]:
        return (self.name, *self.extras)

    def options(self) -> dict:
        """The options this metric was configured with (written to results.json)."""
        return {}

    def provenance(self) -> dict:
        """Checkpoint hashes and training configs of learned parts (results.json `encoders`)."""
        return {}

    def prepare(self, context: Any) -> None:
        """Load or build what the metric needs before the first update; default: nothing."""

    def missing_inputs(self, pair: MotionPair) -> list[str]:
        return [r for r in self.requires if getattr(pair, r) is None]

    def skip_reason(self) -> str | None:
        """Why the metric has no value (after `compute`), else None."""
        return None

    def per_sequence(self) -> dict[int, dict[str, float]]:
        """Per-sequence values keyed by split index; empty for distributional metrics."""
        return {}


class SequenceMetric(GestureMetric):
    """Weighted mean over sequences of a per-sequence value, with the per-sequence values kept."""

    def __init__(self, name: str, **kwargs: Any):
        super().__init__(name, **kwargs)
        n = 1 + len(self.extras)
        self.add_state("total", default=torch.zeros(n, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("weight", default=torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("missing", default=torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")
        self.add_state("seq_index", default=[], dist_reduce_fx="cat")
        self.add_state("seq_values", default=[], dist_reduce_fx="cat")

    def sequence_values(self, pair: MotionPair) -> tuple[list[float], float] | None:
        """Return ([main, *extras] for this sequence, weight of the sequence), or None when it
        cannot be scored."""
        raise NotImplementedError

    def update(self, pair: MotionPair) -> None:
        scored = None if self.missing_inputs(pair) else self.sequence_values(pair)
        if scored is None:
            self.missing += 1
            return
        values, w = scored
        v = torch.as_tensor(values, dtype=torch.float64, device=self.total.device).reshape(-1)
        self.total += w * v
        self.weight += w
        self.seq_index.append(
            torch.tensor([pair.index], dtype=torch.int64, device=self.total.device)
        )
        self.seq_values.append(v.reshape(1, -1))

    def compute(self) -> dict[str, float | None]:
        if self.weight <= 0:
            return {n: None for n in self.value_names}
        mean = self.total / self.weight
        return {n: float(mean[i]) for i, n in enumerate(self.value_names)}

    def skip_reason(self) -> str | None:
        if self.weight > 0:
            return None
        need = ", ".join(self.requires) or "scored sequences"
        return f"no sequence had the inputs this metric needs ({need}); {int(self.missing)} sequences lacked them"

    def per_sequence(self) -> dict[int, dict[str, float]]:
        if isinstance(self.seq_index, list) and not self.seq_index:
            return {}  # (after a sync the list states are tensors)
        idx = dim_zero_cat(self.seq_index).tolist()
        vals = dim_zero_cat(self.seq_values).reshape(len(idx), -1).tolist()
        return {i: dict(zip(self.value_names, v)) for i, v in zip(idx, vals)}
