"""LDLJ_rel →0: how much smoother (log dimensionless jerk) the reference is than the generated
motion (docs/metrics.md, LDLJ)."""

from __future__ import annotations

import math
from typing import Any

import torch

from gesturebench.body.joints import UPPER
from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.functional.ldlj_rel import MIN_SAMPLES, windowed_ldlj
from gesturebench.metrics.pair import MotionPair


class LDLJRel(SequenceMetric):
    """LDLJ_ref − LDLJ_gen per sequence over the root-aligned UPPER joints, with `ldlj_gen` and
    `ldlj_ref`.

    A sequence whose generated or reference upper body does not move at all (or that is shorter than
    `MIN_SAMPLES` frames) has no LDLJ: it is counted as not scored rather than given an arbitrary
    value.
    """

    default_name = "ldlj_rel"
    direction = "zero"
    extras = ("ldlj_gen", "ldlj_ref")  # results keys older than `{name}_<what>`
    reference_only = ("ldlj_ref",)

    def __init__(
        self,
        window_s: float = 4.0,
        hop_s: float = 2.0,
        min_path: float = 1e-3,
        savgol_window: int | None = None,
        savgol_order: int = 3,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.ldlj_options = self.options()

    def ldlj(self, joints: torch.Tensor, fps: float) -> float:
        """Windowed LDLJ of the root-aligned UPPER joints of `joints` (T,55,3); NaN when
        undefined."""
        upper = joints[:, list(UPPER)] - joints[:, :1]
        return float(windowed_ldlj(upper, fps, **self.ldlj_options))

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float] | None:
        gen, ref = (
            self.ldlj(pair.gen_body.joints, pair.fps),
            self.ldlj(pair.ref_body.joints, pair.fps),
        )
        if math.isnan(gen) or math.isnan(ref):
            return None
        return [ref - gen, gen, ref], 1.0

    def unscored_reason(self) -> str:
        return (
            f"LDLJ is undefined for all {int(self.missing)} sequences: the generated or reference "
            f"upper body does not move (path under {self.ldlj_options['min_path']} m in every "
            f"window) or has fewer than {MIN_SAMPLES} frames"
        )
