"""`task=review`: review an annotation store (docs/annotation.md): write a review sheet of a
sample of its records (`task.n`, `task.seed`), ingest a filled one (`task.filled`) and compare its
classes with another annotator's store (`task.compare`); review_results.json in the run folder."""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from omegaconf import DictConfig

from gesturebench.annotation.review import (
    class_agreement,
    read_review_sheet,
    review_scores,
    sample_records,
    sheet_rows,
    write_review_sheet,
)
from gesturebench.annotation.store import FINAL, AnnotationStore, store_path
from gesturebench.runtime.errors import ConfigError
from gesturebench.tasks.annotate import Annotation, Source
from gesturebench.tasks.job import Job
from gesturebench.tasks.run import Run

log = logging.getLogger(__name__)


@dataclass
class ReviewTask:
    """`task=review` (conf/task/review.yaml): the store of `source` (reference or model; `windows`
    and `store_root` as `task=annotate`'s); a sheet of `n` records sampled with `seed`; `filled`: a
    filled sheet to score; `compare`: another annotator whose classes are compared with this
    one's."""

    name: str = "review"
    source: Source = "reference"
    windows: str | None = None
    store_root: str | None = None
    n: int = 50
    seed: int = 0
    filled: str | None = None
    compare: str | None = None

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        run = Run.of(cfg, job, model=self.source == "model")
        setup = Annotation.of("review", run, self.source, self.windows, self.store_root)
        if len(setup.sources) > 1:
            raise ConfigError("task=review reviews one store: use task.source=reference or model")
        (source,) = setup.sources
        with setup.logger_of(source.name) as logger:
            summary = review(
                self, source.store, setup.root, setup.records, setup.split, source.clips, setup.out
            )
            setup.described(summary, source, logger)
        return setup.finish(summary, "review_results.json")


def review(
    r: ReviewTask,
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
            f"task=review: no annotations at {store.path}; annotate first (task=annotate)"
        )
    latest = [rec for rec in store.latest().values() if rec.status in FINAL]
    summary: dict = {"records": len(latest)}
    if r.compare:  # read before anything is written: a missing store stops the task here
        other = AnnotationStore(store_path(root, store.path.parent.name, r.compare))
        if not other.exists():
            raise ConfigError(f"task.compare={r.compare}: no annotations at {other.path}")
        theirs = {k: v for k, v in other.latest().items() if v.status == "ok"}
        shared = sorted(
            rec.event_id for rec in latest if rec.status == "ok" and rec.event_id in theirs
        )
        mine = {rec.event_id: rec for rec in latest}
        agreement = class_agreement(
            cast(list[str], [mine[e].gesture_class for e in shared]),
            cast(list[str], [theirs[e].gesture_class for e in shared]),
        )
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
        rows = sheet_rows(shown, [paths[x.event_id] for x in shown])
        csv_path, html_path = write_review_sheet(
            folder, rows, f"Review of {store.path.parent.name}/{store.path.name}"
        )
        summary["sheet"] = {"csv": str(csv_path), "html": str(html_path), "rows": len(shown)}
        log.info("review sheet: %s and %s (%d annotations)", csv_path, html_path, len(shown))
    if r.compare:
        summary["agreement"] = {"other": r.compare, **agreement}
        log.info(
            "class agreement with %s over %d events: kappa %s",
            r.compare,
            len(shared),
            agreement["kappa"],
        )
    return summary
