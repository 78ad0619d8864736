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
from gesturebench.metrics.convention import BodyConvention, Convention
from gesturebench.metrics.diversity import JOINT_SETS, JointSet, Weighting, orient_convention
from gesturebench.metrics.functional.srgr import SemFrames, semantic_weights, srgr
from gesturebench.metrics.pair import MotionPair


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
        joints: JointSet = "body_hands",
        global_orient: Convention = "keep",
        sem_frames: SemFrames = "contains",
        weight_scale: float = 1.0,
        weighting: Weighting = "sequence",
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
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
