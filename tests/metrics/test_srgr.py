"""SRGR (srgr.py, functional/srgr.py): semantic weights and hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gesturebench.data.records import SemInterval
from gesturebench.metrics.functional.srgr import semantic_weights, srgr
from gesturebench.metrics.srgr import SemanticRelevanceRecall
from tests.metrics.speech import make_pair

# ---------- SRGR ----------


def test_semantic_weights_take_the_interval_score_and_max_on_overlap():
    sem = [SemInterval("deictic", 0.1, 0.2, 0.5), SemInterval("iconic", 0.15, 0.3, 0.8)]
    w = semantic_weights(sem, 12, 30)  # frame t at t/30 s
    expected = np.zeros(12)
    expected[3:5] = 0.5  # 0.100, 0.133
    expected[5:6] = 0.8  # 0.167: both intervals, max
    expected[6:9] = 0.8  # 0.2 .. 0.267 (0.3 excluded)
    assert w == pytest.approx(expected)


def test_srgr_hand_computed_case():
    t = 4
    ref = torch.zeros(t, 55, 3)
    gen = ref.clone()
    gen[1, 1:11, 0] = 0.5  # frame 1: 10 of the 51 body+hand joints (1–21, 25–54) miss
    gen[2, 1:, 0] = 0.5  # frame 2: all miss (the root, always 0 when root-aligned, is not counted)
    gen[3] += 2.0  # frame 3: a global shift, removed by root alignment: all match
    w = np.array([1.0, 0.5, 0.25, 0.0])
    expected = (1.0 * 51 + 0.5 * 41 + 0.25 * 0 + 0.0 * 51) / (4 * 51)
    assert srgr(gen, ref, w) == pytest.approx(expected)


def test_srgr_of_identical_motion_is_the_mean_weight():
    rng = np.random.default_rng(0)
    joints = rng.standard_normal((60, 55, 3))
    sem = [SemInterval("beat", 0.2, 0.9, 0.3), SemInterval("deictic", 1.1, 1.6, 1.0)]
    metric = SemanticRelevanceRecall()
    metric.update(make_pair(0, joints, joints, sem=sem))
    assert metric.compute()["srgr"] == pytest.approx(semantic_weights(sem, 60, 30).mean())


def test_srgr_is_null_without_sem():
    metric = SemanticRelevanceRecall()
    joints = np.zeros((10, 55, 3))
    metric.update(make_pair(0, joints, joints, sem=None))
    assert metric.compute() == {"srgr": None}
    assert "sem" in metric.skip_reason()
