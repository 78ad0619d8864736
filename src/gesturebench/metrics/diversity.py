"""Diversity ↑: L1 spread of root-aligned joints around their temporal mean (docs/metrics.md,
Diversity).

Two conventions: ours (`joints=body_hands`, `weighting=sequence`: the 51 joints of BODY_HANDS, root
excluded, each sequence weighing 1) and EMAGE's evaluation code (`joints=all`, `weighting=frames`:
all 55 joints, sequences weighted by their frame count, i.e. the total L1 spread over all frames
divided by the number of frames).
The GENEA Leaderboard's Div_pose is EMAGE's, on joints of the body rerun with zero global
orientation (`global_orient=zero`).

The GENEA Leaderboard's Div_k (its code's ``var_k``) is `PoseVariance` (div_k.py).
"""

from __future__ import annotations

from typing import Any, Literal

from gesturebench.body.joints import BODY_HANDS
from gesturebench.data.records import N_JOINTS
from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.convention import BodyConvention, Convention
from gesturebench.metrics.functional.diversity import l1_diversity
from gesturebench.metrics.pair import MotionPair

#: the `joints` options, and the joints each sums over.
JointSet = Literal["body_hands", "all"]
JOINT_SETS: dict[JointSet, tuple[int, ...]] = {
    "body_hands": BODY_HANDS,
    "all": tuple(range(N_JOINTS)),
}
#: `weighting` option: each sequence weighs 1, or its number of frames.
Weighting = Literal["sequence", "frames"]


def orient_convention(metric: str, global_orient: Convention) -> BodyConvention:
    """The bodies of a root-aligned joint metric under `global_orient` (``keep`` | ``zero``).

    The translation does not change root-aligned joints; where the orientation is zeroed it is
    zeroed too, as the EMAGE 2025 and GENEA code do, so the rerun is the one BC's variants share.
    """
    return BodyConvention(metric, "zero" if global_orient == "zero" else "keep", global_orient)


class Diversity(SequenceMetric):
    """Diversity of the generated motion, with the reference's (`diversity_ref`) beside it for
    scale."""

    default_name = "diversity"
    direction = "higher"
    extras = reference_only = ("{name}_ref",)  # the reference's own value, beside the metric's

    def __init__(
        self,
        joints: JointSet = "body_hands",
        weighting: Weighting = "sequence",
        global_orient: Convention = "keep",
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.joint_ids, self.weighting = JOINT_SETS[joints], weighting
        self.convention = orient_convention(self.name, global_orient)

    def prepare(self, context: MetricContext) -> None:
        self.convention.prepare(context)

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float]:
        gen, ref = (
            l1_diversity(body.joints, self.joint_ids) for body in self.convention.bodies(pair)
        )
        weight = float(pair.n_frames) if self.weighting == "frames" else 1.0
        return [float(gen), float(ref)], weight
