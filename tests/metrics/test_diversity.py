"""Diversity's EMAGE convention (`joints=all`, `weighting=frames`) against a brute-force loop
written as EMAGE's evaluation computes L1div: every frame's 55 × 3 coordinates (translation
removed), the absolute deviation from the sequence's mean summed over all sequences, divided by all
frames."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from gesturebench.body.joints import BODY_HANDS
from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion
from gesturebench.metrics.diversity import Diversity
from gesturebench.metrics.functional.diversity import l1_diversity
from gesturebench.metrics.pair import MotionPair
from gesturebench.run.config import build
from gesturebench.run.protocol import metric_nodes
from tests.helpers import composed
from tests.metrics.genea import GENEA, genea_pairs


def moving_body(n_frames: int, seed: int) -> BodyOutput:
    """55 joints wandering around a drifting root (the drift is the translation)."""
    rng = np.random.default_rng(seed)
    local = rng.normal(size=(1, 55, 3)) + 0.1 * rng.normal(size=(n_frames, 55, 3)).cumsum(0)
    local[:, 0] = 0.0
    trans = 0.05 * rng.normal(size=(n_frames, 1, 3)).cumsum(0)
    return BodyOutput(torch.tensor(local + trans), None)


def pair(index: int, n_frames: int) -> MotionPair:
    motion = Motion(
        np.zeros((n_frames, 165)), np.zeros((n_frames, 3)), np.zeros(300), np.zeros((n_frames, 100))
    )
    gen, ref = moving_body(n_frames, index), moving_body(n_frames, 100 + index)
    return MotionPair(index, f"s{index}", motion, motion, gen, ref)


def emage_l1div(bodies: list[BodyOutput]) -> float:
    """The loop: Σ over sequences, frames and the 165 coordinates of |x − x̄| over Σ frames."""
    total, frames = 0.0, 0
    for body in bodies:
        joints = body.joints.double().numpy()
        x = (joints - joints[:, :1]).reshape(len(joints), -1)  # zero translation: root at 0
        mean = x.mean(0)
        for t in range(len(x)):
            for c in range(x.shape[1]):
                total += abs(x[t, c] - mean[c])
        frames += len(x)
    return total / frames


def test_all_joints_weighted_by_frames_equals_the_official_loop():
    pairs = [pair(i, n) for i, n in enumerate((12, 40, 25))]  # unequal lengths: weighting matters
    metric = Diversity(joints="all", weighting="frames")
    for p in pairs:
        metric.update(p)
    values = metric.compute()
    assert values["diversity"] == pytest.approx(emage_l1div([p.gen_body for p in pairs]), rel=1e-12)
    assert values["diversity_ref"] == pytest.approx(
        emage_l1div([p.ref_body for p in pairs]), rel=1e-12
    )
    ours = Diversity()  # 51 joints, each sequence 1: another number on the same data
    for p in pairs:
        ours.update(p)
    assert abs(ours.compute()["diversity"] - values["diversity"]) > 1e-3 * values["diversity"]


def test_options_are_recorded():
    """(A bad value of these options is refused at compose time: test_config.)"""
    assert Diversity(joints="all", weighting="frames").options() == {
        "joints": "all",
        "weighting": "frames",
        "global_orient": "keep",
    }


def test_genea_div_pose_equals_the_leaderboard_code_on_the_real_sample(beat2_sample, tmp_path):
    context, pairs = genea_pairs(beat2_sample, tmp_path)
    metric = Diversity(joints="all", weighting="frames", global_orient="zero")
    metric.prepare(context)
    metric.update(pairs[0])
    out, official = metric.compute(), GENEA["values"]["l1div"]
    assert out["diversity"] == pytest.approx(official["generated"], abs=1e-6)
    assert out["diversity_ref"] == pytest.approx(official["reference"], abs=1e-6)


EMAGE2025_L1DIV = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "l1div_emage_official.json").read_text()
)


def test_emage2025_preset_diversity_equals_the_2025_code_on_the_real_sample(beat2_sample, tmp_path):
    """`metrics=emage2025`'s diversity, as the preset configures it, against EMAGE 2025's `L1div` on
    the same body's joints (zero translation and global orientation, as its evaluation_fn runs
    SMPL-X). The pair's own bodies are empty: a preset that kept the orientation would read them."""
    context, pairs = genea_pairs(
        beat2_sample, tmp_path
    )  # the sample rolled by 150 frames vs itself
    assert EMAGE2025_L1DIV["roll_frames"] == GENEA["roll_frames"]
    metric = build(metric_nodes(composed("metrics=emage2025").metrics)["diversity"])
    metric.prepare(context)
    metric.update(pairs[0])
    out, official = metric.compute(), EMAGE2025_L1DIV["values"]
    assert out["diversity"] == pytest.approx(official["generated"], abs=1e-6)
    assert out["diversity_ref"] == pytest.approx(official["reference"], abs=1e-6)


@pytest.mark.parametrize("n_frames", [1, 30, 2049])
@pytest.mark.parametrize("joint_ids", [tuple(range(55)), BODY_HANDS])
def test_l1_diversity_is_bit_identical_to_the_plain_expression_and_leaves_its_input(
    joint_ids, n_frames
):
    for joints in (moving_body(n_frames, 7).joints.float(), moving_body(n_frames, 8).joints):
        before = joints.clone()
        x = joints.double()
        p = x[:, list(joint_ids)] - x[:, :1]
        plain = (p - p.mean(dim=0)).abs().sum(dim=(1, 2)).mean()
        assert l1_diversity(joints, joint_ids).item() == plain.item()
        assert torch.equal(joints, before)
