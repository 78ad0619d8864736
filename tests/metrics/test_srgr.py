"""SRGR (srgr.py, functional/srgr.py): semantic weights and hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gesturebench.data.records import SemInterval
from gesturebench.metrics.functional.srgr import semantic_weights, srgr
from gesturebench.metrics.srgr import SemanticRelevanceRecall
from tests.metrics.genea import GENEA, genea_pairs
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


# ---------- the GENEA Leaderboard's SRGR ----------

GENEA_OPTIONS = dict(
    joints="all",
    global_orient="zero",
    sem_frames="official",
    weight_scale=0.1672,
    weighting="frames",
)


def test_official_sem_frames_floor_the_start_and_ceil_the_end():
    sem = [
        SemInterval("deictic", 0.11, 0.21, 0.5),  # frames ⌊3.3⌋ = 3 .. ⌈6.3⌉ − 1 = 6
        SemInterval("iconic", 0.3, 0.3, 0.9),  # empty: skipped
        SemInterval("beat", 0.2, 0.25, 0.8),  # frames 6 .. 7 (⌈7.5⌉ − 1), max on overlap
    ]
    expected = np.zeros(12)
    expected[3:6] = 0.5
    expected[6:8] = 0.8
    assert semantic_weights(sem, 12, 30, "official") == pytest.approx(expected)
    ours = np.zeros(12)
    ours[4:6], ours[6:8] = 0.5, 0.8  # t/30 ∈ [0.11, 0.21): 4, 5, 6 → 6 overlapped by beat
    assert semantic_weights(sem, 12, 30) == pytest.approx(ours)


def test_weight_scale_joints_and_frame_weighting_by_hand():
    ref = torch.zeros(4, 55, 3)
    gen = ref.clone()
    gen[1, 52:, 0] = 0.5  # frame 1: the 3 face joints miss (not in BODY_HANDS)
    sem = [SemInterval("beat", 0.0, 1.0, 0.5)]
    metric = SemanticRelevanceRecall(joints="all", weight_scale=0.25, weighting="frames")
    metric.update(make_pair(0, gen.numpy(), ref.numpy(), sem=sem))
    metric.update(make_pair(1, ref.numpy()[:2], ref.numpy()[:2], sem=sem))
    first = (0.5 / 0.25) * (3 * 55 + 52) / (4 * 55)
    assert metric.compute()["srgr"] == pytest.approx((4 * first + 2 * 2.0) / 6)


def test_genea_options_equal_the_leaderboard_code_on_the_real_sample(beat2_sample, tmp_path):
    rows = GENEA["sem_rows"]
    sem = [SemInterval(r[0], r[1], r[2], r[4]) for r in rows]
    context, pairs = genea_pairs(beat2_sample, tmp_path, sem)
    duration = pairs[0].n_frames / 30
    flat = [SemInterval("all", 0.0, duration + 1, 1.0)]  # the official code without sem: all ones
    for key, intervals, scale in (("srgr", sem, 0.1672), ("srgr_unweighted", flat, 1.0)):
        metric = SemanticRelevanceRecall(**{**GENEA_OPTIONS, "weight_scale": scale})
        metric.prepare(context)
        pair = pairs[0]
        pair.sem = intervals
        metric.update(pair)
        assert metric.compute()["srgr"] == pytest.approx(GENEA["values"][key], abs=1e-6), key
