"""`ResultSource`: the base of the model sources. It reads result files, records which fields the
model copies from the reference (declared, missing in its files or identical to the reference) and
reports them: `describe()` for results.json `model_info`, `skip_notes()` for the metric values they
enter."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.base import GestureModel
from gesturebench.models.formats import DEFAULT_PATTERNS, FIELDS, identical_fields, read_result
from gesturebench.runtime.errors import ConfigError, GestureBenchError

if TYPE_CHECKING:
    from gesturebench.metrics.base import GestureMetric


class ModelCommandError(GestureBenchError):
    """A model's command or module failed, timed out or wrote no usable result for a sequence."""


class SharedOptions(TypedDict, total=False):
    """The options every source takes (see `ResultSource`)."""

    title: str | None
    copied_fields: Iterable[str]
    file_pattern: str | None


class ResultSource(GestureModel):
    """A gesture model whose motion is one result file per sequence.

    Options shared by every source: `title` (display name), `copied_fields` (fields the model copies
    from the reference, out of expressions, jaw, eyes, trans) and `file_pattern` (its result file
    name, e.g. ``res_{id}.npz``; default: every pattern of `DEFAULT_PATTERNS`). `identity` holds a
    subclass's options that determine the motion (part of the cache key).
    """

    #: the ``model/source`` option that builds the class
    kind: ClassVar[str]
    cacheable = False  # result files are cached as run folders, or are the source themselves

    def __init__(
        self,
        name: str,
        identity: dict[str, Any],
        title: str | None = None,
        copied_fields: Iterable[str] = (),
        file_pattern: str | None = None,
    ):
        super().__init__(name, source=self.kind, file_pattern=file_pattern, **identity)
        unknown = sorted(set(copied_fields) - set(FIELDS))
        if unknown:
            raise ConfigError(
                f"model={name}: copied_fields {unknown} are not among {', '.join(FIELDS)}"
            )
        self.title = title or name
        self.declared = sorted(set(copied_fields))
        self.patterns = (file_pattern,) if file_pattern else DEFAULT_PATTERNS
        #: sequence id → (fields missing in its result file, fields identical to the reference)
        self.seen: dict[str, tuple[list[str], list[str]]] = {}

    def file_names(self) -> str:
        """The result file names looked for, for messages."""
        return " or ".join(p.replace("{id}", "{sequence_id}") for p in self.patterns)

    def looked_for(self, record: SequenceRecord) -> str:
        return ", ".join(p.format(id=record.id) for p in self.patterns)

    def read(self, path: Path, record: SequenceRecord) -> Motion:
        """The motion of `record`'s result file, with its copied fields recorded."""
        motion, missing = read_result(path, record.motion)
        self.seen[record.id] = (missing, identical_fields(motion, record.motion))
        return motion

    @property
    def copied_fields(self) -> list[str]:
        """Declared copied fields plus those missing in a result file or found identical to the
        reference in any evaluated sequence."""
        found = {f for missing, same in self.seen.values() for f in (*missing, *same)}
        return sorted(set(self.declared) | found)

    def where(self) -> dict[str, Any]:
        """Where the motion comes from, for `describe()`."""
        return {}

    def describe(self) -> dict:
        """The `model_info` of results.json: source, where motion came from, and the copied
        fields."""

        def counts(i: int) -> dict[str, int]:
            return {
                f: n for f in FIELDS if (n := sum(f in entry[i] for entry in self.seen.values()))
            }

        return {
            "title": self.title,
            "source": self.kind,
            **self.where(),
            "copied_fields": self.copied_fields,
            "declared_copied_fields": self.declared,
            "missing_in_result_files": counts(0),
            "identical_to_reference": counts(1),
            "sequences": len(self.seen),
            "betas": "reference (body shape is not generated)",
        }

    def skip_notes(self, metrics: Iterable[GestureMetric]) -> dict[str, str]:
        """For each value of `metrics` that a copied field enters (`values_reading`), why it is
        partly meaningless."""
        metrics = list(metrics)
        fields: dict[str, list[str]] = {}
        for field in self.copied_fields:
            for metric in metrics:
                for value in metric.values_reading(field):
                    fields.setdefault(value, []).append(field)
        return {
            value: f"partly compares the reference with itself: {self.title} copies "
            f"{', '.join(fs)} from the reference (model_info.copied_fields)"
            for value, fs in fields.items()
        }
