"""`task=annotate`: annotate the semantic intervals of the dataset's split into the store
(docs/annotation.md).

`task.source=reference` annotates the dataset's own motion, `task.source=model` the configured
model's output (store folder = the model's name), `task.source=study` every source of
`study.sources` (each under its name, as `task=analyze` evaluates them). `task.windows` annotates
study windows instead of whole sequences: `study` (the study's windows, `study.windows`) or a
windows CSV; event ids do not change under windowing (`annotation.events`), so `task=analyze`
finds these annotations for SGP. Resumable: events already in the store for the
same annotator model, prompt hash and motion are skipped. `task.mode=review` writes a review sheet
of the store, ingests a filled one (`task.review.filled`) and compares classes with another
annotator's store (`task.review.compare`). `task.dry_run=true` only counts what a run would ask.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
from omegaconf import DictConfig, open_dict
from pytorch_lightning.loggers import Logger

from gesturebench.annotation.backends.base import Annotator
from gesturebench.annotation.clip import EventClip, make_clip, surface_of
from gesturebench.annotation.events import collect_events
from gesturebench.annotation.review import (
    class_agreement,
    read_review_sheet,
    review_scores,
    sample_records,
    sheet_rows,
    write_review_sheet,
)
from gesturebench.annotation.runner import AnnotationRunner, RequestBudget, RetryPolicy
from gesturebench.annotation.store import FINAL, AnnotationStore, store_path
from gesturebench.data.annotations_io import read_sem
from gesturebench.data.beat2 import sequence_paths
from gesturebench.data.lengths import align_lengths
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.base import GestureModel
from gesturebench.models.cache import MotionCache
from gesturebench.reporting.loggers import finish, make_logger
from gesturebench.reporting.results import versions, write_json
from gesturebench.run.config import StudyWindowsConfig, build, build_model, resolved
from gesturebench.run.datamodule import Beat2Source
from gesturebench.runtime.errors import ConfigError
from gesturebench.study.windows import StudyWindows
from gesturebench.tasks.analyze import study_windows, windows_spec
from gesturebench.tasks.common import (
    dataset_source,
    logger_factory,
    make_context,
)
from gesturebench.tasks.job import Job

log = logging.getLogger(__name__)
MODES = ("annotate", "review")


@dataclass(frozen=True)
class ReviewOptions:
    """`task.review`: a sheet of `n` records sampled with `seed`; `filled`: a filled sheet to score;
    `compare`: another annotator whose store's classes are compared with this one's."""

    n: int = 50
    seed: int = 0
    filled: str | None = None
    compare: str | None = None


@dataclass
class AnnotateTask:
    """`task=annotate` (conf/task/annotate.yaml, where the options are described)."""

    name: str = "annotate"
    mode: str = "annotate"
    source: str = "reference"
    windows: str | None = None
    store_root: str | None = None
    concurrency: int = 4
    max_requests: int | None = None
    dry_run: bool = False
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    review: ReviewOptions = field(default_factory=ReviewOptions)

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        return run(cfg, job, self)


def run(cfg: DictConfig, job: Job, t: AnnotateTask) -> dict:
    """The task: its objects built from `cfg`, then each motion source annotated (or reviewed)."""
    if t.mode not in MODES:
        raise ConfigError(f"task.mode={t.mode!r} is not one of {', '.join(MODES)}")
    out = job.run_dir
    config = resolved(cfg)
    source = dataset_source(cfg.dataset)
    context = make_context(source, cfg, job.overrides)
    body_model = context.body_model
    root = Path(t.store_root) if t.store_root else context.cache_dir / "annotations"
    annotator: Annotator = build(cfg.annotator)
    factory = logger_factory(cfg.logger)
    annotator.prepare(context, root)
    if t.windows is None:
        dataset = source.open()
    else:
        dataset = window_records(windows_spec(cfg.study.windows), source, t.windows)
    models = source_models(t.source, t.windows, cfg.model, cfg.study.get("sources"))
    sources = motion_sources(models, context, cfg.length_policy, cfg.max_length_gap)
    if t.mode == "review" and len(sources) > 1:
        raise ConfigError("task.mode=review reviews one store: use task.source=reference or model")

    def logger_of(name: str):
        name = f"annotate-{name}-{annotator.name}"
        return make_logger(factory, out, name, config, (), job.sweep_id)

    def one(name: str, motion_of: Callable[[SequenceRecord], Motion]) -> dict:
        return run_source(
            t,
            annotator,
            root,
            body_model,
            dataset,
            source,
            name,
            motion_of,
            out,
            logger_of,
            cfg.seed,
            bool(cfg.trainer.enable_progress_bar),
        )

    if t.mode == "review" or len(sources) == 1:
        (name, motion_of), *_ = sources
        summary = one(name, motion_of)
    else:
        per_source = {name: one(name, motion_of) for name, motion_of in sources}
        keys = ("events", "ok", "invalid", "error", "skipped", "unattempted", "requests")
        summary = {k: sum(s.get(k, 0) for s in per_source.values()) for k in keys}
        summary.update(task="annotate", mode=t.mode, source=t.source, sources=per_source)
    summary.update(config=config, versions=versions())
    write_json(out / ("review_results.json" if t.mode == "review" else "annotate.json"), summary)
    return summary


def window_records(spec: StudyWindowsConfig, source: Beat2Source, windows: str) -> StudyWindows:
    """The study's window records (`windows=study`: those of `spec`) or those of a windows CSV."""
    if windows != "study":
        spec = dataclasses.replace(spec, file=windows)
    return study_windows(spec, source)[1]


def run_source(
    t: AnnotateTask,
    annotator: Annotator,
    root: Path,
    body_model,
    dataset,
    data: Beat2Source,
    source: str,
    motion_of: Callable[[SequenceRecord], Motion],
    out: Path,
    logger_of: Callable[[str], Logger | None],
    seed: int,
    progress: bool,
) -> dict:
    """Annotate (or review) the events of one motion source into its store, logged to the logger
    `logger_of(source)` opens; returns the summary."""
    store = AnnotationStore(store_path(root, source, annotator.name))

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
                    clip_dir=root / "clips" / source,
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

    logger = logger_of(source)
    try:
        if t.mode == "review":
            summary = review(t.review, annotator, store, root, dataset, data.split, clips, out)
        else:
            summary = annotate(t, annotator, store, dataset, clips, seed, progress)
        summary.update(
            {
                "task": "annotate",
                "mode": t.mode,
                "source": source,
                "annotator": annotator.describe(),
                "dataset": data.name,
                "split": data.split,
                "windows": t.windows,
                "store": str(store.path),
            }
        )
        if logger is not None:
            logger.log_metrics({f"annotate/{k}": v for k, v in _scalars(summary).items()})
        return summary
    finally:
        finish(logger)


def source_models(
    source: str, windows: str | None, model: Any, study_sources: Any
) -> list[GestureModel] | None:
    """The models whose output `task.source` annotates, built: the configured `model`, or every
    source of `study_sources` (`study.sources`) under its name; None: the dataset's own motion."""
    if source == "reference":
        return None
    if source == "model":
        return [build_model(model)]
    if source != "study":
        raise ConfigError(
            f"task.source={source!r}: use 'reference', 'model' (the configured model) or 'study' "
            "(every source of study.sources)"
        )
    if windows is None:
        raise ConfigError("task.source=study annotates study windows: set task.windows=study")
    models = []
    for name, node in study_sources.items():
        node = node.copy()
        with open_dict(node):
            node.name = name
        models.append(build(node))
    return models


def motion_sources(
    models: list[GestureModel] | None, context, length_policy: str, max_length_gap: float
) -> list[tuple[str, Callable[[SequenceRecord], Motion]]]:
    """Each source's name and the motion to annotate per record: the reference (`models` None) or
    each model's (cached) output."""
    if models is None:
        return [("reference", lambda record: record.motion)]
    return [model_motion(m, context, length_policy, max_length_gap) for m in models]


def model_motion(
    model, context, length_policy: str, max_length_gap: float
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


def review(
    r: ReviewOptions,
    annotator: Annotator,
    store: AnnotationStore,
    root: Path,
    dataset,
    split: str,
    clips,
    out: Path,
) -> dict:
    """Write a review sheet of the store, ingest a filled one, compare classes with another
    annotator (`dataset`: the records of `split`)."""
    if not store.exists():
        raise ConfigError(
            f"task.mode=review: no annotations at {store.path}; annotate first (task.mode=annotate)"
        )
    latest = [rec for rec in store.latest().values() if rec.status in FINAL]
    summary: dict = {"records": len(latest)}
    if r.filled:
        table = read_review_sheet(r.filled)
        summary["review"] = review_scores(table)
        judged = (
            table[table["reviewer_class"].str.strip() != ""]
            if "reviewer_class" in table
            else table.iloc[:0]
        )
        summary["annotator_vs_reviewer"] = class_agreement(
            list(judged["class"]), list(judged["reviewer_class"].str.strip().str.lower())
        )
        log.info(
            "review of %s: %.1f%% correct over %d judgements",
            r.filled,
            summary["review"]["percent_correct"] or float("nan"),
            summary["review"]["judgements"],
        )
    else:
        picked = sample_records(latest, r.n, r.seed)
        folder = out / "review"
        wanted = {rec.event_id for rec in picked}
        sequences = {rec.sequence_id for rec in picked}
        paths = {}
        for clip in clips(dataset[i] for i, sid in enumerate(dataset.ids) if sid in sequences):
            if clip.event.id in wanted:
                video = clip.video(with_audio=True)
                paths[clip.event.id] = f"clips/{video.name}"
                (folder / "clips").mkdir(parents=True, exist_ok=True)
                shutil.copyfile(video, folder / paths[clip.event.id])
        shown = [rec for rec in picked if rec.event_id in paths]
        if len(shown) < len(picked):
            log.warning(
                "%d sampled records are not in split '%s' of the dataset (or their motion "
                "changed): left out",
                len(picked) - len(shown),
                split,
            )
        csv_path, html_path = write_review_sheet(
            folder,
            sheet_rows(shown, [paths[x.event_id] for x in shown]),
            f"Review of {store.path.parent.name}/{store.path.name}",
        )
        summary["sheet"] = {"csv": str(csv_path), "html": str(html_path), "rows": len(shown)}
        log.info("review sheet: %s and %s (%d annotations)", csv_path, html_path, len(shown))
    if r.compare:
        other = AnnotationStore(store_path(root, store.path.parent.name, r.compare))
        if not other.exists():
            raise ConfigError(f"task.review.compare={r.compare}: no annotations at {other.path}")
        theirs = {k: v for k, v in other.latest().items() if v.status == "ok"}
        shared = sorted(
            rec.event_id for rec in latest if rec.status == "ok" and rec.event_id in theirs
        )
        mine = {rec.event_id: rec for rec in latest}
        summary["agreement"] = {
            "other": r.compare,
            **class_agreement(
                cast(list[str], [mine[e].gesture_class for e in shared]),
                cast(list[str], [theirs[e].gesture_class for e in shared]),
            ),
        }
        log.info(
            "class agreement with %s over %d events: kappa %s",
            r.compare,
            len(shared),
            summary["agreement"]["kappa"],
        )
    return summary


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
