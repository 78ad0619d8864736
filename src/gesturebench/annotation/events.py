"""Events: the semantic intervals of a sequence, each with what is said in it, under a stable
content-hash id.

The id is made from the sequence and the interval as BEAT2 gives it in the whole sequence (`span`),
not from the times of a study window the event was cut into, so a window's events have the ids of
the same events of the whole sequence: annotations made on either serve both. An interval that a
window's edge cuts is not an event of that window (it cannot be seen whole; the study's window
selection does not count it either).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gesturebench.data.annotations_io import read_sem
from gesturebench.data.beat2 import Beat2Dataset, sequence_paths
from gesturebench.data.records import SemInterval, SequenceRecord, Word

#: Seconds of motion shown on each side of an event's interval (spec: 0.5 s, a 2–3 s clip in all).
CONTEXT_SECONDS = 0.5


@dataclass(frozen=True)
class Event:
    """One semantic interval of a sequence (docs/annotation.md, "Events").

    `target` is the sem file's keywords, else the TextGrid words overlapping the interval;
    `category` and `score` are BEAT2's name and relevance columns; `label` BEAT2's class of the
    interval (`SemInterval.gesture_class`). `start`/`end` are times in the motion at hand (a
    study window's, shifted); `span` the interval in the whole sequence when they differ.
    `transcript` is what is said in the clip shown (the interval with `CONTEXT_SECONDS` each side).
    """

    sequence_id: str
    index: int
    start: float
    end: float
    target: str
    category: str
    score: float
    label: str | None = None
    span: tuple[float, float] | None = None
    transcript: str = ""

    @property
    def id(self) -> str:
        """Content hash of (sequence, whole-sequence interval, category, target): the same event
        always gets the same id, in a whole sequence or in a window of it."""
        start, end = self.span or (self.start, self.end)
        key = [self.sequence_id, round(start, 3), round(end, 3), self.category, self.target]
        return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]

    def window(self, n_frames: int, fps: int, context: float = CONTEXT_SECONDS) -> tuple[int, int]:
        """Frames [f0, f1) of the interval with `context` seconds on each side, clipped to the
        sequence (empty when the interval lies beyond the motion: f1 <= f0)."""
        f0 = max(0, math.floor((self.start - context) * fps))
        f1 = min(n_frames, math.ceil((self.end + context) * fps))
        return f0, f1


def spoken(words: Sequence[Word] | None, start: float, end: float) -> str:
    """The words overlapping [start, end] in time, space-separated ('' without words)."""
    return " ".join(w.word for w in words or () if w.start < end and w.end > start)


def spoken_target(interval: SemInterval, words: Sequence[Word] | None) -> str:
    """The keywords of `interval`, else the words overlapping it in time, else ''."""
    return interval.keywords or spoken(words, interval.start, interval.end)


def collect_events(
    sequence_id: str, sem: Sequence[SemInterval] | None, words: Sequence[Word] | None = None
) -> list[Event]:
    """The events of one sequence (or window), in sem-file order; none without a sem file, and
    none for an interval cut by the window's edge."""
    return [
        Event(
            sequence_id,
            i,
            iv.start,
            iv.end,
            spoken_target(iv, words),
            iv.name,
            iv.score,
            iv.gesture_class,
            iv.span,
            spoken(words, iv.start - CONTEXT_SECONDS, iv.end + CONTEXT_SECONDS),
        )
        for i, iv in enumerate(sem or ())
        if not iv.cut
    ]


def count_events(dataset: Beat2Dataset) -> int:
    """Number of events of a split, from its sem files alone."""
    paths = (sequence_paths(dataset.root, sid).sem for sid in dataset.ids)
    return sum(len(read_sem(p)) for p in paths if p.is_file())


def window_events(windows: Iterable[SequenceRecord]) -> int:
    """Number of events of study windows (intervals cut by a window's edge are none)."""
    return sum(len(collect_events(r.id, r.sem, r.words)) for r in windows)
