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

import dataclasses
import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from omegaconf import DictConfig
from pytorch_lightning.loggers import Logger

from gesturebench.annotation.backends.base import Annotator
from gesturebench.annotation.clip import EventClip, make_clip, surface_of
from gesturebench.annotation.events import collect_events
from gesturebench.annotation.runner import AnnotationRunner, RequestBudget, RetryPolicy
from gesturebench.annotation.store import AnnotationStore, store_path
from gesturebench.data.annotations_io import read_sem
from gesturebench.data.beat2 import sequence_paths
from gesturebench.data.lengths import LengthPolicy, align_lengths
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.base import GestureModel
from gesturebench.models.cache import MotionCache
from gesturebench.reporting.loggers import logged
from gesturebench.reporting.results import versions, write_json
from gesturebench.run.config import StudyWindowsConfig, build, build_model
from gesturebench.run.datamodule import Beat2Source
from gesturebench.runtime.errors import ConfigError
from gesturebench.study.sources import source_model
from gesturebench.study.windows import StudyWindows, study_windows, windows_spec
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
        setup = Run.of(cfg, job, model=self.source == "model")
        return run(
            Annotation.of("annotate", setup, self.source, self.windows, self.store_root), self
        )


@dataclass
class Annotation:
    """What `task` (annotate or review) works on, built from the config: the annotator, the store
    root, the body model, the records (`windows`: study windows) of the dataset `data`, each motion
    source's name and motion per record, and the run's folder, config and loggers."""

    task: str
    annotator: Annotator
    root: Path
    body_model: Any
    dataset: Any
    data: Beat2Source
    windows: str | None
    sources: list[tuple[str, Callable[[SequenceRecord], Motion]]]
    out: Path
    config: dict
    seed: int
    progress: bool
    logger_of: Callable[[str], AbstractContextManager[Logger | None]]

    @classmethod
    def of(
        cls,
        task: str,
        run: Run,
        source: Source,
        windows: str | None,
        store_root: str | None,
    ) -> Annotation:
        """What `task` works on, from the task's `run`: `source` (`task.source`), `windows`
        (`task.windows`) and `store_root` (`task.store_root`) as the task's options say."""
        data, job = run.dataset, run.job
        context = run.context
        root = Path(store_root) if store_root else context.cache_dir / "annotations"
        annotator: Annotator = build(run.annotator)
        annotator.prepare(context, root)
        if windows is None:
            dataset = data.open()
        else:
            dataset = annotation_windows(windows_spec(run.study["windows"]), data, windows)
        models = source_models(source, windows, run.model, run.study.get("sources"))

        def logger_of(name: str) -> AbstractContextManager[Logger | None]:
            name = f"{task}-{name}-{annotator.name}"
            return logged(run.logger, job.run_dir, name, run.config, (), job.sweep_id)

        return cls(
            task,
            annotator,
            root,
            context.body_model,
            dataset,
            data,
            windows,
            motion_sources(models, context, run.length_policy, run.max_length_gap),
            job.run_dir,
            run.config,
            run.seed,
            run.progress,
            logger_of,
        )

    def store(self, source: str) -> AnnotationStore:
        return AnnotationStore(store_path(self.root, source, self.annotator.name))

    def clips(
        self, source: str, motion_of: Callable[[SequenceRecord], Motion]
    ) -> Callable[[Any], Iterator[EventClip]]:
        """The event clips of records of `source` (its motion per record: `motion_of`)."""
        body_model, annotator = self.body_model, self.annotator

        def clips(records) -> Iterator[EventClip]:
            for record in records:
                motion = motion_of(record)
                joints_of = _joints_of(body_model, motion)
                for event in collect_events(record.id, record.sem, record.words):
                    clip = make_clip(
                        event,
                        source,
                        motion,
                        joints_of,
                        record.audio,
                        context=annotator.context,
                        camera=annotator.camera,
                        clip_dir=self.root / "clips" / source,
                        surface_of=surface_of(body_model, body_model.faces, motion),
                    )
                    if clip is None:
                        log.warning(
                            "%s: event %s (%.2f–%.2f s) lies beyond the motion; skipped",
                            record.id,
                            event.id,
                            event.start,
                            event.end,
                        )
                    else:
                        yield clip

        return clips

    def logged(self, source: str, work: Callable[[AnnotationStore], dict]) -> dict:
        """`work` on `source`'s store, its summary described and logged to its own logger."""
        store = self.store(source)
        with self.logger_of(source) as logger:
            summary = work(store)
            summary.update(
                {
                    "task": self.task,
                    "source": source,
                    "annotator": self.annotator.describe(),
                    "dataset": self.data.name,
                    "split": self.data.split,
                    "windows": self.windows,
                    "store": str(store.path),
                }
            )
            if logger is not None:
                logger.log_metrics({f"{self.task}/{k}": v for k, v in _scalars(summary).items()})
            return summary

    def finish(self, summary: dict, name: str) -> dict:
        """`summary` with the config and versions, written as `name` in the run folder."""
        summary.update(config=self.config, versions=versions())
        write_json(self.out / name, summary)
        return summary


def run(a: Annotation, t: AnnotateTask) -> dict:
    """Each motion source of `a` annotated into its store; annotate.json."""

    def one(name: str, motion_of: Callable[[SequenceRecord], Motion]) -> dict:
        clips = a.clips(name, motion_of)
        return a.logged(
            name,
            lambda store: annotate(t, a.annotator, store, a.dataset, clips, a.seed, a.progress),
        )

    if len(a.sources) == 1:
        summary = one(*a.sources[0])
    else:
        per_source = {name: one(name, motion_of) for name, motion_of in a.sources}
        keys = ("events", "ok", "invalid", "error", "skipped", "unattempted", "requests")
        summary = {k: sum(s.get(k, 0) for s in per_source.values()) for k in keys}
        summary.update(task="annotate", source=t.source, sources=per_source)
    return a.finish(summary, "annotate.json")


def annotation_windows(spec: StudyWindowsConfig, source: Beat2Source, windows: str) -> StudyWindows:
    """The study's window records (`windows=study`: those of `spec`) or those of a windows CSV."""
    if windows != "study":
        spec = dataclasses.replace(spec, file=windows)
    return study_windows(spec, source)[1]


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


def _joints_of(body_model, motion: Motion) -> Callable[[int, int], np.ndarray]:
    return lambda f0, f1: body_model(motion.frames(f0, f1), vertices=False).joints.cpu().numpy()


def annotate(
    t: AnnotateTask,
    annotator: Annotator,
    store: AnnotationStore,
    dataset,
    clips,
    seed: int,
    progress: bool,
) -> dict:
    """Annotate the events of `clips` into `store` (the runner seeded with `seed`, a progress bar
    with `progress`); returns the counts."""
    if not annotator.writes_store:
        raise ConfigError(
            f"annotator={annotator.name} ({type(annotator).__name__}) only reads stores; "
            "choose an annotator that annotates (kinematic, gemini, openai)"
        )
    total = count_events(dataset) if t.windows is None else window_events(dataset)
    retry = t.retry
    runner = AnnotationRunner(
        annotator,
        store,
        concurrency=t.concurrency,
        retry=retry,
        budget=RequestBudget(t.max_requests),
        seed=seed,
    )
    if t.dry_run:
        todo = sum(runner.stored(clip) is None for clip in clips(_each(dataset)))
        most = todo * retry.attempts * retry.invalid_attempts
        log.info(
            "dry run: %d events, %d to annotate: %d requests, at most %d with every retry; "
            "store %s",
            total,
            todo,
            todo,
            most,
            store.path,
        )
        return {"events": total, "to_annotate": todo, "max_requests_needed": most, "dry_run": True}
    result = runner.run(clips(_each(dataset)), total=total, progress=progress)
    counts = result.as_dict()
    if runner.budget.exhausted:
        log.warning(
            "request budget exhausted (task.max_requests=%s): %d events left for the next run",
            t.max_requests,
            counts["unattempted"],
        )
    log.info(
        "annotations: %s (ok %d, invalid %d, error %d, skipped %d, unattempted %d; %d requests)",
        store.path,
        counts["ok"],
        counts["invalid"],
        counts["error"],
        counts["skipped"],
        counts["unattempted"],
        runner.budget.used,
    )
    return {
        "events": total,
        **counts,
        "requests": runner.budget.used,
        "budget_exhausted": runner.budget.exhausted,
    }


def _each(dataset) -> Iterator[SequenceRecord]:
    for i in range(len(dataset)):
        yield dataset[i]


def window_events(windows: StudyWindows) -> int:
    """Number of events of the study windows (intervals cut by a window's edge are none)."""
    return sum(len(collect_events(r.id, r.sem, r.words)) for r in windows)


def count_events(dataset) -> int:
    """Number of events of the split, from its sem files alone."""
    paths = (sequence_paths(dataset.root, sid).sem for sid in dataset.ids)
    return sum(len(read_sem(p)) for p in paths if p.is_file())


def _scalars(summary: dict) -> dict[str, float]:
    keys = ("events", "ok", "invalid", "error", "skipped", "unattempted", "requests")
    out = {k: float(summary[k]) for k in keys if isinstance(summary.get(k), (int, float))}
    if isinstance(summary.get("agreement"), dict) and summary["agreement"].get("kappa") is not None:
        out["kappa"] = summary["agreement"]["kappa"]
    if (
        isinstance(summary.get("review"), dict)
        and summary["review"].get("percent_correct") is not None
    ):
        out["percent_correct"] = summary["review"]["percent_correct"]
    return out
