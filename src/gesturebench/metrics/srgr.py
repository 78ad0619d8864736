"""SRGR: semantic-relevance-weighted joint recall against the reference (docs/metrics.md, SRGR).

Ours by default; the GENEA Leaderboard's code (docs/protocols.md) differs by options: all 55 joints
(`joints=all`), the body rerun with zero global orientation (`global_orient=zero`), its interval
frames (`sem_frames=official`), weights divided by BEAT2's average weight (`weight_scale=0.1672`,
so that perfect recall scores about 1) and sequences weighted by their frame count
(`weighting=frames`).
"""

from __future__ import annotations

from typing import Any

from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.convention import BodyConvention
from gesturebench.metrics.diversity import JOINT_SETS, WEIGHTINGS, orient_convention
from gesturebench.metrics.functional.srgr import SEM_FRAMES, semantic_weights, srgr
from gesturebench.metrics.pair import MotionPair
from gesturebench.runtime.errors import ConfigError


class SemanticRelevanceRecall(SequenceMetric):
    """SRGR ↑: PCK (δ = `threshold` m, root-aligned joints) weighted per frame by the `sem`
    interval scores / `weight_scale`.

    Needs the sequence's `sem` intervals; a dataset without them reports `null` with a reason.
    Identical motion scores the sequence's mean weight / `weight_scale` (not 1), as in BEAT's
    definition.
    """

    default_name = "srgr"
    direction = "higher"
    requires = ("sem",)

    def __init__(
        self,
        threshold: float = 0.1,
        joints: str = "body_hands",
        global_orient: str = "keep",
        sem_frames: str = "contains",
        weight_scale: float = 1.0,
        weighting: str = "sequence",
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        for knob, value, allowed in (
            ("joints", joints, tuple(JOINT_SETS)),
            ("sem_frames", sem_frames, SEM_FRAMES),
            ("weighting", weighting, WEIGHTINGS),
        ):
            if value not in allowed:
                raise ConfigError(
                    f"metric {self.name}: {knob} must be one of {allowed}, got {value!r}"
                )
        self.threshold, self.joint_ids = threshold, JOINT_SETS[joints]
        self.sem_frames, self.weight_scale, self.weighting = sem_frames, weight_scale, weighting
        self.convention: BodyConvention = orient_convention(self.name, global_orient)

    def prepare(self, context: MetricContext) -> None:
        self.convention.prepare(context)

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float]:
        weights = semantic_weights(pair.sem or [], pair.n_frames, pair.fps, self.sem_frames)
        gen, ref = self.convention.bodies(pair)
        value = srgr(
            gen.joints, ref.joints, weights / self.weight_scale, self.threshold, self.joint_ids
        )
        weight = float(pair.n_frames) if self.weighting == "frames" else 1.0
        return [float(value)], weight
