"""Motion sources that read motion rather than generate it: the reference itself and files on disk."""

from __future__ import annotations

from pathlib import Path

from gesturebench.data.beat2 import read_motion_npz
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.errors import CheckpointError
from gesturebench.models.base import GestureModel


class GroundTruth(GestureModel):
    """The reference motion: every metric at its best value."""

    cacheable = False

    def __init__(self, name: str = "ground_truth"):
        super().__init__(name)

    def generate(self, record: SequenceRecord) -> Motion:
        return record.motion


class Precomputed(GestureModel):
    """BEAT2-format SMPL-X npz files in `dir`, one per sequence, named `{sequence_id}.npz`."""

    cacheable = False

    def __init__(self, name: str = "precomputed", dir: str | None = None):
        super().__init__(name, dir=dir)
        if dir in (None, "", "???"):
            raise CheckpointError(
                "model=precomputed needs model.dir=/folder/with/{sequence_id}.npz files"
            )
        self.dir = Path(dir)
        if not self.dir.is_dir():
            raise CheckpointError(
                f"{self.dir}: model.dir does not exist (it should hold one {{sequence_id}}.npz per sequence)"
            )

    def generate(self, record: SequenceRecord) -> Motion:
        path = self.dir / f"{record.id}.npz"
        if not path.exists():
            raise CheckpointError(
                f"{path}: missing generated motion for sequence {record.id} (expected in model.dir)"
            )
        return read_motion_npz(path)
