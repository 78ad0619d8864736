"""The stimuli of a study: `task=render`'s manifest.csv, read and checked (files present, SHA-256
equal)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from gesturebench.runtime.errors import DataError
from gesturebench.runtime.weights import sha256_file
from gesturebench.study.schema import CONDITIONS, MANIFEST_COLUMNS


@dataclass(frozen=True)
class Stimulus:
    """One rendered clip: a window of one source in one condition; `path` is absolute."""

    stimulus_id: str
    source: str
    sequence_id: str
    start: float
    end: float
    condition: str
    path: Path
    sha256: str


def read_manifest(path: str | Path, verify: bool = True) -> dict[str, Stimulus]:
    """stimulus_id → Stimulus, in file order; a missing column, unknown condition, duplicate id,
    missing file or (with `verify`) a wrong SHA-256 is a `DataError` naming the line."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "stimulus manifest not found (task=render writes manifest.csv)")
    stimuli: dict[str, Stimulus] = {}
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in MANIFEST_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(path, f"missing column(s) {', '.join(missing)}")
        for row in reader:
            where = f"line {reader.line_num}"
            sid = row["stimulus_id"].strip()
            if not sid or sid in stimuli:
                raise DataError(path, f"{where}: empty or repeated stimulus_id {sid!r}")
            if row["condition"] not in CONDITIONS:
                raise DataError(
                    path,
                    f"{where}: condition {row['condition']!r} is not one of {list(CONDITIONS)}",
                )
            clip = (path.parent / row["file"]).resolve()
            if not clip.is_file():
                raise DataError(path, f"{where}: stimulus file {clip} not found")
            if verify and sha256_file(clip) != row["sha256"].strip().lower():
                raise DataError(path, f"{where}: SHA-256 of {clip} differs from the manifest")
            try:
                start, end = float(row["start"]), float(row["end"])
            except ValueError:
                raise DataError(path, f"{where}: start/end are not numbers") from None
            stimuli[sid] = Stimulus(
                sid,
                row["source"],
                row["sequence_id"],
                start,
                end,
                row["condition"],
                clip,
                row["sha256"].strip().lower(),
            )
    if not stimuli:
        raise DataError(path, "the manifest lists no stimuli")
    return stimuli
