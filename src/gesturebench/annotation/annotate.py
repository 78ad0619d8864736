"""`annotate`: the events of each motion source asked of the annotator into the source's store,
on the objects `task=annotate` built (an `AnnotationSetup`); the summary goes to annotate.json."""

from __future__ import annotations

import logging

from gesturebench.annotation.events import count_events, window_events
from gesturebench.annotation.runner import AnnotationRunner, RequestBudget, RetryPolicy
from gesturebench.annotation.setup import COUNTS, AnnotationSetup
from gesturebench.runtime.errors import ConfigError

log = logging.getLogger(__name__)


def annotate(
    setup: AnnotationSetup,
    kind: str,
    *,
    concurrency: int,
    retry: RetryPolicy,
    max_requests: int | None,
    dry_run: bool,
    seed: int,
    progress: bool,
) -> dict:
    """Annotate the events of `setup`'s records in each of its sources (`kind`: `task.source`) into
    the source's store, by `concurrency` workers with `retry`, at most `max_requests` requests a
    source, the back-off jitter seeded with `seed`, a progress bar where `progress`; `dry_run`: only
    count what a run would ask. Returns the summary, written as annotate.json."""
    per_source = {}
    for source in setup.sources:
        with setup.logger_of(source.name) as logger:
            if not setup.annotator.writes_store:
                raise ConfigError(
                    f"annotator={setup.annotator.name} ({type(setup.annotator).__name__}) only "
                    "reads stores; choose an annotator that annotates (kinematic, gemini, openai)"
                )
            windowed = setup.windows is not None
            total = window_events(setup.records) if windowed else count_events(setup.records)
            runner = AnnotationRunner(
                setup.annotator,
                source.store,
                concurrency=concurrency,
                retry=retry,
                budget=RequestBudget(max_requests),
                seed=seed,
            )
            records = (setup.records[i] for i in range(len(setup.records)))
            result = runner.run(
                source.clips(records), total=total, progress=progress, dry_run=dry_run
            )
            if dry_run:
                todo = result.counts["to_annotate"]
                most = todo * retry.attempts * retry.invalid_attempts
                log.info(
                    "dry run: %d events, %d to annotate: %d requests, at most %d with every "
                    "retry; store %s",
                    total,
                    todo,
                    todo,
                    most,
                    source.store.path,
                )
                summary: dict = {
                    "events": total,
                    "to_annotate": todo,
                    "max_requests_needed": most,
                    "dry_run": True,
                }
            else:
                counts = result.as_dict()
                if runner.budget.exhausted:
                    log.warning(
                        "request budget exhausted (task.max_requests=%s): %d events left for the "
                        "next run",
                        max_requests,
                        counts["unattempted"],
                    )
                log.info(
                    "annotations: %s (ok %d, invalid %d, error %d, skipped %d, unattempted %d; "
                    "%d requests)",
                    source.store.path,
                    counts["ok"],
                    counts["invalid"],
                    counts["error"],
                    counts["skipped"],
                    counts["unattempted"],
                    runner.budget.used,
                )
                summary = {
                    "events": total,
                    **counts,
                    "requests": runner.budget.used,
                    "budget_exhausted": runner.budget.exhausted,
                }
            per_source[source.name] = setup.described(summary, source, logger)
    if len(per_source) == 1:
        (summary,) = per_source.values()
    else:
        summary = {k: sum(s.get(k, 0) for s in per_source.values()) for k in COUNTS}
        summary.update(task="annotate", source=kind, sources=per_source)
    return setup.finish(summary, "annotate.json")
