"""Study windows' records: each record cut to its window (`cut_window`, same id, so ratings and
per-sequence tables join on `sequence_id`): motion frames and audio samples of the window, and
words, semantic intervals and annotations that overlap it, shifted to start at 0 and clipped (a
semantic interval keeps its whole-sequence interval as `span`, from which event ids are made).
`window_records` cuts the records of a study's windows from the opened splits; a source whose
outputs are whole sequences is wrapped in `study.windows.WindowedSource`.
Which windows a study rates is `study.windows`'s business.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from gesturebench.data.records import SAMPLE_RATE, SemInterval, SequenceRecord
from gesturebench.run.datamodule import OpenedSplits
from gesturebench.runtime.errors import DataError
from gesturebench.study.windows import Window, WindowPlan


def shift_events(items: Iterable | None, start: float, end: float) -> list | None:
    """Timed items (dataclasses with `start`/`end`: words, semantic intervals, annotation events)
    overlapping [start, end], shifted by −start and clipped to the window; other items are kept as
    they are. Semantic intervals keep their whole-sequence interval as `span`."""
    if items is None:
        return None
    out = []
    for item in items:
        if not (
            dataclasses.is_dataclass(item)
            and not isinstance(item, type)
            and hasattr(item, "start")
            and hasattr(item, "end")
        ):
            out.append(item)
            continue
        if item.end <= start or item.start >= end:
            continue
        a, b = max(item.start, start) - start, min(item.end, end) - start
        kept = {"span": item.whole_span} if isinstance(item, SemInterval) else {}
        out.append(dataclasses.replace(item, start=a, end=b, **kept))
    return out


def cut_window(record: SequenceRecord, window: Window, index: int) -> SequenceRecord:
    """`record` restricted to `window` (same id), at position `index` of the study's windows."""
    fps = record.motion.fps
    first = round(window.start * fps)
    motion = record.motion.frames(first, first + round(window.seconds * fps))
    audio = None
    if record.audio is not None:
        a = round(window.start * SAMPLE_RATE)
        audio = record.audio[a : a + round(window.seconds * SAMPLE_RATE)]
    return dataclasses.replace(
        record,
        motion=motion,
        audio=audio,
        words=shift_events(record.words, window.start, window.end),
        sem=shift_events(record.sem, window.start, window.end),
        index=index,
        meta={**record.meta, **dataclasses.asdict(window)},
    )


class StudyWindows(Sequence[SequenceRecord]):
    """The study's window records as a dataset (`ids`, `len`, indexing), ready for
    `tasks.evaluate.score`."""

    def __init__(self, records: Sequence[SequenceRecord]):
        self.records = list(records)

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.records]

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, i):
        return self.records[i]


def window_records(plan: WindowPlan, splits: OpenedSplits, windows: list[Window]) -> StudyWindows:
    """The records of `windows` cut to them (checked: sequence in its split of `splits`, window
    inside it); the windows file, if any, is named in the errors."""
    where = plan.spec.file or splits.root
    records = []
    for i, w in enumerate(windows):
        dataset = splits[w.split]
        if w.sequence_id not in dataset.ids:
            raise DataError(
                where,
                f"sequence {w.sequence_id!r} is not in split '{w.split}' of dataset {splits.name}",
            )
        record = dataset[dataset.ids.index(w.sequence_id)]
        if (
            w.start < 0
            or w.end <= w.start
            or w.end > record.motion.duration + 1.0 / record.motion.fps
        ):
            raise DataError(
                where,
                f"window [{w.start}, {w.end}] s of {w.sequence_id} is outside its "
                f"{record.motion.duration:.2f} s",
            )
        records.append(cut_window(record, w, i))
    return StudyWindows(records)
