"""`GestureMetric`, the contract every metric of the harness keeps, and `SequenceMetric`, the base
of per-sequence metrics.

The contract, declared by each metric class:

* `direction`: ``"higher"``, ``"lower"`` or ``"zero"`` (closer to zero is better); a class without
  a valid one fails at construction. torchmetrics' `higher_is_better` is derived from it.
* `extras`: names of the values reported beside the main one, ``{name}`` standing for the metric's
  name (``"{name}_ref"`` → ``diversity_ref``); `value_names` = (name, *extras).
* `requires`: optional `MotionPair` inputs it needs (``("sem",)``); `needs_vertices`: whether it
  reads body vertices.
* `reads`: the generated motion's fields among `MOTION_FIELDS` that enter its values, and
  `reference_only`: its value names computed from the reference alone; `values_reading(field)`
  derives from them which values depend on a generated field (a model that copies that field from
  the reference makes them partly compare the reference with itself).
* `options()`: the constructor's arguments, recorded when the metric is built (no metric writes
  them by hand); `hidden_options` leaves some out and `extra_options()` adds values known only
  later (e.g. the loaded encoder's windows).

`bootstrap(resamples)` returns each value's bootstrap replicates (docs/statistics.md), recomputed
from the metric's synced states with the sequences drawn as `resamples` — never from a second pass
over the data; the default, {}, gives the metric no interval.

"Skipped, and why" is decided in one place: `skip_reason()` returns why the metric has no value
(None when it has one) and `compute()` returns None for every value name exactly when it gives a
reason (but those `skipped_values()` gives: counts known without a score, e.g. SGP's failed
annotations), else `compute_values()`. Subclasses implement `skip_reason` and `compute_values`
(and `skipped_values` where they have such counts), never `compute`.

Two stages sit beside `update(pair)`:

* annotation, before scoring (`annotates`): the evaluator calls `annotate(pair)` on each sequence
  before any metric's `update` and keeps the result in `pair.annotations[name]` (`annotated`),
  which `update` only reads: requests, stores and budgets are the annotation stage's, and `update`
  stays a pure function of the pair into the states.
* the K samples of one input together (`across_samples`, e.g. div_sample): such a metric is built
  once, not per sample, and fed `update(index, poses)` with the K samples' poses (each (T_k, 165),
  as scored) of each sequence when `model.samples` is K > 1; with one sample it is skipped, with
  its reason.

`SequenceMetric`: a subclass implements `sequence_values(pair)`, returning its values for one
sequence (main, then extras) and the sequence's weight. The base keeps, with `dist_reduce_fx="sum"`
in float64, the weighted sum and the weight of each value (model level = weighted mean over
sequences), and, as `"cat"` list states, every sequence's values and weight with its split index
(the per-sequence table; the bootstrap's weighted means of resampled values). A value that is None
for a sequence is left out of that value's mean and is NaN in the table. Sequences lacking an input
named in `requires`, or for which `sequence_values` returns None, are counted in `missing`, not
scored; a metric whose main value has no scored sequence is skipped (`unscored_reason()` words why).
Where the dataset left such an input out (`MotionPair.left_out`, e.g. audio whose length disagrees
with its motion's), the reason is kept too, as UTF-8 byte values in a `"cat"` state (strings
cannot be gathered across processes, numbers can): the skip reason, or else the values'
`caveat()`, names the first such file and how many there were.
Its states and maths are `SequenceValues`', whose `record(index, values, weight)` a metric fed other
than by one `MotionPair` (an `across_samples` metric such as `SampleDiversity`) calls itself.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch
from torchmetrics import Metric
from torchmetrics.utilities import dim_zero_cat

from gesturebench.assets.table import Need, Table
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.pair import MotionPair
from gesturebench.runtime.errors import ConfigError
from gesturebench.stats.bootstrap import Resamples, weighted_means

#: `direction` → torchmetrics' `higher_is_better`.
HIGHER_IS_BETTER: dict[str, bool | None] = {"higher": True, "lower": False, "zero": None}
#: Generated-motion fields a model may copy from the reference (what `reads` may name).
MOTION_FIELDS = ("expressions", "jaw", "eyes", "trans")


def _recording_arguments(init: Callable[..., None]) -> Callable[..., None]:
    """`init`, recording its bound arguments (defaults applied) in the metric's `init_arguments`.

    Every `__init__` of a metric class chain records; an inner one (`super().__init__`) overwrites
    what an outer one passed on, so each argument holds the value the metric was built with.
    """
    signature = inspect.signature(init)
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)

    @functools.wraps(init)
    def recording_init(self: GestureMetric, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        recorded = vars(self).setdefault("init_arguments", {})
        for name, value in list(bound.arguments.items())[1:]:
            if signature.parameters[name].kind not in variadic:
                recorded[name] = value
        init(self, *args, **kwargs)

    return recording_init


class GestureMetric(Metric):
    """What the evaluation loop relies on: a name, a direction, options, a dict result and a skip
    reason.

    `update(pair: MotionPair)` takes one sequence; `compute()` returns
    ``{value_name: float | None}``.
    `prepare(context)` runs once before evaluation (load or train an encoder, compute dataset
    statistics); `annotate(pair)`, where `annotates`, before each sequence's `update`.
    """

    full_state_update = False
    is_differentiable = False
    #: "higher", "lower" or "zero" (closer to zero is better): every metric class declares it.
    direction: str
    #: optional MotionPair fields this metric needs (e.g. ``("sem",)``).
    requires: tuple[str, ...] = ()
    #: names of extra values reported beside the main one, ``{name}`` standing for the metric's
    #: name.
    extras: tuple[str, ...] = ()
    #: whether `update` reads `pair.*_body.vertices` (the body forward skips vertices when no metric
    #: does).
    needs_vertices: bool = False
    #: the generated motion's fields (of `MOTION_FIELDS`) that enter this metric's values.
    reads: tuple[str, ...] = ()
    #: value names computed from the reference motion alone (e.g. ``("{name}_ref",)``).
    reference_only: tuple[str, ...] = ()
    #: constructor arguments left out of `options()` (internal, or reported by `extra_options`).
    hidden_options: ClassVar[tuple[str, ...]] = ()
    #: True where a bootstrap resample recomputes a distribution's statistic (not a weighted mean
    #: of per-sequence values): such metrics use `stats.distributional` resamples.
    distributional: ClassVar[bool] = False
    #: True where `annotate(pair)` must run on each sequence before `update` (the annotation stage)
    annotates: bool = False
    #: True for a metric of the K samples of one input together (`update(index, poses)`, built once)
    across_samples: bool = False
    #: the values the statistic can take (a bias-corrected interval is clipped to them)
    value_range: ClassVar[tuple[float, float]] = (-math.inf, math.inf)
    #: this metric's constructor arguments (name → value), recorded by the base.
    init_arguments: dict[str, Any]
    #: the name its values are reported under when the config gives none (`name=` renames it).
    default_name: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in vars(cls):
            cls.__init__ = _recording_arguments(cls.__init__)  # type: ignore[method-assign]

    def __init__(self, name: str | None = None, display_scale: float | None = None, **kwargs: Any):
        """`display_scale`: the unit a publication prints the values in (0.1 for "×10⁻¹": the
        printed number is value / 0.1); `results.json` then carries that display value beside the
        raw one. None: printed as is."""
        if getattr(self, "direction", None) not in HIGHER_IS_BETTER:
            raise TypeError(
                f"{type(self).__name__} must declare direction as one of "
                f"{tuple(HIGHER_IS_BETTER)}, got {getattr(self, 'direction', None)!r}"
            )
        if name is None and not hasattr(self, "default_name"):
            raise TypeError(f"{type(self).__name__} needs a name (it declares no default_name)")
        if display_scale is not None and not display_scale > 0:
            raise ConfigError(f"metric {name}: display_scale must be > 0, got {display_scale}")
        super().__init__(**kwargs)
        self.name = name or self.default_name
        self.display_scale = display_scale

    @property  # torchmetrics declares a settable class attribute; here it follows `direction`
    def higher_is_better(self) -> bool | None:  # type: ignore[override]
        return HIGHER_IS_BETTER[self.direction]

    @property
    def value_names(self) -> tuple[str, ...]:
        return (self.name, *(extra.format(name=self.name) for extra in self.extras))

    def values_reading(self, field: str) -> list[str]:
        """This metric's value names that depend on the generated motion's `field`."""
        if field not in MOTION_FIELDS:
            raise ValueError(f"field must be one of {MOTION_FIELDS}, got {field!r}")
        if field not in self.reads:
            return []
        only = {r.format(name=self.name) for r in self.reference_only}
        return [n for n in self.value_names if n not in only]

    def options(self) -> dict:
        """The options this metric was configured with (written to results.json)."""
        hidden = ("name", *self.hidden_options)
        chosen = {k: v for k, v in self.init_arguments.items() if k not in hidden}
        return {**chosen, **self.extra_options()}

    def extra_options(self) -> dict:
        """Options beside the constructor's arguments (known after `prepare`, or derived)."""
        return {}

    def provenance(self) -> dict:
        """Checkpoint hashes and training configs of learned parts (results.json `encoders`)."""
        return {}

    @classmethod
    def public_assets(cls, options: Mapping[str, Any], table: Table) -> list[Need]:
        """The public files of `table` (`task=fetch`) a metric configured with `options` (its
        config node's values) needs, each with the path its options put it at (None: the table's
        place); default: none."""
        return []

    def prepare(self, context: MetricContext) -> None:
        """Load or build what the metric needs before the first update; default: nothing."""

    def annotate(self, pair: MotionPair) -> Any:
        """The annotation stage of a metric that `annotates`: what its `update(pair)` reads from
        `pair.annotations[self.name]`, made (or read from a store) before scoring."""
        raise NotImplementedError

    def missing_inputs(self, pair: MotionPair) -> list[str]:
        """The inputs of `requires` that `pair` lacks, or whose dataset left them out of scoring
        (`pair.left_out`: e.g. audio without speech, kept for generation only)."""
        return [r for r in self.requires if getattr(pair, r) is None or r in pair.left_out]

    def skip_reason(self) -> str | None:
        """Why the metric has no value, from its (synced) states; None when it has one."""
        return None

    def compute_values(self) -> dict[str, float | None]:
        """The values, when `skip_reason()` gives none."""
        raise NotImplementedError

    def skipped_values(self) -> dict[str, float]:
        """Values reported even when the metric is skipped (counts known without a score, from
        the synced states); default: none."""
        return {}

    def compute(self) -> dict[str, float | None]:
        if self.skip_reason() is not None:
            return {**dict.fromkeys(self.value_names), **self.skipped_values()}
        return self.compute_values()

    def per_sequence(self) -> dict[int, dict[str, float]]:
        """Per-sequence values keyed by split index; empty for distributional metrics."""
        return {}

    def caveat(self) -> str | None:
        """A note on the values the metric has (e.g. sequences it scored without), from its
        (synced) states; None: none."""
        return None

    def note(self) -> str | None:
        """A line on how the main value was made that a reader needs beside it (e.g. the annotator
        SGP's classes come from and its measured agreement; results.json `notes`), known after
        `prepare`; None: none."""
        return None

    def bootstrap(self, resamples: Resamples) -> dict[str, np.ndarray]:
        """Value name → (B,) replicates on the sequences drawn as `resamples`, from the synced
        states; {} (no interval) by default."""
        return {}


def annotated(pair: MotionPair, *metrics: GestureMetric) -> MotionPair:
    """`pair` with the annotations of those of `metrics` that `annotate` (the stage before
    scoring) in `pair.annotations`, by metric name."""
    for metric in metrics:
        if metric.annotates:
            pair.annotations[metric.name] = metric.annotate(pair)
    return pair


def cat_state(state: torch.Tensor | list[torch.Tensor]) -> torch.Tensor | None:
    """A `"cat"` state as one tensor (before or after a DDP sync), None when nothing was added."""
    if isinstance(state, list) and not state:
        return None
    return dim_zero_cat(state)


def note_bytes(note: str, metric: Metric) -> torch.Tensor:
    """`note` as one line of UTF-8 byte values, for a `"cat"` state of `metric` that `state_notes`
    reads back. They are held in the metric's dtype (exact for 0-255): a process that added none
    gathers torchmetrics' empty stand-in, of that dtype, and every process must send one dtype."""
    line = " ".join(note.split()) + "\n"
    return torch.tensor(list(line.encode()), dtype=metric.dtype, device=metric.device)


def state_notes(state: torch.Tensor | list[torch.Tensor]) -> list[str]:
    """The notes of a `note_bytes` state, sorted (the same on any number of processes)."""
    data = cat_state(state)
    if data is None:
        return []
    return sorted(bytes(data.to(torch.uint8).tolist()).decode().splitlines())


def first_of(notes: list[str]) -> str:
    """The first of `notes` and how many more there are."""
    return notes[0] + (f" (and {len(notes) - 1} more)" if len(notes) > 1 else "")


def sequences(n: int) -> str:
    """ "1 sequence", "2 sequences"."""
    return f"{n} sequence" + ("" if n == 1 else "s")


class SequenceValues(GestureMetric):
    """Weighted mean over sequences of per-sequence values, with the per-sequence values kept; a
    subclass's `update` passes each sequence's values to `record`."""

    total: torch.Tensor
    weight: torch.Tensor
    missing: torch.Tensor
    seq_index: list[torch.Tensor]
    seq_values: list[torch.Tensor]
    seq_weight: list[torch.Tensor]
    left_out: list[torch.Tensor]

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        n = len(self.value_names)
        f64 = torch.float64
        self.add_state("total", default=torch.zeros(n, dtype=f64), dist_reduce_fx="sum")
        self.add_state("weight", default=torch.zeros(n, dtype=f64), dist_reduce_fx="sum")
        self.add_state("missing", default=torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")
        self.add_state("seq_index", default=[], dist_reduce_fx="cat")
        self.add_state("seq_values", default=[], dist_reduce_fx="cat")
        self.add_state("seq_weight", default=[], dist_reduce_fx="cat")
        self.add_state("left_out", default=[], dist_reduce_fx="cat")

    @property
    def sequence_names(self) -> tuple[str, ...]:
        """The value names shown in the per-sequence table (default: all)."""
        return self.value_names

    def record(self, index: int, values: Sequence[float | None], w: float) -> None:
        """Add the sequence with split index `index`: its [main, *extras] `values` (None: left out
        of that value's mean) with weight `w`."""
        device = self.total.device
        defined = torch.tensor([v is not None for v in values], device=device)
        v = torch.tensor(
            [float("nan") if x is None else x for x in values], dtype=torch.float64, device=device
        )
        self.total += torch.where(defined, w * v, 0.0)
        self.weight += torch.where(defined, torch.full_like(v, w), 0.0)
        self.seq_index.append(torch.tensor([index], dtype=torch.int64, device=device))
        self.seq_values.append(v.reshape(1, -1))
        self.seq_weight.append(torch.tensor([w], dtype=torch.float64, device=device))

    def compute_values(self) -> dict[str, float | None]:
        mean = self.total / self.weight
        return {
            n: float(mean[i]) if self.weight[i] > 0 else None
            for i, n in enumerate(self.value_names)
        }

    def skip_reason(self) -> str | None:
        return None if self.weight[0] > 0 else self.unscored_reason()

    def unscored_reason(self) -> str:
        """Why no sequence was scored (the skip reason of a `SequenceMetric`): the inputs the
        dataset left out, and how many more sequences lacked them."""
        if self.left_out_notes():
            return self.lacking(int(self.missing))
        need = ", ".join(self.requires) or "scored sequences"
        return (
            f"no sequence had the inputs this metric needs ({need}); "
            f"{int(self.missing)} sequences lacked them"
        )

    def lacking(self, n: int) -> str:
        """Why `n` sequences were not scored for lack of an input: the inputs the dataset left
        out (the first by file, and how many), then how many had none."""
        need = ", ".join(self.requires)
        notes = self.left_out_notes()
        parts = [f"{need} left out of {sequences(len(notes))}: {first_of(notes)}"] if notes else []
        if n > len(notes):
            parts.append(f"{n - len(notes)} sequences had no {need}")
        return "; ".join(parts)

    def left_out_notes(self) -> list[str]:
        """Why the dataset left out an input of each sequence not scored for lack of it
        (`MotionPair.left_out`), sorted by the file each names."""
        return state_notes(self.left_out)

    def caveat(self) -> str | None:
        """The sequences scored without, for an input the dataset left out."""
        notes = self.left_out_notes()
        if not notes:
            return None
        need = ", ".join(self.requires)
        return (
            f"scored without {sequences(len(notes))} whose {need} was left out: {first_of(notes)}"
        )

    def bootstrap(self, resamples: Resamples) -> dict[str, np.ndarray]:
        """The weighted mean of each value over the resampled sequences (as `compute_values`)."""
        index = cat_state(self.seq_index)
        if index is None:
            return {}
        values = dim_zero_cat(self.seq_values).reshape(len(index), -1).cpu().numpy()
        weights = dim_zero_cat(self.seq_weight).cpu().numpy()
        means = weighted_means(values, weights, resamples.of(index.cpu().numpy()))
        return {n: means[:, i] for i, n in enumerate(self.value_names)}

    def per_sequence(self) -> dict[int, dict[str, float]]:
        index = cat_state(self.seq_index)
        if index is None:
            return {}
        idx = index.tolist()
        rows = dim_zero_cat(self.seq_values).reshape(len(idx), -1).tolist()
        names = self.sequence_names
        return {
            i: dict(zip(names, row[: len(names)], strict=True))
            for i, row in zip(idx, rows, strict=True)
        }


class SequenceMetric(SequenceValues):
    """A `SequenceValues` metric scored on each `MotionPair` by `sequence_values`."""

    def sequence_values(self, pair: MotionPair) -> tuple[Sequence[float | None], float] | None:
        """Return ([main, *extras] for this sequence, weight of the sequence), or None when it
        cannot be scored; a None value is left out of that value's mean."""
        raise NotImplementedError

    def update(self, pair: MotionPair) -> None:
        missing = self.missing_inputs(pair)
        scored = None if missing else self.sequence_values(pair)
        if scored is None:
            self.missing += 1
            notes = [pair.left_out[name] for name in missing if name in pair.left_out]
            if notes:
                self.left_out.append(note_bytes("; ".join(notes), self))
            return
        self.record(pair.index, *scored)
