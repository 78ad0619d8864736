"""Motion features of an event window, from body-model joints (T,55,3): the inputs of the kinematic
annotator.

Positions are taken in a torso frame per frame (origin at the spine3 joint 9; axes: the speaker's
left along the horizontal shoulder line, up = world y, forward = left × up) and measured in shoulder
widths (|J16 − J17| in the first frame), so the features do not depend on body size or where the
speaker stands. Per-hand features take the more active hand (the larger value of the left and right
hand).

Features and their definitions:

- `path_length`: wrist path length over the window, shoulder widths
- `extent`: diagonal of the wrist's bounding box over the window, shoulder widths
- `height`: highest wrist height over the window, 0 at the pelvis and 1 at the neck (joint 12)
- `strokes`: wrist speed peaks with a prominence of at least `STROKE_PROMINENCE` shoulder widths/s
- `hold_time`: longest stretch (s) with the wrist slower than `HOLD_SPEED` shoulder widths/s while
  above mid-torso (height > 0.5)
- `finger_change`: largest change, from the window's first frame, of a wrist-to-finger-tip distance
  (the distal joint of each finger), in hand lengths
- `hand_distance_change`: range (max − min) of the distance between the wrists, shoulder widths
"""

from __future__ import annotations

import numpy as np
from scipy.signal import find_peaks

from gesturebench.body.joints import (
    LEFT_SHOULDER,
    LEFT_WRIST,
    PELVIS,
    RIGHT_SHOULDER,
    RIGHT_WRIST,
)

FEATURES = (
    "path_length",
    "extent",
    "height",
    "strokes",
    "hold_time",
    "finger_change",
    "hand_distance_change",
)
SPINE3, NECK = 9, 12
STROKE_PROMINENCE = 0.5
HOLD_SPEED = 0.3
RAISED_HEIGHT = 0.5
# Per hand: its wrist, the distal joint of each finger (index, middle, pinky, ring, thumb) and the
# middle finger's chain.
_HANDS = (
    (LEFT_WRIST, (27, 30, 33, 36, 39), (LEFT_WRIST, 28, 29, 30)),
    (RIGHT_WRIST, (42, 45, 48, 51, 54), (RIGHT_WRIST, 43, 44, 45)),
)
_UP = np.array([0.0, 1.0, 0.0])


def torso_frame(joints: np.ndarray) -> np.ndarray:
    """(T,3,3) rotation per frame whose columns are the speaker's left, up and forward
    directions."""
    left = joints[:, LEFT_SHOULDER] - joints[:, RIGHT_SHOULDER]
    left = left - (left @ _UP)[:, None] * _UP
    left /= np.maximum(np.linalg.norm(left, axis=-1, keepdims=True), 1e-9)
    forward = np.cross(left, _UP)
    return np.stack([left, np.broadcast_to(_UP, left.shape), forward], axis=-1)


def longest_run(mask: np.ndarray) -> int:
    """Length of the longest run of True in a 1-D boolean array."""
    if not mask.any():
        return 0
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return int((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).max())


def hand_features(joints: np.ndarray, fps: int, hand: int) -> dict[str, float]:
    """The per-hand features (all but `hand_distance_change`) of hand 0 (left) or 1 (right)."""
    wrist, tips, chain = _HANDS[hand]
    shoulder_width = max(
        float(np.linalg.norm(joints[0, LEFT_SHOULDER] - joints[0, RIGHT_SHOULDER])), 1e-6
    )
    local = (
        np.einsum("tij,ti->tj", torso_frame(joints), joints[:, wrist] - joints[:, SPINE3])
        / shoulder_width
    )
    speed = np.linalg.norm(np.diff(local, axis=0), axis=-1) * fps
    torso_height = np.maximum(joints[:, NECK, 1] - joints[:, PELVIS, 1], 1e-6)
    height = (joints[:, wrist, 1] - joints[:, PELVIS, 1]) / torso_height
    hand_length = max(
        float(np.linalg.norm(np.diff(joints[0, list(chain)], axis=0), axis=-1).sum()), 1e-6
    )
    reach = np.linalg.norm(joints[:, list(tips)] - joints[:, [wrist]], axis=-1) / hand_length
    slow_and_raised = (speed < HOLD_SPEED) & (height[1:] > RAISED_HEIGHT)
    return {
        "path_length": float(speed.sum() / fps),
        "extent": float(np.linalg.norm(local.max(axis=0) - local.min(axis=0))),
        "height": float(height.max()),
        "strokes": float(len(find_peaks(speed, prominence=STROKE_PROMINENCE)[0]))
        if len(speed) > 2
        else 0.0,
        "hold_time": longest_run(slow_and_raised) / fps,
        "finger_change": float(np.abs(reach - reach[0]).max()),
    }


def motion_features(joints: np.ndarray, fps: int) -> dict[str, float]:
    """The features of the module docstring for one window of joints (T ≥ 2 frames)."""
    joints = np.asarray(joints, dtype=np.float64)
    if joints.ndim != 3 or joints.shape[1:] != (55, 3) or len(joints) < 2:
        raise ValueError(f"motion_features needs joints of shape (T>=2, 55, 3), got {joints.shape}")
    left, right = hand_features(joints, fps, 0), hand_features(joints, fps, 1)
    out = {name: max(left[name], right[name]) for name in left}
    shoulder_width = max(
        float(np.linalg.norm(joints[0, LEFT_SHOULDER] - joints[0, RIGHT_SHOULDER])), 1e-6
    )
    between = (
        np.linalg.norm(joints[:, LEFT_WRIST] - joints[:, RIGHT_WRIST], axis=-1) / shoulder_width
    )
    out["hand_distance_change"] = float(between.max() - between.min())
    return {name: out[name] for name in FEATURES}
