"""Readers and writers for BEAT2's transcript files: `textgrid/*.TextGrid` (words) and `sem/*.txt`
(semantic intervals).

Writes go through `gesturebench.runtime.atomic.atomic_path` (temporary file, then rename).

BEAT2's `sem` files are tab-separated without a header: ``name, start, end, duration, score,
keywords``, e.g. ``07_iconic_h  3.119  4.785  1.666  0.7  relaxing``; rows without keywords have
five fields. Each interval's `label` is the class its name encodes (`gesture_classes.sem_label`).
"""

from __future__ import annotations

import csv
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from praatio import textgrid
from praatio.data_classes.interval_tier import IntervalTier
from praatio.utilities.errors import PraatioException

from gesturebench.data.gesture_classes import sem_label
from gesturebench.data.records import SemInterval, Word
from gesturebench.runtime.atomic import atomic_path, one_line
from gesturebench.runtime.errors import DataError

WORDS_TIER = "words"
SEM_COLUMNS = ("name", "start", "end", "duration", "score", "keywords")


def read_textgrid_words(path: str | Path) -> list[Word]:
    """The words of a TextGrid's ``words`` tier (name matched case-insensitively), in time order;
    blanks dropped."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "TextGrid file not found")
    try:
        tg = textgrid.openTextgrid(str(path), includeEmptyIntervals=False, reportingMode="silence")
    except (PraatioException, ValueError, IndexError, KeyError, UnicodeDecodeError) as exc:
        raise DataError(path, f"not a readable TextGrid ({one_line(exc)})") from exc
    tiers = {name.lower(): name for name in tg.tierNames}
    if WORDS_TIER not in tiers:
        raise DataError(
            path, f"no '{WORDS_TIER}' tier (tiers: {', '.join(tg.tierNames) or 'none'})"
        )
    tier = tg.getTier(tiers[WORDS_TIER])
    if not isinstance(tier, IntervalTier):
        raise DataError(path, f"tier '{tier.name}' is a point tier; words need an interval tier")
    words = [
        Word(e.label.strip(), float(e.start), float(e.end)) for e in tier.entries if e.label.strip()
    ]
    return sorted(words, key=lambda w: w.start)


def write_textgrid_words(path: str | Path, words: Sequence[Word], duration: float) -> None:
    """Write `words` as the ``words`` interval tier of a long-format TextGrid spanning [0,
    duration], atomically."""
    entries = [(w.start, w.end, w.word) for w in sorted(words, key=lambda w: w.start)]
    tg = textgrid.Textgrid()
    tg.addTier(IntervalTier(WORDS_TIER, entries, 0.0, float(duration)))
    with atomic_path(path) as tmp:
        tg.save(str(tmp), format="long_textgrid", includeBlankSpaces=True, reportingMode="error")


def read_sem(path: str | Path) -> list[SemInterval]:
    """The rows of a BEAT2 `sem` file as `SemInterval`s, with `label = sem_label(name)`; an empty
    file gives []."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "sem file not found")
    expected = f"expected up to 6 tab-separated columns {', '.join(SEM_COLUMNS)}"
    try:
        with (
            warnings.catch_warnings()
        ):  # pandas only warns when it drops surplus fields: make that an error
            warnings.simplefilter("error", pd.errors.ParserWarning)
            table = pd.read_csv(
                path,
                sep="\t",
                header=None,
                names=[*SEM_COLUMNS, "surplus"],
                index_col=False,
                dtype=str,
                na_filter=False,
                quoting=csv.QUOTE_NONE,
            )
    except (pd.errors.ParserError, pd.errors.ParserWarning, UnicodeDecodeError) as exc:
        raise DataError(path, f"not a readable sem file, {expected} ({one_line(exc)})") from exc
    surplus = np.flatnonzero(table["surplus"].str.strip() != "")
    if surplus.size:
        raise DataError(path, f"line {surplus[0] + 1} has more than 6 fields; {expected}")
    times = (
        table[["start", "end", "score"]]
        .apply(pd.to_numeric, errors="coerce")
        .to_numpy(dtype=np.float64)
    )
    bad = ~np.isfinite(times)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        column = ("start", "end", "score")[col]
        raise DataError(
            path, f"line {row + 1}: {column} {table[column].iloc[row]!r} is not a finite number"
        )
    backwards = np.flatnonzero(times[:, 1] < times[:, 0])
    if backwards.size:
        row = backwards[0]
        raise DataError(
            path, f"line {row + 1}: end {times[row, 1]} is before start {times[row, 0]}"
        )
    return [
        SemInterval(
            name=name.strip(),
            start=float(start),
            end=float(end),
            score=float(score),
            keywords=keywords.strip(),
            label=sem_label(name),
        )
        for name, (start, end, score), keywords in zip(table["name"], times, table["keywords"])
    ]


def write_sem(path: str | Path, intervals: Sequence[SemInterval]) -> None:
    """Write `intervals` in BEAT2's `sem` layout (duration = end − start), atomically.

    The file has no label column: a label is re-derived from the name when read, so an interval
    whose `label` disagrees with `sem_label(name)` is refused (ValueError) rather than silently
    lost.
    """
    for iv in intervals:
        if iv.label is not None and iv.label != sem_label(iv.name):
            raise ValueError(
                f"sem interval {iv.name!r} at {iv.start}s has label {iv.label!r}, "
                f"but its name reads as {sem_label(iv.name)!r}; "
                "name it after its class (e.g. '05_iconic_l' or 'iconic')"
            )
        if any(ch in text for text in (iv.name, iv.keywords) for ch in "\t\r\n"):
            raise ValueError(
                f"sem interval {iv.name!r} at {iv.start}s: "
                "name and keywords cannot hold tabs or newlines"
            )
    table = pd.DataFrame(
        [(iv.name, iv.start, iv.end, iv.end - iv.start, iv.score, iv.keywords) for iv in intervals],
        columns=list(SEM_COLUMNS),
    )
    with atomic_path(path) as tmp:
        table.to_csv(tmp, sep="\t", header=False, index=False, quoting=csv.QUOTE_NONE)
