"""The reference motion itself as a motion source (``model=ground_truth``)."""

from __future__ import annotations

from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.base import GestureModel


class GroundTruth(GestureModel):
    """The reference motion: every metric at its best value."""

    cacheable = False

    def __init__(self, name: str = "ground_truth"):
        super().__init__(name)

    def generate(self, record: SequenceRecord) -> Motion:
        return record.motion
