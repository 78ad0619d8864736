"""The generated-motion cache: motion per (model, sequence) keyed by content hash, and the run
folders of models that write result files (commands and modules).

A run works in an attempt folder beside the cache and becomes a cached run folder only once its
result reads: nothing of a failed run enters the cache, and its inputs and logs stay in the attempt
folder for the error message. A file lock per run folder keeps processes that share the cache (DDP
ranks, sweep jobs) from running the same model on the same sequence twice.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
from filelock import FileLock

from gesturebench.data.beat2 import read_motion_npz
from gesturebench.data.motion import check_motion
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.base import GestureModel
from gesturebench.runtime.caches import CacheEntry, Schema

T = TypeVar("T")

#: a cached motion's arrays: BEAT2's shapes, any length, finite (their ranges are the motion
#: reader's, `read_motion_npz`)
MOTION_SCHEMA = {
    "poses": Schema((None, 165)),
    "trans": Schema((None, 3)),
    "betas": Schema((None,)),
    "expressions": Schema((None, None)),
}


def motion_entry(path: Path, key: dict) -> CacheEntry[Motion]:
    """The cache entry of one generated motion at `path` (a BEAT2 npz)."""
    return CacheEntry(
        path,
        "gesturebench.models.cache motion v1",
        key,
        MOTION_SCHEMA,
        decode=read_motion_npz,
        arrays=lambda m: {k: getattr(m, k) for k in MOTION_SCHEMA},
    )


def generated(model: GestureModel, record: SequenceRecord) -> Motion:
    """`model`'s motion for `record`, held to the motion contract (docs/faults.md, Readers):
    out-of-range output is refused in one line naming the model and sequence, never scored or
    cached."""
    return check_motion(f"model={model.name}, sequence {record.id}", model.generate(record))


class MotionCache:
    """`get(model, record)` returns cached motion or generates (`generated`), stores and returns
    it."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, model: GestureModel, record: SequenceRecord) -> Path:
        return self.root / model.name / f"{record.id}-{model.cache_key(record)[:16]}.npz"

    def entry(self, model: GestureModel, record: SequenceRecord) -> CacheEntry[Motion]:
        key = {"model": model.name, "sequence": record.id, "cache_key": model.cache_key(record)}
        return motion_entry(self.path(model, record), key)

    def get(self, model: GestureModel, record: SequenceRecord) -> Motion:
        if not model.cacheable:
            return generated(model, record)
        entry = self.entry(model, record)
        cached = entry.read()
        if cached is not None:
            return cached
        motion = generated(model, record)
        buffer = io.BytesIO()
        np.savez(buffer, **motion.to_npz_dict())  # as `write_motion_npz`: BEAT2's keys and dtypes
        entry.write(buffer.getvalue())
        return motion


def attempt_dir(final: Path) -> Path:
    """Where a run whose results would enter the cache as `final` works: its staged inputs, command
    line, stdout/stderr and outputs stay there when it fails."""
    return final.with_name(final.name + ".attempt")


def retire(folder: Path) -> Path:
    """Take a run folder whose result does not read out of the cache (it becomes the last attempt,
    so the next run regenerates it); an attempt folder stays as it is."""
    if folder.name.endswith(".attempt"):
        return folder
    attempt = attempt_dir(folder)
    shutil.rmtree(attempt, ignore_errors=True)
    os.replace(folder, attempt)
    return attempt


def run_once(final: Path, run: Callable[[Path], None], read: Callable[[Path], T]) -> T:
    """`read(final)` when the run folder `final` is cached; else `run` in a fresh attempt folder,
    `read` it there and only then move it to `final`. Under a file lock on `final`, so that
    processes sharing the cache run it once."""
    final.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(final.with_name(final.name + ".lock")):
        if final.is_dir():
            return read(final)
        work = attempt_dir(final)
        shutil.rmtree(work, ignore_errors=True)
        run(work)
        result = read(work)
        os.replace(work, final)
        return result
