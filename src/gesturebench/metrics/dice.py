"""Dice ↑ (gesture area coverage): overlap of the frontal-plane bone rasters of a sequence
(docs/metrics.md, Dice)."""

from __future__ import annotations

from typing import Any

from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.functional.dice import bone_raster, dice
from gesturebench.metrics.pair import MotionPair


class Dice(SequenceMetric):
    """Dice of the union-over-frames rasters of the upper-body and hand bones, generated vs
    reference."""

    default_name = "dice"
    direction = "higher"

    def __init__(self, cell: float = 0.005, extent: float = 2.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.cell, self.extent = cell, extent

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float]:
        ref = bone_raster(pair.ref_body.joints, self.cell, self.extent)
        gen = bone_raster(pair.gen_body.joints, self.cell, self.extent)
        return [float(dice(ref, gen))], 1.0
