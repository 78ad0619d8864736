"""Study windows: the window of each sequence richest in semantic gestures, or the windows a
windows file lists.

The paper rates 15 BEAT2 test sequences, each through the 10-second window holding the most iconic,
metaphoric and deictic events; every source is shown on the same window. `select_windows` does this
over the splits it is given (the mini dataset's test split has only 4 sequences, so its synthetic
study takes the best window of every split's sequences and keeps the 15 richest, test sequences
first on ties). An event counts for a window when its `sem` interval lies entirely inside it.
`window_plan` reads `study.windows` and its windows file; the records cut to the windows are
`study.window_records`'. A source whose outputs are whole sequences is wrapped in `WindowedSource`,
which cuts them to the window.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gesturebench.data.gesture_classes import SEMANTIC_CLASSES
from gesturebench.data.records import Motion, SemInterval, SequenceRecord
from gesturebench.models.base import GestureModel
from gesturebench.run.config import StudyWindowsConfig
from gesturebench.run.datamodule import OpenedSplits
from gesturebench.runtime.atomic import write_atomic
from gesturebench.runtime.errors import ConfigError, DataError

log = logging.getLogger(__name__)

WINDOW_COLUMNS = ("sequence_id", "split", "start", "end", "semantic_events")


@dataclass(frozen=True)
class Window:
    """The rated stretch [start, end) seconds of one sequence, and how many semantic events lie
    inside it."""

    sequence_id: str
    split: str
    start: float
    end: float
    semantic_events: int = 0

    @property
    def seconds(self) -> float:
        return self.end - self.start


def semantic_events(sem: Sequence[SemInterval] | None, start: float, end: float) -> int:
    """Number of iconic, metaphoric and deictic intervals lying entirely inside [start, end]."""
    return sum(
        1
        for s in sem or ()
        if s.gesture_class in SEMANTIC_CLASSES and s.start >= start and s.end <= end
    )


def best_window(record: SequenceRecord, split: str, seconds: float, step: float) -> Window | None:
    """The record's window of `seconds` (starts on a `step` grid) with the most semantic events,
    earliest on ties.

    None when the sequence is shorter than `seconds`.
    """
    duration = record.motion.duration
    if duration + 1e-9 < seconds:
        return None
    starts = np.round(np.arange(0.0, duration - seconds + 1e-9, step), 6)
    counts = [semantic_events(record.sem, s, s + seconds) for s in starts]
    best = int(np.argmax(counts))
    return Window(
        record.id, split, float(starts[best]), float(starts[best] + seconds), int(counts[best])
    )


def select_windows(
    splits: dict[str, Sequence[SequenceRecord]], n: int, seconds: float, step: float = 0.5
) -> list[Window]:
    """The `n` sequences whose best window has the most semantic events (ties: split order, then
    id)."""
    candidates = []
    for rank, (split, records) in enumerate(splits.items()):
        for record in records:
            window = best_window(record, split, seconds, step)
            if window is not None:
                candidates.append((-window.semantic_events, rank, window.sequence_id, window))
    return [c[-1] for c in sorted(candidates, key=lambda c: c[:3])[:n]]


def windows_csv(windows: Sequence[Window]) -> str:
    """`windows` as a windows CSV (`WINDOW_COLUMNS`), as `read_windows` reads it."""
    rows = [dataclasses.asdict(w) for w in windows]
    return pd.DataFrame(rows, columns=WINDOW_COLUMNS).to_csv(index=False)


def write_windows(path: str | Path, windows: Sequence[Window]) -> None:
    write_atomic(path, windows_csv(windows))


def read_windows(path: str | Path, seconds: float) -> list[Window]:
    """A windows CSV (``sequence_id, split, start[, end]``; end defaults to start + `seconds`)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "windows file not found")
    try:
        table = pd.read_csv(path, dtype={"sequence_id": str, "split": str})
    except (ValueError, OSError) as err:
        raise DataError(path, f"not a readable CSV file ({err})") from err
    missing = [c for c in ("sequence_id", "split", "start") if c not in table.columns]
    if missing:
        raise DataError(
            path, f"missing column(s) {', '.join(missing)}; need sequence_id, split, start[, end]"
        )
    if table["sequence_id"].duplicated().any():
        dup = table.loc[table["sequence_id"].duplicated(), "sequence_id"].iloc[0]
        raise DataError(
            path, f"sequence {dup!r} has more than one window (one window per sequence)"
        )
    end = table["end"] if "end" in table.columns else table["start"] + seconds
    events = table["semantic_events"] if "semantic_events" in table.columns else [0] * len(table)
    return [
        Window(str(i), str(s), float(a), float(b), int(e))
        for i, s, a, b, e in zip(table["sequence_id"], table["split"], table["start"], end, events)
    ]


@dataclass(frozen=True)
class WindowPlan:
    """`study.windows` (`spec`) with its windows file read (`listed`; None: the windows are
    selected from `spec.splits`)."""

    spec: StudyWindowsConfig
    listed: tuple[Window, ...] | None = None

    @property
    def splits(self) -> list[str]:
        """The splits the windows come from: those to open (`Beat2Source.splits`) for
        `configured_windows` and `study.window_records.window_records`."""
        if self.listed is None:
            return list(self.spec.splits)
        return list(dict.fromkeys(w.split for w in self.listed))


def window_plan(node: Mapping[str, Any], file: str | None = None) -> WindowPlan:
    """`study.windows` (`node`, its plain containers), its windows `file` (default `node.file`)
    read."""
    spec = StudyWindowsConfig(**node)
    if file is not None:
        spec = dataclasses.replace(spec, file=file)
    listed = tuple(read_windows(spec.file, spec.seconds)) if spec.file else None
    return WindowPlan(spec, listed)


def configured_windows(plan: WindowPlan, splits: OpenedSplits) -> list[Window]:
    """The windows file's windows, or those selected from `splits` by `plan.spec`."""
    spec = plan.spec
    if plan.listed is not None:
        windows = list(plan.listed)
    else:
        windows = select_windows(
            {s: splits.without_audio(s) for s in spec.splits}, spec.n, spec.seconds, spec.step
        )
    if not windows:
        raise ConfigError(
            f"no sequence of split(s) {list(spec.splits)} is at least {spec.seconds} s long"
        )
    if len(windows) < spec.n:
        log.warning("only %d study windows (study.windows.n=%d)", len(windows), spec.n)
    return windows


class WindowedSource(GestureModel):
    """A study source whose motion covers whole sequences (e.g. a model's precomputed test outputs),
    cut to the window of the record it is asked for; output that is already window-long is passed
    through unchanged."""

    cacheable = False

    def __init__(self, source: GestureModel, name: str | None = None):
        super().__init__(name or source.name)
        self.source = source

    def identity(self) -> dict:
        return {"windowed": self.source.identity()}

    def prepare(self, context) -> None:
        self.source.prepare(context)

    def generate(self, record: SequenceRecord) -> Motion:
        motion = self.source.generate(record)
        first = round(record.meta.get("start", 0.0) * motion.fps)
        if motion.n_frames >= first + record.n_frames:
            return motion.frames(first, first + record.n_frames)
        return motion
