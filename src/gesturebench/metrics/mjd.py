"""MJD: root-aligned joint-position distance to the reference (docs/metrics.md, MJD and PCK)."""

from __future__ import annotations

from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.functional.mjd import mean_joint_distance
from gesturebench.metrics.pair import MotionPair


class MeanJointDistance(SequenceMetric):
    """MJD ↓: mean root-aligned distance of BODY_HANDS joints to the reference, metres."""

    default_name = "mjd"
    direction = "lower"

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float]:
        return [float(mean_joint_distance(pair.gen_body.joints, pair.ref_body.joints))], 1.0
