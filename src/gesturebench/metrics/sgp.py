"""SGP, semantic gesture preservation (docs/metrics.md, SGP; docs/annotation.md, SGP).

For each clip c (a sequence, or a study window) the valid semantic events E_c are, with
`valid_from=beat2` (the default, the paper's Eq. 13), the events whose class in BEAT2's own `sem`
annotation is iconic, metaphoric or deictic, or, with `valid_from=annotator`, the events the
configured annotator classifies so on the reference motion. The generated motion of each is
classified by the annotator (same clip rendering, same prompt, `source` = the model);
SGP_c = 1 − #{beat}/|E_c|, and the model's SGP is the mean over clips with |E_c| ≥ 1. An event whose
generated annotation is not `ok` (invalid, error, or beyond the generated motion) stays in E_c, as
n(E_c) is the paper's count of the reference clip's valid events, and is counted in `sgp_invalid`:
it cannot be a beat, so many failures bias SGP upwards, and `sgp_invalid` says how many there were.
Reported beside it: `sgp_events` (|E_c| summed over clips) and `sgp_class_<c>`, the share of each
class among the `ok` generated annotations of valid events.

With `valid_from=annotator`, reference annotations come from
`<store_root>/reference/<annotator>.jsonl` (default store root: the dataset's cache folder
`annotations/`). Where an event has none, an offline annotator (kinematic) annotates the reference
motion on the fly and stores it; for an LLM annotator that is an error naming the command that
creates them. Generated annotations of LLM annotators are stored under
`<store_root>/<model>/<annotator>.jsonl` (re-scoring costs no request); those of offline annotators
are recomputed.

An annotator gives SGP a value only on data where it has been validated
(`annotation.validity`: the kinematic rules on the synthetic mini-BEAT2; an LLM annotator with the
paper's prompt on real motion; the kinematic features fitted to the dataset's own sem labels on
that dataset). Elsewhere SGP is skipped with a reason that names the annotators valid there;
`unvalidated=true` forces a value, and every table then shows the caveat beside it. Unless the
annotator is the default rules, the value's note (results.json `notes`) names it and its measured
agreement, which `options.<name>.annotator.validation` holds in full.

All of that is the annotation stage (`annotate(pair)`, run by the evaluator before the sequence's
`update`: metrics/base.py); `update` only turns the generated classes it made into the states.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torchmetrics.utilities import dim_zero_cat

from gesturebench.annotation.backends.base import Annotator
from gesturebench.annotation.backends.kinematic import RULES_VALIDATION, KinematicAnnotator
from gesturebench.annotation.clip import EventClip, make_clip, surface_of
from gesturebench.annotation.events import Event, collect_events
from gesturebench.annotation.runner import AnnotationRunner, RequestBudget
from gesturebench.annotation.schema import AnnotationRecord
from gesturebench.annotation.store import AnnotationStore, store_path
from gesturebench.annotation.validity import Validation, dataset_kind, not_validated
from gesturebench.body.output import BodyOutput
from gesturebench.data.gesture_classes import GESTURE_CLASSES, SEMANTIC_CLASSES
from gesturebench.data.records import Motion
from gesturebench.metrics.base import SequenceMetric, cat_state
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.pair import MotionPair
from gesturebench.runtime.errors import CheckpointError, ConfigError
from gesturebench.stats.bootstrap import Resamples

#: `valid_from` options: where the valid semantic events of a clip come from.
ValidFrom = Literal["beat2", "annotator"]


def clip_sgp(generated: Sequence[str | None]) -> float | None:
    """SGP_c = 1 − #beat / n(E_c) from the generated classes of a clip's valid events (None: no
    valid annotation, still in n(E_c)); None for a clip without valid events."""
    return None if not generated else 1.0 - sum(c == "beat" for c in generated) / len(generated)


def _ok_classes(records: dict[str, AnnotationRecord], events: list[Event]) -> dict[str, str | None]:
    """Event id → class of its record, None where it has no `ok` record."""
    return {
        e.id: records[e.id].gesture_class
        if e.id in records and records[e.id].status == "ok"
        else None
        for e in events
    }


class SemanticGesturePreservation(SequenceMetric):
    """SGP ↑ with `sgp_invalid`, `sgp_events` and the generated class shares as extras.

    Per sequence it keeps SGP_c (None when the clip has no scored event: left out of the mean), the
    invalid and scored event counts and the scored events' class counts; the per-sequence table
    shows the first three. `sgp_invalid` and `sgp_events` are totals, the class shares are the
    class counts over `sgp_events`; `sgp_invalid` is reported even when SGP is skipped.
    `annotate(pair)` gives the generated classes of the clip's valid events, which `update` reads.
    """

    default_name = "sgp"
    direction = "higher"
    requires = ("sem",)
    extras = ("{name}_invalid", "{name}_events", *(f"{{name}}_class_{c}" for c in GESTURE_CLASSES))
    hidden_options = ("annotator", "store_root", "concurrency")
    annotates = True

    def __init__(
        self,
        annotator: Annotator | None = None,
        store_root: str | None = None,
        concurrency: int = 4,
        max_requests: int | None = None,
        valid_from: ValidFrom = "beat2",
        unvalidated: bool = False,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.valid_from = valid_from
        if annotator is not None and not isinstance(annotator, Annotator):
            raise ConfigError(
                f"metrics.{self.name}.annotator must be an annotator config (conf/annotator/*), "
                f"got {type(annotator).__name__}"
            )
        self.annotator = annotator or KinematicAnnotator()
        self.store_root = Path(store_root) if store_root else None
        self.concurrency = int(concurrency)
        self.budget = RequestBudget(max_requests)
        self.reference: AnnotationStore | None = None
        #: the context's body model (its forward, not the module, which would become a submodule)
        #: and faces: mesh clips, their vertices where the evaluator computed none
        self.body_forward: Any = None
        self.faces: torch.Tensor | None = None
        self.unvalidated = bool(unvalidated)
        #: the annotator's validation on the evaluated data (None: not validated there), why it
        #: is not (None: it is), and whether SGP then refuses (the skip reason) or is forced
        self.validation: Validation | None = None
        self.invalidity: str | None = None

    def extra_options(self) -> dict:
        validation = None if self.validation is None else self.validation.describe()
        return {
            "annotator": {**self.annotator.describe(), "validation": validation},
            "store_root": str(self.store_root),
        }

    def provenance(self) -> dict:
        """The fitted annotator's model file and its SHA-256, where it has one."""
        fitted = self.annotator.provenance()
        return {f"{self.name}_annotator": fitted} if fitted else {}

    def _annotator_label(self) -> str:
        return f"{self.annotator.name} ({self.annotator.model_name})"

    def note(self) -> str | None:
        """The annotator, where it is not the default rules, and its measured agreement."""
        if self.validation is None or self.validation is RULES_VALIDATION:
            return None
        return f"annotator {self._annotator_label()}: {self.validation.evidence}"

    @property
    def refused(self) -> bool:
        """Whether SGP gives no value: its annotator is not validated here, and not forced."""
        return self.invalidity is not None and not self.unvalidated

    def check_validity(self, context: MetricContext) -> None:
        """Whether the (prepared) annotator is validated on the evaluated data."""
        kind = dataset_kind(context)
        self.validation = self.annotator.validation(kind)
        if self.validation is None:
            where = tuple(v.dataset for v in self.annotator.validated_on())
            self.invalidity = not_validated(self._annotator_label(), where, kind)

    def prepare(self, context: MetricContext) -> None:
        store_root = self.store_root or Path(context.cache_dir) / "annotations"
        self.store_root = store_root
        if context.body_model is not None:
            self.body_forward = context.body_model.__call__
            self.faces = context.body_model.faces
        self.annotator.prepare(context, store_root)
        self.check_validity(context)
        self.reference = AnnotationStore(store_path(store_root, "reference", self.annotator.name))
        if self.refused:
            return
        needs_reference = self.valid_from == "annotator" and not self.annotator.offline
        if needs_reference and not self.reference.exists():
            raise CheckpointError(
                self._no_reference(f"no reference annotations at {self.reference.path}")
            )

    def _no_reference(self, problem: str) -> str:
        return (
            f"sgp: {problem}; create them with `python launch.py task=annotate "
            f"task.source=reference "
            f"annotator={self.annotator.name} dataset.split=<the evaluated split>`, "
            f"or count BEAT2's own semantic events (metrics.{self.name}.valid_from=beat2)"
        )

    # ------------------------------------------------------------------------------------------ per
    # sequence

    def _runner(self, store: AnnotationStore | None) -> AnnotationRunner:
        offline = self.annotator.offline
        return AnnotationRunner(
            self.annotator,
            store,
            concurrency=1 if offline else self.concurrency,
            budget=self.budget,
        )

    def _store_root(self) -> Path:
        if self.store_root is None:
            raise ConfigError("sgp: prepare(context) must run before annotate")
        return self.store_root

    def _clips(
        self,
        events: list[Event],
        source: str,
        motion: Motion,
        body: BodyOutput,
        audio: np.ndarray | None,
    ) -> dict[str, EventClip]:
        """The clips of `events` in `motion`: joints from the evaluator's `body` output, and for
        mesh clips (`annotator.camera.style=mesh`) its vertices where it computed them, else the
        body model's forward of each clip's window (only when the clip is rendered)."""
        clip_dir = self._store_root() / "clips" / source
        surface = None
        if self.body_forward is not None and self.faces is not None:
            surface = surface_of(self.body_forward, self.faces, motion, body.vertices)
        out = {}
        for event in events:
            clip = make_clip(
                event,
                source,
                motion,
                lambda a, b: body.joints[a:b].detach().cpu().numpy(),
                audio,
                context=self.annotator.context,
                camera=self.annotator.camera,
                clip_dir=clip_dir,
                surface_of=surface,
            )
            if clip is not None:
                out[event.id] = clip
        return out

    def reference_classes(self, pair: MotionPair, events: list[Event]) -> dict[str, str | None]:
        """Event id → reference class (None: not `ok`), annotating missing events with an offline
        annotator."""
        if self.reference is None:
            raise ConfigError("sgp: prepare(context) must run before annotate")
        found: dict[str, AnnotationRecord] = {}
        missing = []
        for event in events:
            record = self.reference.find(event.id, self.annotator.fingerprint(), final_only=True)
            if record is None:
                missing.append(event)
            else:
                found[event.id] = record
        if missing:
            if not self.annotator.offline:
                raise CheckpointError(
                    self._no_reference(
                        f"{len(missing)} event(s) of {pair.sequence_id} have no "
                        f"reference annotation in {self.reference.path}"
                    )
                )
            clips = self._clips(missing, "reference", pair.reference, pair.ref_body, pair.audio)
            found.update(self._runner(self.reference).run(clips.values()).records)
        return _ok_classes(found, events)

    def generated_classes(self, pair: MotionPair, events: list[Event]) -> dict[str, str | None]:
        """Event id → class of the generated motion (None: no `ok` annotation)."""
        source = pair.model_name or "generated"
        store = None
        if self.annotator.writes_store and not self.annotator.offline:
            store = AnnotationStore(store_path(self._store_root(), source, self.annotator.name))
        clips = self._clips(events, source, pair.generated, pair.gen_body, pair.audio)
        return _ok_classes(self._runner(store).run(clips.values()).records, events)

    def valid_events(self, pair: MotionPair) -> list[Event]:
        """E_c: the clip's events whose BEAT2 class (or, with `valid_from=annotator`, whose
        reference annotation's class) is iconic, metaphoric or deictic."""
        events = collect_events(pair.sequence_id, pair.sem or [], pair.words)
        if self.valid_from == "beat2":
            return [e for e in events if e.label in SEMANTIC_CLASSES]
        reference = self.reference_classes(pair, events)
        return [e for e in events if reference[e.id] in SEMANTIC_CLASSES]

    def annotate(self, pair: MotionPair) -> list[str | None] | None:
        """The generated class of each valid event of the clip, in event order (None: no `ok`
        annotation); None for a sequence lacking an input of `requires` (not scored) or where its
        annotator is not validated."""
        if self.refused or self.missing_inputs(pair):
            return None
        valid = self.valid_events(pair)
        generated = self.generated_classes(pair, valid)
        return [generated[e.id] for e in valid]

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float] | None:
        if self.refused:
            return None
        if self.name not in pair.annotations:
            raise ConfigError(
                f"{self.name}: {pair.sequence_id} was not annotated; the annotation stage "
                "(metrics.base.annotated) must run before update"
            )
        classes = pair.annotations[self.name]
        invalid = sum(c is None for c in classes)
        counts = [sum(c == g for c in classes) for g in GESTURE_CLASSES]
        return [clip_sgp(classes), invalid, len(classes), *counts], 1.0

    @property
    def sequence_names(self) -> tuple[str, ...]:
        return self.value_names[:3]

    def skipped_values(self) -> dict[str, float]:
        return {} if self.refused else {f"{self.name}_invalid": float(self.total[1])}

    def skip_reason(self) -> str | None:
        if self.refused:
            return (
                f"{self.invalidity}; metrics.{self.name}.unvalidated=true forces a value "
                "(shown with a caveat)"
            )
        return super().skip_reason()

    def caveat(self) -> str | None:
        """The base's, and that the annotator is not validated here where SGP was forced."""
        forced = (
            f"{self.invalidity}; forced by metrics.{self.name}.unvalidated=true"
            if self.invalidity
            else None
        )
        return "; ".join(c for c in (forced, super().caveat()) if c) or None

    def compute_values(self) -> dict[str, float | None]:
        values = self.statistics(self.total.cpu().numpy()[None], self.weight[:1].cpu().numpy())
        return {n: None if np.isnan(v[0]) else float(v[0]) for n, v in values.items()}

    def statistics(self, sums: np.ndarray, clips: np.ndarray) -> dict[str, np.ndarray]:
        """Each value from (B, V) sums over sequences of [SGP_c, invalid, events, *class counts]
        and (B,) counts of clips with an SGP_c: SGP their mean, `sgp_invalid` and `sgp_events`
        totals, the class shares counts over the `ok` events (NaN where undefined). One function
        for the value and its bootstrap, so each interval is that of the value's own statistic."""
        ok = sums[:, 2] - sums[:, 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            out = {
                self.name: np.where(clips > 0, sums[:, 0] / clips, np.nan),
                f"{self.name}_invalid": sums[:, 1],
                f"{self.name}_events": sums[:, 2],
            }
            for i, c in enumerate(GESTURE_CLASSES):
                out[f"{self.name}_class_{c}"] = np.where(ok > 0, sums[:, 3 + i] / ok, np.nan)
        return out

    def bootstrap(self, resamples: Resamples) -> dict[str, np.ndarray]:
        """`statistics` of the resampled sequences' sums."""
        index = cat_state(self.seq_index)
        if index is None:
            return {}
        values = dim_zero_cat(self.seq_values).reshape(len(index), -1).cpu().numpy()
        draws = resamples.of(index.cpu().numpy())
        defined = ~np.isnan(values[:, 0])
        return self.statistics(draws @ np.nan_to_num(values), draws @ defined.astype(float))

    def unscored_reason(self) -> str:
        where = (
            "BEAT2's sem annotation" if self.valid_from == "beat2" else "the reference annotation"
        )
        return (
            f"no clip had a valid semantic event (class iconic, metaphoric or deictic in {where}); "
            f"{int(self.missing)} sequence(s) had no sem file"
        )
