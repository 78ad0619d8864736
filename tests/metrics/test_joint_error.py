"""MJD and PCK against a brute-force loop, their invariants, and the metric classes' aggregation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion
from gesturebench.metrics.functional.joint_error import mean_joint_distance, pck
from gesturebench.metrics.joint_error import PCK, MeanJointDistance
from gesturebench.metrics.pair import MotionPair
from tests.distributed import run_distributed

# Written out, not imported: SMPL-X body joints 1–21 and hand joints 25–54 (no root, jaw, eyes).
JOINTS = [*range(1, 22), *range(25, 55)]


def brute_force(gen: np.ndarray, ref: np.ndarray, delta: float) -> tuple[float, float]:
    dists, hits, n = 0.0, 0, 0
    for t in range(gen.shape[0]):
        for j in JOINTS:
            g = gen[t, j] - gen[t, 0]
            r = ref[t, j] - ref[t, 0]
            d = float(np.sqrt(((g - r) ** 2).sum()))
            dists += d
            hits += d < delta
            n += 1
    return dists / n, hits / n


def random_joints(seed: int, t: int = 20) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(t, 55, 3, generator=g, dtype=torch.float64) * 0.1 + torch.tensor(
        [0.0, 1.0, 0.0]
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_brute_force(seed):
    gen, ref = random_joints(seed), random_joints(seed + 100)
    mjd_bf, pck_bf = brute_force(gen.numpy(), ref.numpy(), 0.1)
    assert mean_joint_distance(gen, ref) == pytest.approx(mjd_bf, rel=1e-12)
    assert pck(gen, ref, 0.1) == pytest.approx(pck_bf, rel=1e-12)
    assert 0 < pck_bf < 1  # the case actually exercises both sides of the threshold


def test_identity_and_translation_invariance():
    ref = random_joints(3)
    assert mean_joint_distance(ref, ref) == 0.0
    assert pck(ref, ref) == 1.0
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
    assert pck(gen, ref, 0.04) == 0.0
    assert pck(gen, ref, 0.06) == 1.0


def test_root_is_excluded_from_the_joint_set():
    """A generated motion 0.15 m off on every joint but the root: PCK 0.3 of 51 joints would have
    read 0.3 + 0.7/52 = 0.3135 with the root counted."""
    ref = random_joints(5, t=10)
    gen = ref.clone()
    gen[:, 1:] += torch.tensor([0.15, 0.0, 0.0], dtype=torch.float64)
    gen[:3, 1:] = ref[:3, 1:]  # 3 of 10 frames exact
    assert pck(gen, ref, 0.1) == pytest.approx(0.3, abs=1e-12)
    assert mean_joint_distance(gen, ref) == pytest.approx(0.7 * 0.15, rel=1e-9)


def make_pair(index: int, seed: int) -> MotionPair:
    t = 10 + index
    motion = Motion(np.zeros((t, 165)), np.zeros((t, 3)), np.zeros(300), np.zeros((t, 100)))
    gen, ref = random_joints(seed, t).float(), random_joints(seed + 50, t).float()
    return MotionPair(
        index, f"seq{index}", motion, motion, BodyOutput(gen, None), BodyOutput(ref, None)
    )


def test_metric_classes_mean_over_sequences():
    pairs = [make_pair(i, i) for i in range(4)]
    mjd, p = MeanJointDistance(), PCK(threshold=0.1)
    for pair in pairs:
        mjd.update(pair)
        p.update(pair)
    expected = [
        brute_force(x.gen_body.joints.double().numpy(), x.ref_body.joints.double().numpy(), 0.1)
        for x in pairs
    ]
    assert mjd.compute()["mjd"] == pytest.approx(np.mean([e[0] for e in expected]), rel=1e-6)
    assert p.compute()["pck"] == pytest.approx(np.mean([e[1] for e in expected]), rel=1e-6)
    assert mjd.per_sequence()[2]["mjd"] == pytest.approx(expected[2][0], rel=1e-6)
    assert mjd.direction == "lower" and p.direction == "higher"


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
