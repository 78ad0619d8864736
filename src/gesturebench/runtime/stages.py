"""Announcements and progress bars of the long stages, so that a run never looks hung.

A stage says one line when it starts (what, why, whether it is a first use whose result is kept)
and one with its seconds when it ends, on the console (stderr) and in the run's log. Its loop shows
a rich progress bar with the columns and theme of Lightning's `RichProgressBar` (the bar of the
evaluation and of encoder training), so that every bar of a run looks the same: `stage` (no loop),
`progress` (a stage with a bar over its items), `track` (a bar alone, inside a stage), `bar` (a bar
updated by a callback) and `Deferred` (a stage whose work is spread over another loop, e.g. a cache
filled as the sequences are scored).

Whether bars are drawn at all is the run's (`trainer.enable_progress_bar`): `bars_shown` sets it
for the run's block only (a context variable, reset when it ends), so that nothing outlives a run
in the same process."""

from __future__ import annotations

import logging
import math
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from rich.progress import Progress, ProgressColumn, Task
from rich.text import Text

log = logging.getLogger("gesturebench.runtime.stages")
T = TypeVar("T")
_shown: ContextVar[bool] = ContextVar("gesturebench_bars", default=True)


@contextmanager
def bars_shown(enabled: bool) -> Iterator[None]:
    """Draw the bars within the block (or not): the command line sets it for a run from
    `trainer.enable_progress_bar`, like Lightning's own bars."""
    token = _shown.set(bool(enabled))
    try:
        yield
    finally:
        _shown.reset(token)


def _say(text: str) -> None:
    """On the log where one is set up (the command line's), else on stderr (the Python API)."""
    if logging.getLogger().handlers and log.isEnabledFor(logging.INFO):
        log.info(text)
    else:
        print(text, file=sys.stderr, flush=True)


def _announcement(what: str, why: str, kept: str | None) -> str:
    first = f"; first use, kept in {kept}" if kept else ""
    return f"{what} ({why}{first}) ..."


@contextmanager
def stage(what: str, why: str, kept: str | None = None) -> Iterator[None]:
    """Announce `what` (e.g. "training motion_ae on 48 sequences") and `why`; `kept`: where its
    result is kept for later runs (a first use), None when it is redone every run."""
    _say(_announcement(what, why, kept))
    start = time.perf_counter()
    yield
    _say(f"{what}: done in {time.perf_counter() - start:.1f} s")


class SpeedColumn(ProgressColumn):
    """Lightning's speed column in `unit`s per second (its own says "it/s")."""

    def __init__(self, unit: str, style: Any):
        super().__init__()
        self.unit, self.style = unit, style

    def render(self, task: Task) -> Text:
        return Text(f"{task.speed or 0:.1f} {self.unit}/s", style=self.style)


@contextmanager
def bar(
    description: str,
    total: float | None = None,
    transient: bool = False,
    enabled: bool = True,
    unit: str | None = None,
) -> Iterator[Callable[..., None]]:
    """A rich progress bar in Lightning's look (its `RichProgressBar` columns and theme); yields
    `update(**fields)`, rich's `Progress.update` of the bar's task (`advance=1`,
    `completed=`, `total=`, `description=`). `total` None: unknown (a pulsing bar, "--"). `unit`:
    what is counted, for the speed (e.g. "frames/s" where an item takes seconds)."""
    # Lightning is imported where a bar is drawn, not with this module: the command line imports
    # this module, and refuses a mistyped group option (before composing, which imports the
    # chosen classes) in half a second rather than after the seconds Lightning takes to import
    from pytorch_lightning.callbacks import RichProgressBar
    from pytorch_lightning.callbacks.progress.rich_progress import ProcessingSpeedColumn

    columns = RichProgressBar().configure_columns(None)  # type: ignore[arg-type]
    if unit is not None:
        columns = [
            SpeedColumn(unit, c.style) if isinstance(c, ProcessingSpeedColumn) else c
            for c in columns
        ]
    shown = enabled and _shown.get()
    with Progress(*columns, disable=not shown, transient=transient) as progress:
        task = progress.add_task(description, total=math.inf if total is None else total)

        def update(**fields: Any) -> None:
            progress.update(task, **fields)

        yield update


def track(
    items: Iterable[T],
    description: str,
    total: float | None = None,
    unit: str | None = None,
    size: Callable[[T], float] | None = None,
) -> Iterator[T]:
    """`items`, with a bar advanced after each (`total`: their number, by default `len(items)`
    when they have one); with `size`, by `size(item)` `unit`s instead (`total` in those units),
    so that items of seconds each show a speed (frames/s) rather than 0.00 it/s."""
    if total is None and isinstance(items, Sized):
        total = len(items)
    with bar(description, total, unit=unit) as update:
        for item in items:
            yield item
            update(advance=1 if size is None else size(item))


def progress(
    items: Iterable[T],
    what: str,
    why: str,
    kept: str | None = None,
    total: float | None = None,
    label: str | None = None,
) -> Iterator[T]:
    """`items` inside `stage(what, why, kept)`, with a bar over them (`track`) named `label` (a
    short name: the announcement above it says the rest; default `what`)."""
    with stage(what, why, kept):
        yield from track(items, label or what, total)


class Deferred:
    """A stage whose pieces of work run inside a loop shown elsewhere (e.g. a cache filled as the
    sequences are scored, under the evaluation's bar): announced before its first piece, its
    seconds summed over the pieces, and said by `done()` (silent when no piece ran)."""

    def __init__(self, what: str, why: str, kept: str | None = None):
        self.what, self.why, self.kept = what, why, kept
        self.pieces, self.seconds = 0, 0.0

    @contextmanager
    def piece(self) -> Iterator[None]:
        if not self.pieces:
            _say(_announcement(self.what, self.why, self.kept))
        start = time.perf_counter()
        yield
        self.seconds += time.perf_counter() - start
        self.pieces += 1

    def done(self) -> None:
        if self.pieces:
            _say(f"{self.what}: {self.pieces} done in {self.seconds:.1f} s")
        self.pieces, self.seconds = 0, 0.0
