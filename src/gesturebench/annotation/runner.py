"""`AnnotationRunner`: asks an annotator about many clips with bounded concurrency, retries and a
request budget.

* Concurrency: a `ThreadPoolExecutor` of `concurrency` workers, fed lazily (at most 2 × concurrency
  clips in flight), so joints and renders are made as they are needed.
* Retries: a `TransientError` (HTTP 408/409/429/5xx, timeouts) is retried up to `attempts` requests
  in all, after an exponential back-off with jitter — the n-th pause is uniform in [d/2, d] with d =
  min(max_delay, initial_delay · 2ⁿ), and never shorter than a server's Retry-After — then stored as
  `error`. An answer that does not parse or validate is asked again up to `invalid_attempts` times
  in all, then stored as `invalid` with its raw text.
* Budget: every request (retries included) takes one unit of `max_requests`; when it runs out no new
  request starts, the event is left for the next run and `budget_exhausted` is reported.
* Resume: a clip whose event already has an `ok`/`invalid` record for the same annotator model,
  prompt hash and motion hash is not asked again; its stored record is returned.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from gesturebench.annotation.backends.base import (
    Annotator,
    RequestError,
    TransientError,
)
from gesturebench.annotation.clip import EventClip
from gesturebench.annotation.schema import (
    AnnotationRecord,
    GestureAnswer,
    InvalidAnswer,
    RecordStatus,
    parse_answer,
)
from gesturebench.annotation.store import AnnotationStore
from gesturebench.runtime.atomic import one_line
from gesturebench.runtime.errors import ConfigError
from gesturebench.runtime.stages import bar

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 6
    initial_delay: float = 1.0
    max_delay: float = 60.0
    invalid_attempts: int = 2

    def __post_init__(self):
        if (
            self.attempts < 1
            or self.invalid_attempts < 1
            or self.initial_delay < 0
            or self.max_delay < 0
        ):
            raise ConfigError(
                "task.retry: attempts and invalid_attempts must be >= 1 and delays >= 0, "
                f"got {self}"
            )

    def delay(self, retry: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (0-based): exponential, jittered, ≥
        Retry-After."""
        d = min(self.max_delay, self.initial_delay * 2.0**retry)
        return max(rng.uniform(d / 2, d), min(retry_after or 0.0, self.max_delay))


class RequestBudget:
    """At most `limit` requests (None: unlimited), shared by the worker threads."""

    def __init__(self, limit: int | None = None):
        self.limit = limit
        self.used = 0
        self.exhausted = False
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.limit is not None and self.used >= self.limit:
                self.exhausted = True
                return False
            self.used += 1
            return True


class BudgetExhausted(Exception):
    """No request left for this event: it stays unannotated."""


@dataclass
class RunSummary:
    counts: Counter = field(
        default_factory=Counter
    )  # ok / invalid / error / skipped / unattempted (needs `total`); to_annotate (dry run)
    records: dict[str, AnnotationRecord] = field(
        default_factory=dict
    )  # event id → record (new and stored)

    def as_dict(self) -> dict:
        return {
            k: int(self.counts.get(k, 0))
            for k in ("ok", "invalid", "error", "skipped", "unattempted")
        }


class AnnotationRunner:
    """Runs `annotator` over clips, storing each answer in `store` (if the annotator writes one)."""

    def __init__(
        self,
        annotator: Annotator,
        store: AnnotationStore | None,
        *,
        concurrency: int = 4,
        retry: RetryPolicy = RetryPolicy(),
        budget: RequestBudget | None = None,
        seed: int = 0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.annotator = annotator
        self.store = store if annotator.writes_store else None
        self.concurrency = max(1, int(concurrency))
        self.retry = retry
        self.budget = budget or RequestBudget()
        self.sleep = sleep
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()

    def run(
        self,
        clips: Iterable[EventClip],
        total: int | None = None,
        progress: bool = False,
        dry_run: bool = False,
    ) -> RunSummary:
        """Annotate every clip (stored ones are reused); returns counts and the record of each
        event. `dry_run`: nothing is asked (and no bar shown), the clips that would be are counted
        as `to_annotate`."""
        summary = RunSummary()
        with (
            bar(self._status(summary.counts), total, enabled=progress and not dry_run) as update,
            ThreadPoolExecutor(self.concurrency, thread_name_prefix="annotate") as pool,
        ):
            pending: set[Future] = set()

            def collect(done: set[Future]) -> None:
                for future in done:
                    record = future.result()
                    if record is not None:
                        summary.records[record.event_id] = record
                        summary.counts[record.status] += 1
                    update(advance=1, description=self._status(summary.counts))

            for clip in clips:
                if self.budget.exhausted:
                    break
                record = None  # resumed: the event's final record of this prompt, model, motion
                if self.store is not None:
                    record = self.store.find(
                        clip.event.id,
                        self.annotator.fingerprint(),
                        self.annotator.model_name,
                        clip.motion_sha256,
                        final_only=True,
                    )
                if record is not None:
                    summary.records[record.event_id] = record
                    summary.counts["skipped"] += 1
                    update(advance=1, description=self._status(summary.counts))
                    continue
                if dry_run:
                    summary.counts["to_annotate"] += 1
                    continue
                pending.add(pool.submit(self.annotate, clip))
                if len(pending) >= 2 * self.concurrency:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    collect(done)
            collect(wait(pending).done)
        if total is not None:
            summary.counts["unattempted"] = total - sum(
                summary.counts[k] for k in ("ok", "invalid", "error", "skipped")
            )
        return summary

    @staticmethod
    def _status(counts: Counter) -> str:
        return (
            f"[bold]annotate[/] [green]ok {counts['ok']}[/] · "
            f"[yellow]invalid {counts['invalid']}[/] · "
            f"[red]error {counts['error']}[/] · skipped {counts['skipped']}"
        )

    def annotate(self, clip: EventClip) -> AnnotationRecord | None:
        """Ask about one clip (with retries) and store the record; None when the budget ran out
        first."""
        try:
            for _ in range(self.retry.invalid_attempts):
                answer = self._request(clip)
                try:
                    parsed = answer if isinstance(answer, GestureAnswer) else parse_answer(answer)
                except InvalidAnswer as exc:
                    invalid = exc
                    continue
                record = self._record(clip, "ok", answer=parsed)
                break
            else:
                record = self._record(clip, "invalid", error=f"answer {invalid}", raw=invalid.raw)
        except BudgetExhausted:
            return None
        except RequestError as exc:
            record = self._record(clip, "error", error=one_line(exc))
        if self.store is not None:
            self.store.append(record)
        return record

    def _request(self, clip: EventClip) -> GestureAnswer | str:
        """One answer, retrying transient failures; RequestError once `attempts` requests have
        failed."""
        failure = ""
        for attempt in range(self.retry.attempts):
            if not self.budget.take():
                raise BudgetExhausted
            try:
                return self.annotator.ask(clip)
            except TransientError as exc:
                failure = one_line(exc)
                if attempt + 1 < self.retry.attempts:
                    with self._rng_lock:
                        pause = self.retry.delay(attempt, self._rng, exc.retry_after)
                    log.info("%s: %s; retrying in %.1f s", clip.event.id, failure, pause)
                    self.sleep(pause)
        raise RequestError(f"gave up after {self.retry.attempts} attempts: {failure}")

    def _record(
        self,
        clip: EventClip,
        status: RecordStatus,
        answer: GestureAnswer | None = None,
        error: str | None = None,
        raw: str | None = None,
    ) -> AnnotationRecord:
        fields = answer.model_dump() if answer is not None else {}
        return AnnotationRecord(
            event_id=clip.event.id,
            sequence_id=clip.event.sequence_id,
            start=clip.event.start,
            end=clip.event.end,
            source=clip.source,
            annotator=self.annotator.name,
            annotator_model=self.annotator.model_name,
            prompt_sha256=self.annotator.fingerprint() or "",
            status=status,
            error=error,
            raw=raw,
            motion_sha256=clip.motion_sha256,
            **fields,
        )
