"""On-disk cache of generated motion per (model, sequence), keyed by content hash, written
atomically."""

from __future__ import annotations

from pathlib import Path

from gesturebench.data.beat2 import read_motion_npz, write_motion_npz
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.base import GestureModel


class MotionCache:
    """`get(model, record)` returns cached motion or generates, stores and returns it."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, model: GestureModel, record: SequenceRecord) -> Path:
        return self.root / model.name / f"{record.id}-{model.cache_key(record)[:16]}.npz"

    def get(self, model: GestureModel, record: SequenceRecord) -> Motion:
        if not model.cacheable:
            return model.generate(record)
        path = self.path(model, record)
        if path.exists():
            return read_motion_npz(path)
        motion = model.generate(record)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_motion_npz(path, motion)
        return motion
