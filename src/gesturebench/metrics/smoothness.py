"""LDLJ_rel →0: how much smoother (log dimensionless jerk) the reference is than the generated
motion (docs/metrics.md)."""

from __future__ import annotations

import math
from typing import Any

import torch

from gesturebench.body.joints import UPPER
from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.functional.smoothness import MIN_SAMPLES, windowed_ldlj
from gesturebench.metrics.pair import MotionPair


class LDLJRel(SequenceMetric):
    """LDLJ_ref − LDLJ_gen per sequence over the root-aligned UPPER joints, with `ldlj_gen` and
    `ldlj_ref`.

    A sequence whose generated or reference upper body does not move at all (or that is shorter than
    `MIN_SAMPLES` frames) has no LDLJ: it is counted as not scored rather than given an arbitrary
    value.
    """

    higher_is_better = None
    extras = ("ldlj_gen", "ldlj_ref")

    def __init__(
        self,
        name: str = "ldlj_rel",
        window_s: float = 4.0,
        hop_s: float = 2.0,
        savgol_window: int | None = 9,
        savgol_order: int = 3,
        min_path: float = 1e-3,
        **kwargs: Any,
    ):
        super().__init__(name, **kwargs)
        self.window_s, self.hop_s, self.min_path = window_s, hop_s, min_path
        self.savgol_window, self.savgol_order = savgol_window, savgol_order

    def options(self) -> dict:
        return {
            "window_s": self.window_s,
            "hop_s": self.hop_s,
            "savgol_window": self.savgol_window,
            "savgol_order": self.savgol_order,
            "min_path": self.min_path,
        }

    def ldlj(self, joints: torch.Tensor, fps: float) -> float:
        """Windowed LDLJ of the root-aligned UPPER joints of `joints` (T,55,3); NaN when undefined."""
        upper = joints[:, list(UPPER)] - joints[:, :1]
        return windowed_ldlj(
            upper,
            fps,
            self.window_s,
            self.hop_s,
            self.savgol_window,
            self.savgol_order,
            self.min_path,
        )

    def sequence_values(self, pair: MotionPair):
        gen, ref = (
            self.ldlj(pair.gen_body.joints, pair.fps),
            self.ldlj(pair.ref_body.joints, pair.fps),
        )
        if math.isnan(gen) or math.isnan(ref):
            return None
        return [ref - gen, gen, ref], 1.0

    def skip_reason(self) -> str | None:
        if self.weight > 0:
            return None
        return (
            f"LDLJ is undefined for all {int(self.missing)} sequences: the generated or reference upper body "
            f"does not move (path under {self.min_path} m in every window) or has fewer than {MIN_SAMPLES} frames"
        )
