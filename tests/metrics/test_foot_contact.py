"""Foot contact (foot_contact.py, functional/foot_contact.py): the contact rules on constructed
feet."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gesturebench.body.joints import N_VERTICES
from gesturebench.metrics.functional.foot_contact import contact_frames, contact_rate
from tests.metrics.bodies import FEET, FPS

pytestmark = pytest.mark.usefixtures("one_thread")


# ---------------------------------------------------------------- foot contact


def feet_vertices(heights: np.ndarray, x: np.ndarray | None = None) -> torch.Tensor:
    """(T,V,3) vertices: the six foot points at `heights` (T,) or (T,6) and x positions `x` (T,)."""
    t = heights.shape[0]
    v = np.zeros((t, N_VERTICES, 3))
    v[:, FEET, 1] = heights if heights.ndim == 2 else heights[:, None]
    v[:, FEET, 0] = 0.0 if x is None else x[:, None]
    v[:, FEET, 2] = np.arange(6) * 0.05
    return torch.tensor(v, dtype=torch.float32)


def test_foot_contact_rules():
    t = 60
    assert (
        contact_rate(feet_vertices(np.full(t, 0.8)), FPS) == 1.0
    )  # standing still on a floor at 0.8 m
    lifted = np.where(
        np.arange(t) < t // 2, 0.0, 0.10
    )  # first half standing, then both feet 10 cm up
    frames = contact_frames(feet_vertices(lifted), FPS)
    assert frames.tolist() == [True] * (t // 2) + [False] * (t // 2)
    assert contact_rate(feet_vertices(lifted), FPS) == 0.5
    assert (
        contact_rate(feet_vertices(np.where(np.arange(t) < t // 2, 0.0, 0.025)), FPS) == 1.0
    )  # within 3 cm
    assert (
        contact_rate(feet_vertices(np.zeros(t), x=0.3 * np.arange(t) / FPS), FPS) == 0.0
    )  # sliding 0.3 m/s
    assert (
        contact_rate(feet_vertices(np.zeros(t), x=0.05 * np.arange(t) / FPS), FPS) == 1.0
    )  # creeping 0.05 m/s
    h = np.zeros((t, 6))
    h[t // 2 :, :3] = 0.1  # the left foot lifted: the right one still holds
    assert contact_rate(feet_vertices(h), FPS) == 1.0
    h[t // 2 :, 3] = 0.1  # and one right point: two of three remain
    assert contact_rate(feet_vertices(h), FPS) == 1.0
    h[t // 2 :, 4] = 0.1  # two right points up: no foot in contact
    assert contact_rate(feet_vertices(h), FPS) == 0.5
