"""`AnnotationSetup`: what `task=annotate` and `task=review` work on, built once by their task and
handed down as objects (`MotionSource`: one source's store and clips), and the summary it gives
of the work on a store."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytorch_lightning.loggers import Logger

from gesturebench.annotation.backends.base import Annotator
from gesturebench.annotation.clip import EventClip, event_clips
from gesturebench.annotation.store import AnnotationStore, store_path
from gesturebench.data.records import Motion, SequenceRecord

#: the counts of a store's summary (annotate.json sums them over its sources)
COUNTS = ("events", "ok", "invalid", "error", "skipped", "unattempted", "requests")


@dataclass(frozen=True)
class MotionSource:
    """One source of motion as an annotator sees it: its `name` (its store's folder), the
    annotator's `store` of it and the `clips` of records' events in its motion."""

    name: str
    store: AnnotationStore
    clips: Callable[[Iterable[SequenceRecord]], Iterator[EventClip]]

    @classmethod
    def of(
        cls,
        name: str,
        motion_of: Callable[[SequenceRecord], Motion],
        annotator: Annotator,
        root: Path,
        body_model: Any,
    ) -> MotionSource:
        """Source `name` (its motion per record: `motion_of`) with `annotator`'s store under the
        store `root` and its clips as `annotator` shows them, posed by `body_model`."""
        return cls(
            name,
            AnnotationStore(store_path(root, name, annotator.name)),
            event_clips(
                name,
                motion_of,
                body_model,
                root / "clips" / name,
                context=annotator.context,
                camera=annotator.camera,
            ),
        )


@dataclass
class AnnotationSetup:
    """What `task` works on: the `annotator` (prepared), the store `root`, the `records` of split
    `split` of dataset `dataset` (`windows`: study windows, `task.windows`), each motion source, the
    run folder `out`, a logger per source (`logger_of`, by its name) and `finish`, which writes a
    summary with the run's config and versions into the run folder, under a file name."""

    task: str
    annotator: Annotator
    root: Path
    records: Any
    dataset: str
    split: str
    windows: str | None
    sources: list[MotionSource]
    out: Path
    logger_of: Callable[[str], AbstractContextManager[Logger | None]]
    finish: Callable[[dict, str], dict]

    def described(self, summary: dict, source: MotionSource, logger: Logger | None) -> dict:
        """`summary` of the work on `source`'s store, with what was worked on; its scalars logged
        to `logger`."""
        summary.update(
            {
                "task": self.task,
                "source": source.name,
                "annotator": self.annotator.describe(),
                "dataset": self.dataset,
                "split": self.split,
                "windows": self.windows,
                "store": str(source.store.path),
            }
        )
        if logger is not None:
            logger.log_metrics({f"{self.task}/{k}": v for k, v in _scalars(summary).items()})
        return summary


def _scalars(summary: dict) -> dict[str, float]:
    out = {k: float(summary[k]) for k in COUNTS if isinstance(summary.get(k), (int, float))}
    if isinstance(summary.get("agreement"), dict) and summary["agreement"].get("kappa") is not None:
        out["kappa"] = summary["agreement"]["kappa"]
    if (
        isinstance(summary.get("review"), dict)
        and summary["review"].get("percent_correct") is not None
    ):
        out["percent_correct"] = summary["review"]["percent_correct"]
    return out
