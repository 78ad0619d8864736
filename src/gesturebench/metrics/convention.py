"""Joints as other evaluation code computes them: the body model rerun with the sequence's
translation and/or global (root) orientation zeroed.

EMAGE's evaluation and the GENEA Leaderboard run SMPL-X with zero translation (the 2025 code and
the Leaderboard also with zero global orientation) before BC, L1div and SRGR. The rerun bodies of a
pair are shared by every metric asking for the same convention (`MotionPair.shared`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Literal

import numpy as np
import torch

from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.pair import MotionPair
from gesturebench.runtime.errors import ConfigError

#: the values of the `translation` and `global_orient` options.
Convention = Literal["keep", "zero"]


def convention_motion(motion: Motion, translation: Convention, global_orient: Convention) -> Motion:
    """`motion` with its translation and/or global orientation (the first 3 pose values) zeroed."""
    poses = motion.poses.copy()
    if global_orient == "zero":
        poses[:, :3] = 0.0
    trans = np.zeros_like(motion.trans) if translation == "zero" else motion.trans
    return dataclasses.replace(motion, poses=poses, trans=trans)


class BodyConvention:
    """The generated and reference bodies of a pair under one convention; the pair's own bodies
    when both parts are kept."""

    def __init__(
        self, metric: str, translation: Convention = "keep", global_orient: Convention = "keep"
    ):
        self.metric, self.translation, self.global_orient = metric, translation, global_orient
        #: the body model's call (its bound method, not the module: a module attribute of a metric
        #: would become a submodule)
        self.forward: Callable[..., BodyOutput] | None = None

    def prepare(self, context: MetricContext) -> None:
        if context.body_model is not None:
            self.forward = context.body_model.__call__

    def bodies(self, pair: MotionPair) -> tuple[BodyOutput, BodyOutput]:
        """(generated, reference) bodies, rerun (once per pair and convention) where a part is
        zeroed."""
        if self.translation == "keep" and self.global_orient == "keep":
            return pair.gen_body, pair.ref_body
        forward = self.forward
        if forward is None:
            raise ConfigError(
                f"metric {self.metric}: prepare(context) must run before update (body model)"
            )

        def rerun() -> tuple[BodyOutput, BodyOutput]:
            with torch.no_grad():
                gen, ref = (
                    forward(
                        convention_motion(m, self.translation, self.global_orient), vertices=False
                    )
                    for m in (pair.generated, pair.reference)
                )
            return gen, ref

        return pair.shared(("convention", self.translation, self.global_orient), rerun)
