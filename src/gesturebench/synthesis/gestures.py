"""The arm and hand gesture rig: a few named arm parameters and finger curls → SMPL-X rotvecs, the
postures and hand shapes built from them, and beat strokes as arm-parameter offsets.

Everything is written for the left arm and hand; the right side is its mirror image (`mirror`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from gesturebench.synthesis.curves import smootherstep

# Arm parameters (radians), in the left arm's convention.
COLLAR, LOWER, FLEX, YAW, TWIST, ELBOW, PRON, WFLEX, WDEV = range(9)
N_ARM = 9
# Collar, shoulder, elbow, wrist joints of the left and right arm.
ARM_JOINTS = ((13, 16, 18, 20), (14, 17, 19, 21))
REST_ARM = np.array([0.0, 1.38, 0.12, 0.0, 0.0, 0.35, -0.3, 0.1, 0.0])  # hanging, elbow soft
BEAT_READY = np.array([0.03, 1.3, 0.35, 0.05, 0.0, 1.15, -0.6, 0.1, 0.0])  # forearm raised
PALM_UP = -1.5  # forearm pronation (PRON) that turns the palm up

# Finger curls (index, middle, pinky, ring, thumb) of the hand shapes; curl is shared by a finger's
# three joints.
RELAXED = np.array([0.30, 0.40, 0.55, 0.48, 0.15])
OPEN = np.array([0.03, 0.03, 0.06, 0.05, 0.0])
POINT = np.array([0.0, 1.35, 1.45, 1.40, 0.7])
BEAT_HAND = np.array([0.35, 0.45, 0.60, 0.52, 0.2])
_DISTAL = np.array([0.8, 1.0, 0.7])  # share of a finger's curl at its three joints
# Index and pinky spread apart (rotation about the palm normal).
_SPREAD_SIGN = np.array([-1.0, 0.0, 1.0, 0.5])
_THUMB_REST = np.array([[0.25, 0.25, 0.15], [0.0, 0.1, -0.2], [0.0, 0.1, -0.2]])
_THUMB_AXIS = np.array([0.0, 0.3, -1.0]) / np.hypot(0.3, 1.0)


@dataclass(frozen=True)
class Stroke:
    """A beat stroke whose downward motion ends (zero velocity) at `time`, on `arms` (0 left, 1
    right)."""

    time: float
    arms: tuple[int, ...]
    amplitude: float


def mirror(rotvec: np.ndarray) -> np.ndarray:
    """The left/right mirror image of axis-angle rotations (reflection through the x = 0 plane)."""
    return rotvec * np.array([1.0, -1.0, -1.0])


def _axis_rotation(axis: int, angle: np.ndarray) -> Rotation:
    rotvec = np.zeros((len(angle), 3))
    rotvec[:, axis] = angle
    return Rotation.from_rotvec(rotvec)


def arm_rotvecs(params: np.ndarray) -> np.ndarray:
    """(T, 4, 3) collar, shoulder, elbow, wrist rotvecs of a left arm from its (T, N_ARM)
    parameters."""
    p = params
    collar = _axis_rotation(2, p[:, COLLAR])
    shoulder = (
        _axis_rotation(1, p[:, YAW])
        * _axis_rotation(0, -p[:, FLEX])
        * _axis_rotation(2, -p[:, LOWER])
        * _axis_rotation(0, p[:, TWIST])
    )
    elbow = _axis_rotation(1, -p[:, ELBOW]) * _axis_rotation(0, p[:, PRON])
    wrist = _axis_rotation(2, -p[:, WFLEX]) * _axis_rotation(1, p[:, WDEV])
    return np.stack([r.as_rotvec() for r in (collar, shoulder, elbow, wrist)], axis=1)


def hand_rotvecs(curl: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """(T, 15, 3) left-hand joint rotvecs (index, middle, pinky, ring, thumb × 3) from finger curls
    (T, 5)."""
    T = len(curl)
    out = np.zeros((T, 5, 3, 3))
    out[:, :4, :, 2] = -curl[:, :4, None] * _DISTAL
    out[:, :4, 0, 1] = spread[:, None] * _SPREAD_SIGN
    out[:, 4] = _THUMB_REST + curl[:, 4, None, None] * _THUMB_AXIS * _DISTAL[:, None]
    return out.reshape(T, 15, 3)


def stroke_offsets(t: np.ndarray, strokes: tuple[Stroke, ...]) -> np.ndarray:
    """(T, 2, N_ARM) arm-parameter offsets of the beat strokes.

    Each stroke lifts the forearm (elbow flexion) over 0.3 s and strikes it down in 0.15 s, stopping
    on the onset; the hand drops at the wrist with the strike; a shoulder component moves forward
    through lift and strike (so the top of the lift is no stop) and eases back over 0.5 s from the
    onset.
    """
    out = np.zeros((len(t), 2, N_ARM))
    for s in strokes:
        lift = smootherstep((t - (s.time - 0.45)) / 0.3)
        strike = smootherstep((t - (s.time - 0.15)) / 0.15)
        forward = smootherstep((t - (s.time - 0.45)) / 0.45)
        back = smootherstep((t - s.time) / 0.5)
        delta = np.zeros((len(t), N_ARM))
        delta[:, ELBOW] = 0.28 * (lift - strike)
        delta[:, FLEX] = 0.12 * (forward - back)
        delta[:, WFLEX] = 0.25 * (strike - back)
        out[:, list(s.arms)] += s.amplitude * delta[:, None]
    return out
