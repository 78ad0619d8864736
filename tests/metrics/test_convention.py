"""The body rerun under a convention (convention.py): what is zeroed, and one rerun per pair shared
by every metric asking for the same convention."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion, SemInterval
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.convention import BodyConvention, convention_motion
from gesturebench.metrics.diversity import Diversity
from gesturebench.metrics.srgr import SemanticRelevanceRecall
from gesturebench.runtime.errors import ConfigError
from tests.metrics.genea import pose_pair


class CountingBody:
    """A body model whose joints are the first 55 × 3 pose values; it counts its calls."""

    def __init__(self):
        self.seen: list[Motion] = []

    def __call__(self, motion: Motion, vertices: bool = True) -> BodyOutput:
        self.seen.append(motion)
        return BodyOutput(torch.from_numpy(motion.poses.reshape(-1, 55, 3).copy()), None)


def motion(seed: int) -> Motion:
    rng = np.random.default_rng(seed)
    return Motion(
        rng.normal(size=(20, 165)), rng.normal(size=(20, 3)), np.zeros(300), np.zeros((20, 100))
    )


def test_convention_motion_zeroes_only_what_it_names():
    m = motion(0)
    both = convention_motion(m, "zero", "zero")
    assert not both.trans.any() and not both.poses[:, :3].any()
    assert np.array_equal(both.poses[:, 3:], m.poses[:, 3:])
    orient_only = convention_motion(m, "keep", "zero")
    assert np.array_equal(orient_only.trans, m.trans) and not orient_only.poses[:, :3].any()


def test_metrics_asking_for_the_same_convention_share_one_rerun(tmp_path):
    body = CountingBody()
    context = MetricContext("toy", lambda s: [], tmp_path, tmp_path, body)
    pair = pose_pair(0, motion(1), motion(2), sem=[SemInterval("beat", 0.0, 1.0, 1.0)])
    metrics = [
        Diversity(global_orient="zero"),
        SemanticRelevanceRecall(global_orient="zero"),
    ]
    for m in metrics:
        m.prepare(context)
        m.update(pair)
    assert len(body.seen) == 2  # generated and reference, once for both metrics
    assert all(not m.poses[:, :3].any() and not m.trans.any() for m in body.seen)


def test_a_rerun_needs_prepare_and_valid_settings():
    with pytest.raises(ConfigError, match="prepare"):
        BodyConvention("x", "zero").bodies(pose_pair(0, motion(1), motion(2)))
