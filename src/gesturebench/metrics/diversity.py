"""Diversity ↑: L1 spread of root-aligned body+hand joints around their temporal mean
(docs/metrics.md)."""

from __future__ import annotations

from typing import Any

from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.functional.diversity import l1_diversity
from gesturebench.metrics.pair import MotionPair


class Diversity(SequenceMetric):
    """Diversity of the generated motion, with the reference's (`diversity_ref`) beside it for
    scale."""

    higher_is_better = True
    extras = ("diversity_ref",)

    def __init__(self, name: str = "diversity", **kwargs: Any):
        super().__init__(name, **kwargs)

    def sequence_values(self, pair: MotionPair):
        return [l1_diversity(pair.gen_body.joints), l1_diversity(pair.ref_body.joints)], 1.0
