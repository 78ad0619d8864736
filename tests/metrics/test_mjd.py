"""MJD against a brute-force loop, its invariants, and the metric class's aggregation and DDP."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gesturebench.metrics.functional.mjd import mean_joint_distance
from gesturebench.metrics.mjd import MeanJointDistance
from tests.distributed import run_distributed
from tests.metrics.joints import brute_force, expected, make_pair, random_joints


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_brute_force(seed):
    gen, ref = random_joints(seed), random_joints(seed + 100)
    mjd_bf, _ = brute_force(gen.numpy(), ref.numpy(), 0.1)
    assert mean_joint_distance(gen, ref) == pytest.approx(mjd_bf, rel=1e-12)


def test_identity_and_translation_invariance():
    ref = random_joints(3)
    assert mean_joint_distance(ref, ref) == 0.0
    moved = ref + torch.tensor([0.5, -0.2, 3.0])  # global translation is removed by root alignment
    assert mean_joint_distance(moved, ref) == pytest.approx(0.0, abs=1e-12)


def test_known_offset():
    ref = random_joints(4)
    gen = ref.clone()
    gen[:, 1:] += torch.tensor(
        [0.0, 0.0, 0.05], dtype=torch.float64
    )  # every joint but the root 5 cm forward
    # the root is not among the evaluated joints, so every one of them is exactly 5 cm off
    assert mean_joint_distance(gen, ref) == pytest.approx(0.05, rel=1e-9)


def test_root_is_excluded_from_the_joint_set():
    """A generated motion 0.15 m off on every joint but the root in 7 of 10 frames."""
    ref = random_joints(5, t=10)
    gen = ref.clone()
    gen[:, 1:] += torch.tensor([0.15, 0.0, 0.0], dtype=torch.float64)
    gen[:3, 1:] = ref[:3, 1:]  # 3 of 10 frames exact
    assert mean_joint_distance(gen, ref) == pytest.approx(0.7 * 0.15, rel=1e-9)


def test_metric_class_means_over_sequences():
    pairs = [make_pair(i, i) for i in range(4)]
    mjd = MeanJointDistance()
    for pair in pairs:
        mjd.update(pair)
    want = expected(pairs)
    assert mjd.compute()["mjd"] == pytest.approx(np.mean([e[0] for e in want]), rel=1e-6)
    assert mjd.per_sequence()[2]["mjd"] == pytest.approx(want[2][0], rel=1e-6)
    assert mjd.direction == "lower"


def _ddp_mjd(rank: int, world: int, n: int):
    metric = MeanJointDistance()
    for i in range(rank, n, world):
        metric.update(make_pair(i, i))
    value = metric.compute()["mjd"]
    with metric.sync_context():
        per = metric.per_sequence()
    return value, per


def test_two_process_ddp_equals_one_process():
    n = 5  # odd: the ranks get 3 and 2 sequences
    single = MeanJointDistance()
    for i in range(n):
        single.update(make_pair(i, i))
    value, per = run_distributed(_ddp_mjd, n)
    assert value == pytest.approx(single.compute()["mjd"], rel=1e-12)
    assert sorted(per) == list(range(n))
    expected = single.per_sequence()
    assert {i: v["mjd"] for i, v in per.items()} == pytest.approx(
        {i: v["mjd"] for i, v in expected.items()}
    )
