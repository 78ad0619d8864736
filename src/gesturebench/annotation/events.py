"""Events: the semantic intervals of a sequence, each with what is said in it, under a stable
content-hash id."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from gesturebench.data.records import SemInterval, Word

#: Seconds of motion shown on each side of an event's interval (spec: 0.5 s, a 2–3 s clip in all).
CONTEXT_SECONDS = 0.5


@dataclass(frozen=True)
class Event:
    """One semantic interval of a sequence (docs/annotation.md, "Events").

    `target` is the sem file's keywords, else the TextGrid words overlapping the interval;
    `category` and `score` are BEAT2's name and relevance columns; `label` the class the name
    encodes (`annotations_io.sem_label`).
    """

    sequence_id: str
    index: int
    start: float
    end: float
    target: str
    category: str
    score: float
    label: str | None = None

    @property
    def id(self) -> str:
        """Content hash of (sequence, interval, category, target): the same event always gets the
        same id."""
        key = [
            self.sequence_id,
            round(self.start, 3),
            round(self.end, 3),
            self.category,
            self.target,
        ]
        return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]

    def window(self, n_frames: int, fps: int, context: float = CONTEXT_SECONDS) -> tuple[int, int]:
        """Frames [f0, f1) of the interval with `context` seconds on each side, clipped to the
        sequence (empty when the interval lies beyond the motion: f1 <= f0)."""
        f0 = max(0, math.floor((self.start - context) * fps))
        f1 = min(n_frames, math.ceil((self.end + context) * fps))
        return f0, f1


def spoken_target(interval: SemInterval, words: Sequence[Word] | None) -> str:
    """The keywords of `interval`, else the words overlapping it in time, else ''."""
    if interval.keywords:
        return interval.keywords
    return " ".join(
        w.word for w in words or () if w.start < interval.end and w.end > interval.start
    )


def collect_events(
    sequence_id: str, sem: Sequence[SemInterval] | None, words: Sequence[Word] | None = None
) -> list[Event]:
    """The events of one sequence, in sem-file order (none when the sequence has no sem file)."""
    return [
        Event(
            sequence_id, i, iv.start, iv.end, spoken_target(iv, words), iv.name, iv.score, iv.label
        )
        for i, iv in enumerate(sem or ())
    ]
