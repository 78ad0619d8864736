"""`task=annotate`: annotate the semantic intervals of the dataset's split into the store
(docs/annotation.md).

`task.source=reference` annotates the dataset's own motion, `task.source=model` the configured
model's output (store folder = the model's name), `task.source=study` every source of
`study.sources` (each under its name, as `task=analyze` evaluates them). `task.windows` annotates
study windows instead of whole sequences: `study` (the study's windows, `study.windows`) or a
windows CSV; event ids do not change under windowing (`annotation.events`), so `task=analyze`
finds these annotations for SGP. Resumable: events already in the store for the
same annotator model, prompt hash and motion are skipped. `task.dry_run=true` only counts what a
run would ask. `task=review` (`tasks.review`) reviews a store, from the same `Annotation` setup.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from omegaconf import DictConfig
from pytorch_lightning.loggers import Logger

from gesturebench.annotation.annotate import annotate
from gesturebench.annotation.backends.base import Annotator
from gesturebench.annotation.runner import RetryPolicy
from gesturebench.annotation.setup import AnnotationSetup, MotionSource
from gesturebench.data.lengths import LengthPolicy, align_lengths
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.base import GestureModel
from gesturebench.models.cache import MotionCache
from gesturebench.reporting.loggers import logged
from gesturebench.reporting.results import versions, write_json
from gesturebench.run.config import build, build_model
from gesturebench.runtime.errors import ConfigError
from gesturebench.study.sources import source_model
from gesturebench.study.window_records import window_records
from gesturebench.study.windows import configured_windows, window_plan
from gesturebench.tasks.job import Job
from gesturebench.tasks.run import Run

log = logging.getLogger(__name__)

#: `task.source`: the dataset's own motion, the configured model's, or every study source's
Source = Literal["reference", "model", "study"]


@dataclass
class AnnotateTask:
    """`task=annotate` (conf/task/annotate.yaml, where the options are described)."""

    name: str = "annotate"
    source: Source = "reference"
    windows: str | None = None
    store_root: str | None = None
    concurrency: int = 4
    max_requests: int | None = None
    dry_run: bool = False
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        """The run's objects built here once (`Annotation.of`), then handed with the task's
        options to `annotation.annotate.annotate`, which does the rest."""
        run = Run.of(cfg, job, model=self.source == "model")
        return annotate(
            Annotation.of("annotate", run, self.source, self.windows, self.store_root),
            self.source,
            concurrency=self.concurrency,
            retry=self.retry,
            max_requests=self.max_requests,
            dry_run=self.dry_run,
            seed=run.seed,
            progress=run.progress,
        )


class Annotation(AnnotationSetup):
    """The `AnnotationSetup` of a task's run (annotate or review), built from its config."""

    @classmethod
    def of(
        cls, task: str, run: Run, source: Source, windows: str | None, store_root: str | None
    ) -> Annotation:
        """What `task` works on, from its `run`: `source` (`task.source`), `windows`
        (`task.windows`) and `store_root` (`task.store_root`) as the task's options say."""
        data, job = run.dataset, run.job
        context = run.context
        root = Path(store_root) if store_root else context.cache_dir / "annotations"
        annotator: Annotator = build(run.annotator)
        annotator.prepare(context, root)
        if windows is None:
            records = data.open()
        else:
            plan = window_plan(run.study["windows"], None if windows == "study" else windows)
            splits = data.splits(plan.splits)
            records = window_records(plan, splits, configured_windows(plan, splits))
        models = source_models(source, windows, run.model, run.study.get("sources"))
        sources = [
            MotionSource.of(name, motion_of, annotator, root, context.body_model)
            for name, motion_of in motion_sources(
                models, context, run.length_policy, run.max_length_gap
            )
        ]

        def logger_of(name: str) -> AbstractContextManager[Logger | None]:
            name = f"{task}-{name}-{annotator.name}"
            return logged(run.logger, job.run_dir, name, run.config, (), job.sweep_id)

        def finish(summary: dict, name: str) -> dict:
            summary.update(config=run.config, versions=versions())
            write_json(job.run_dir / name, summary)
            return summary

        return cls(
            task,
            annotator,
            root,
            records,
            data.name,
            data.split,
            windows,
            sources,
            job.run_dir,
            logger_of,
            finish,
        )


def source_models(
    source: Source, windows: str | None, model: Any, study_sources: Any
) -> list[GestureModel] | None:
    """The models whose output `task.source` annotates, built: the configured `model` (its node),
    or every source of `study_sources` (`study.sources`) under its name; None: the dataset's own
    motion."""
    if source == "reference":
        return None
    if source == "model":
        return [build_model(model)]
    if windows is None:
        raise ConfigError("task.source=study annotates study windows: set task.windows=study")
    return [build(source_model(name, node)) for name, node in study_sources.items()]


def motion_sources(
    models: list[GestureModel] | None,
    context,
    length_policy: LengthPolicy,
    max_length_gap: float,
) -> list[tuple[str, Callable[[SequenceRecord], Motion]]]:
    """Each source's name and the motion to annotate per record: the reference (`models` None) or
    each model's (cached) output."""
    if models is None:
        return [("reference", lambda record: record.motion)]
    return [model_motion(m, context, length_policy, max_length_gap) for m in models]


def model_motion(
    model, context, length_policy: LengthPolicy, max_length_gap: float
) -> tuple[str, Callable[[SequenceRecord], Motion]]:
    """A model's name and its (cached) output per record, cut to the reference's length
    (`length_policy`, `max_length_gap`)."""
    if model.name == "reference":
        raise ConfigError(
            "model.name='reference' is reserved for the dataset's own motion "
            "(task.source=reference)"
        )
    model.prepare(context)
    cache = MotionCache(context.cache_dir / "generated")

    def generated(record: SequenceRecord) -> Motion:
        motion, _, _ = align_lengths(
            cache.get(model, record),
            record.motion,
            record.id,
            length_policy,
            max_length_gap,
        )
        return motion

    return model.name, generated
