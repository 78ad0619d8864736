"""PCK: root-aligned joint-position agreement with the reference within a threshold
(docs/metrics.md, MJD and PCK)."""

from __future__ import annotations

from typing import Any

from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.functional.pck import pck
from gesturebench.metrics.pair import MotionPair


class PCK(SequenceMetric):
    """PCK ↑: fraction of (frame, BODY_HANDS joint) pairs within `threshold` metres of the
    reference."""

    default_name = "pck"
    direction = "higher"

    def __init__(self, threshold: float = 0.1, **kwargs: Any):
        super().__init__(**kwargs)
        self.threshold = threshold

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float]:
        return [float(pck(pair.gen_body.joints, pair.ref_body.joints, self.threshold))], 1.0
