"""Diversity ↑: L1 spread of root-aligned body+hand joints around their temporal mean
(docs/metrics.md, Diversity)."""

from __future__ import annotations

from typing import Any

from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.functional.diversity import l1_diversity
from gesturebench.metrics.pair import MotionPair


class Diversity(SequenceMetric):
    """Diversity of the generated motion, with the reference's (`diversity_ref`) beside it for
    scale."""

    direction = "higher"
    extras = ("{name}_ref",)
    reference_only = ("{name}_ref",)

    def __init__(self, name: str = "diversity", **kwargs: Any):
        super().__init__(name, **kwargs)

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float]:
        gen, ref = (l1_diversity(body.joints) for body in (pair.gen_body, pair.ref_body))
        return [float(gen), float(ref)], 1.0
