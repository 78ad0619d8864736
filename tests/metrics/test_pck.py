"""PCK (functional/pck.py, on functional/joint_error.py's distances) against a brute-force loop and
its invariants; the metric class is checked against it in the harness (tests/metrics/tester.py)."""

from __future__ import annotations

import pytest
import torch

from gesturebench.metrics.functional.pck import pck
from tests.metrics.joints import brute_force, random_joints


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_brute_force(seed):
    gen, ref = random_joints(seed), random_joints(seed + 100)
    _, pck_bf = brute_force(gen.numpy(), ref.numpy(), 0.1)
    assert pck(gen, ref, 0.1) == pytest.approx(pck_bf, rel=1e-12)
    assert 0 < pck_bf < 1  # the case actually exercises both sides of the threshold


def test_identity_and_translation_invariance():
    ref = random_joints(3)
    assert pck(ref, ref) == 1.0
    moved = ref + torch.tensor([0.5, -0.2, 3.0])  # global translation is removed by root alignment
    assert pck(moved, ref) == 1.0


def test_known_offset():
    ref = random_joints(4)
    gen = ref.clone()
    gen[:, 1:] += torch.tensor(
        [0.0, 0.0, 0.05], dtype=torch.float64
    )  # every joint but the root 5 cm forward
    # the root is not among the evaluated joints, so every one of them is exactly 5 cm off
    assert pck(gen, ref, 0.04) == 0.0
    assert pck(gen, ref, 0.06) == 1.0


def test_root_is_excluded_from_the_joint_set():
    """A generated motion 0.15 m off on every joint but the root in 7 of 10 frames: PCK 0.3 of 51
    joints would have read 0.3 + 0.7/52 = 0.3135 with the root counted."""
    ref = random_joints(5, t=10)
    gen = ref.clone()
    gen[:, 1:] += torch.tensor([0.15, 0.0, 0.0], dtype=torch.float64)
    gen[:3, 1:] = ref[:3, 1:]  # 3 of 10 frames exact
    assert pck(gen, ref, 0.1) == pytest.approx(0.3, abs=1e-12)
