"""Reading a cache entry that may be damaged (a crash, a full disk, a garbled copy): every cache
read goes through `read_cached`, so that a damaged entry is recomputed instead of ending the run."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from gesturebench.runtime.atomic import one_line

T = TypeVar("T")

log = logging.getLogger(__name__)

#: the suffix a damaged cache entry is renamed with (kept for inspection, never read again)
CORRUPT = ".corrupt"


def read_cached(path: Path, read: Callable[[Path], T]) -> T | None:
    """`read(path)`, or None when there is no entry at `path` or it is damaged (`read` raised): a
    damaged entry is set aside as `<name>.corrupt`, with one log line naming it, so that the
    caller recomputes it."""
    if not path.exists():
        return None
    try:
        return read(path)
    except Exception as exc:  # whatever a damaged file makes its reader raise
        aside = path.with_name(path.name + CORRUPT)
        os.replace(path, aside)
        log.warning(
            "%s: damaged cache entry (%s), set aside as %s and recomputed",
            path,
            one_line(exc),
            aside.name,
        )
        return None
