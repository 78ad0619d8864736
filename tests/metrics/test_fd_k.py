"""FD_k (fd_k.py) against numpy moments with scipy's sqrtm on the pooled differences of
consecutive frames and against the GENEA Leaderboard's code on the real BEAT2 sample (fixture);
two-process DDP with a large offset: the harness (tests/metrics/tester.py)."""

from __future__ import annotations

import numpy as np
import pytest

from gesturebench.metrics.fd_k import PoseDifferenceFrechet
from tests.metrics.genea import GENEA, genea_motions, pose_pair
from tests.metrics.poses import evaluate, expected, motion, pairs

pytestmark = pytest.mark.usefixtures("one_thread")


def test_pooled_frames_equal_numpy_and_scipy():
    seqs = pairs()
    got = evaluate(PoseDifferenceFrechet, seqs)
    assert got == pytest.approx(expected(seqs, True), rel=1e-6)
    assert got > 0.1  # the perturbation is far from the reference


def test_name_and_identical_motion():
    assert PoseDifferenceFrechet().name == "fd_k"
    same = [pose_pair(p.index, p.reference, p.reference) for p in pairs(2)]
    assert evaluate(PoseDifferenceFrechet, same) == pytest.approx(0.0, abs=1e-8)


def test_too_few_frames_is_skipped_with_a_reason():
    metric = PoseDifferenceFrechet()
    one = motion(np.zeros((2, 165)))  # one difference per side
    metric.update(pose_pair(0, one, one))
    assert metric.compute() == {"fd_k": None}
    assert "at least 2" in (metric.skip_reason() or "")


def test_real_sample_equals_the_leaderboard_code(beat2_sample):
    reference, generated = genea_motions(beat2_sample)
    for model, gen in generated.items():
        metric = PoseDifferenceFrechet()
        metric.update(pose_pair(0, gen, reference))
        official = GENEA["values"][metric.name][model]
        assert metric.compute()[metric.name] == pytest.approx(official, abs=1e-6), model
    # the rolled motion holds the same frames: ≈ 0; the perturbation is clearly nonzero
    assert GENEA["values"][metric.name]["perturbed"] > 0.1
