"""A sequence staged as a one-sequence BEAT2 folder: the input of a per-sequence model command."""

from __future__ import annotations

from pathlib import Path

from gesturebench.data.annotations_io import write_sem, write_textgrid_words
from gesturebench.data.audio import write_wav
from gesturebench.data.beat2 import SPLIT_FILE, sequence_paths, write_motion_npz
from gesturebench.data.records import SequenceRecord


def stage_sequence(record: SequenceRecord, root: Path) -> dict[str, str]:
    """Write `record` as a one-sequence BEAT2 folder under `root`; return the placeholder values it
    provides (``audio`` and ``textgrid`` only where the record has them)."""
    split = str(record.meta.get("split", "test"))
    paths = sequence_paths(root, record.id)
    root.mkdir(parents=True, exist_ok=True)
    (root / SPLIT_FILE).write_text(f"id,type\n{record.id},{split}\n")
    write_motion_npz(paths.motion, record.motion)
    values = {
        "id": record.id,
        "speaker": str(record.speaker),
        "split": split,
        "split_dir": str(root),
    }
    if record.audio is not None:
        write_wav(paths.audio, record.audio)
        values["audio"] = str(paths.audio)
    if record.words is not None:
        end = max([record.motion.duration, *(w.end for w in record.words)])
        write_textgrid_words(paths.textgrid, record.words, end)
        values["textgrid"] = str(paths.textgrid)
    if record.sem is not None:
        write_sem(paths.sem, record.sem)
    return values
