"""PoseVariance (div_k.py, the GENEA Leaderboard's Div_k, its code's var_k) against a plain loop
over the pose values and the Leaderboard's code on the real BEAT2 sample."""

from __future__ import annotations

import numpy as np
import pytest

from gesturebench.data.records import Motion
from gesturebench.metrics.div_k import PoseVariance
from tests.metrics.genea import GENEA, genea_motions, pose_pair


def loop_var_k(poses: np.ndarray) -> float:
    """Σ over the D pose values of (1/T) Σ_t (x_t − x̄)², divided by D."""
    total = 0.0
    for d in range(poses.shape[1]):
        column = [float(x) for x in poses[:, d]]
        mean = sum(column) / len(column)
        total += sum((x - mean) ** 2 for x in column) / len(column)
    return total / poses.shape[1]


def test_pose_variance_is_the_unweighted_mean_of_per_sequence_loops():
    rng = np.random.default_rng(3)
    metric, gens, refs = PoseVariance(), [], []
    for i, t in enumerate((40, 90, 61)):
        gen, ref = (rng.normal(scale=s, size=(t, 165)).cumsum(0) for s in (0.02, 0.01))
        blank = np.zeros((t, 3)), np.zeros(300), np.zeros((t, 100))
        metric.update(pose_pair(i, Motion(gen, *blank), Motion(ref, *blank)))
        gens.append(loop_var_k(gen.astype(np.float32)))
        refs.append(loop_var_k(ref.astype(np.float32)))
    out = metric.compute()
    assert out["var_k"] == pytest.approx(np.mean(gens), rel=1e-9)  # each sequence weighs 1
    assert out["var_k_ref"] == pytest.approx(np.mean(refs), rel=1e-9)
    assert out["var_k"] > out["var_k_ref"] > 0


def test_pose_variance_on_the_real_sample_equals_the_leaderboard_code(beat2_sample):
    reference, generated = genea_motions(beat2_sample)
    for model, gen in generated.items():
        metric = PoseVariance()
        metric.update(pose_pair(0, gen, reference))
        out = metric.compute()
        assert out["var_k"] == pytest.approx(GENEA["values"]["var_k"][model], abs=1e-9), model
        assert out["var_k_ref"] == pytest.approx(GENEA["values"]["var_k"]["reference"], abs=1e-9)
