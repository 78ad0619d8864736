"""Synthetic bodies and motion pairs shared by the geometry metric tests."""

from __future__ import annotations

import numpy as np
import torch

from gesturebench.body.joints import LEFT_FOOT_VERTICES, N_VERTICES, RIGHT_FOOT_VERTICES
from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion
from gesturebench.metrics.pair import MotionPair

FPS = 30


FEET = list(LEFT_FOOT_VERTICES) + list(RIGHT_FOOT_VERTICES)


# ---------------------------------------------------------------- synthetic data


def synthetic_body(t: int, seed: int) -> BodyOutput:
    """A skeleton (shared rest pose and skin) moving smoothly, with feet that step on and off a
    floor at y=0."""
    skel = np.random.default_rng(0)
    rest = skel.normal(scale=0.3, size=(55, 3))
    owner = skel.integers(0, 55, N_VERTICES)
    skin = skel.normal(scale=0.03, size=(N_VERTICES, 3))
    rng = np.random.default_rng(seed)
    time = np.arange(t)[:, None, None] / FPS
    wave = rng.uniform(0.02, 0.1, (55, 3)) * np.sin(
        2 * np.pi * rng.uniform(0.3, 1.5, (55, 3)) * time + rng.uniform(0, 2 * np.pi, (55, 3))
    )
    joints = (
        rest + wave + np.array([0.0, 0.9, 0.0]) + 0.2 * time * rng.normal(size=3)
    )  # slow root drift
    vertices = joints[:, owner] + skin
    step = 0.08 * np.sin(
        2 * np.pi * rng.uniform(1.5, 2.5) * time[:, :, 0] + rng.uniform(0, 2 * np.pi)
    )
    vertices[:, FEET, 1] = np.clip(step, 0.0, None)
    vertices[:, FEET, 0] = vertices[:1, FEET, 0]
    vertices[:, FEET, 2] = vertices[:1, FEET, 2]
    return BodyOutput(
        torch.tensor(joints, dtype=torch.float32), torch.tensor(vertices, dtype=torch.float32)
    )


def make_pair(index: int, gen: BodyOutput, ref: BodyOutput) -> MotionPair:
    t = gen.joints.shape[0]
    motion = Motion(
        np.zeros((t, 165)), np.zeros((t, 3)), np.zeros(300), np.zeros((t, 100)), fps=FPS
    )
    return MotionPair(index, f"seq{index}", motion, motion, gen, ref)


def synthetic_pair(index: int, t: int = 40) -> MotionPair:
    return make_pair(index, synthetic_body(t, 100 + index), synthetic_body(t, 200 + index))
