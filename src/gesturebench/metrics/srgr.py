"""SRGR: semantic-relevance-weighted joint recall against the reference (docs/metrics.md, SRGR)."""

from __future__ import annotations

from typing import Any

from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.functional.srgr import semantic_weights, srgr
from gesturebench.metrics.pair import MotionPair


class SemanticRelevanceRecall(SequenceMetric):
    """SRGR ↑: PCK (δ = `threshold` m, root-aligned BODY_HANDS) weighted per frame by the `sem`
    interval scores.

    Needs the sequence's `sem` intervals; a dataset without them reports `null` with a reason.
    Identical motion scores the sequence's mean weight (not 1), as in BEAT's definition.
    """

    default_name = "srgr"
    direction = "higher"
    requires = ("sem",)

    def __init__(self, threshold: float = 0.1, **kwargs: Any):
        super().__init__(**kwargs)
        self.threshold = threshold

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float]:
        weights = semantic_weights(pair.sem or [], pair.n_frames, pair.fps)
        value = srgr(pair.gen_body.joints, pair.ref_body.joints, weights, self.threshold)
        return [float(value)], 1.0
