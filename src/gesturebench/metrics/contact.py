"""Foot contact ↓: difference in foot-contact rate between reference and generated motion
(docs/metrics.md)."""

from __future__ import annotations

from typing import Any

from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.functional.foot_contact import contact_rate
from gesturebench.metrics.pair import MotionPair


class FootContact(SequenceMetric):
    """|r_ref − r_gen| per sequence, with both contact rates (global heel/toe vertex positions)."""

    higher_is_better = False
    needs_vertices = True
    extras = ("contact_rate_gen", "contact_rate_ref")

    def __init__(
        self,
        name: str = "foot_contact",
        height: float = 0.03,
        speed: float = 0.10,
        percentile: float = 1.0,
        min_points: int = 2,
        **kwargs: Any,
    ):
        super().__init__(name, **kwargs)
        self.height, self.speed, self.percentile, self.min_points = (
            height,
            speed,
            percentile,
            min_points,
        )

    def options(self) -> dict:
        return {
            "height": self.height,
            "speed": self.speed,
            "percentile": self.percentile,
            "min_points": self.min_points,
        }

    def sequence_values(self, pair: MotionPair):
        opts = self.options()
        r_gen = contact_rate(pair.gen_body.vertices, pair.fps, **opts)
        r_ref = contact_rate(pair.ref_body.vertices, pair.fps, **opts)
        return [abs(r_ref - r_gen), r_gen, r_ref], 1.0
