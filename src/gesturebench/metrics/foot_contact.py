"""Foot contact ↓: difference in foot-contact rate between reference and generated motion
(docs/metrics.md, foot contact)."""

from __future__ import annotations

from typing import Any

import torch

from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.functional.foot_contact import contact_rate
from gesturebench.metrics.pair import MotionPair


class FootContact(SequenceMetric):
    """|r_ref − r_gen| per sequence, with both contact rates (global heel/toe vertex positions)."""

    default_name = "foot_contact"
    direction = "lower"
    needs_vertices = True
    extras = ("contact_rate_gen", "contact_rate_ref")  # results keys older than `{name}_<what>`
    reads = ("trans",)
    reference_only = ("contact_rate_ref",)

    def __init__(
        self,
        height: float = 0.03,
        speed: float = 0.10,
        percentile: float = 1.0,
        min_points: int = 2,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.contact_options = self.options()

    def rate(self, vertices: torch.Tensor | None, fps: float) -> float:
        if vertices is None:
            raise ValueError(f"metric {self.name} needs body vertices")
        return float(contact_rate(vertices, fps, **self.contact_options))

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float]:
        r_gen = self.rate(pair.gen_body.vertices, pair.fps)
        r_ref = self.rate(pair.ref_body.vertices, pair.fps)
        return [abs(r_ref - r_gen), r_gen, r_ref], 1.0
