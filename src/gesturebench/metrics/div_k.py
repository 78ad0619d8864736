"""Div_k: the GENEA Leaderboard's Div_k (its code's ``var_k``), how much the raw axis-angle pose
varies over time within a sequence (docs/protocols.md)."""

from __future__ import annotations

import torch

from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.functional.div_k import pose_variance
from gesturebench.metrics.pair import MotionPair


class PoseVariance(SequenceMetric):
    """Div_k ↑ of the generated motion (``{name}_ref``: the reference's): the mean over the 165
    axis-angle pose values of their variance over the sequence's frames, each sequence weighing
    1."""

    default_name = "var_k"
    direction = "higher"
    extras = reference_only = ("{name}_ref",)
    reads = ("jaw", "eyes")  # every joint's rotation is a pose value

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float]:
        gen, ref = (
            pose_variance(torch.from_numpy(m.poses)) for m in (pair.generated, pair.reference)
        )
        return [float(gen), float(ref)], 1.0
