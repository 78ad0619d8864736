"""Announcements of the long stages, so that a run never looks hung: one line when a stage starts
(what, why, whether it is a first use whose result is kept) and one with its seconds when it ends,
both on the console (stderr) and in the run's log."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger("gesturebench.stages")


def _say(text: str) -> None:
    """On the log where one is set up (the command line's), else on stderr (the Python API)."""
    if logging.getLogger().handlers and log.isEnabledFor(logging.INFO):
        log.info(text)
    else:
        print(text, file=sys.stderr, flush=True)


@contextmanager
def stage(what: str, why: str, kept: str | None = None) -> Iterator[None]:
    """Announce `what` (e.g. "training motion_ae on 48 sequences") and `why`; `kept`: where its
    result is kept for later runs (a first use), None when it is redone every run."""
    first = f"; first use, kept in {kept}" if kept else ""
    _say(f"{what} ({why}{first}) ...")
    start = time.perf_counter()
    yield
    _say(f"{what}: done in {time.perf_counter() - start:.1f} s")
