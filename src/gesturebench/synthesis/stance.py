"""Standing legs: two-bone IK that keeps the ankles at fixed world positions while the pelvis moves.

It solves on the procedural body's rest skeleton (`body.procedural.REST_JOINTS`), the body the
metrics pose, so the feet it plants stay planted there. With the real SMPL-X model or other betas
the bone lengths differ slightly and the feet may slide by millimetres.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from gesturebench.body.procedural import REST_JOINTS

LEGS = ((1, 4, 7), (2, 5, 8))  # hip, knee, ankle of the left and right leg


def _align(a: np.ndarray, b: np.ndarray) -> Rotation:
    """The smallest rotations taking the fixed vector `a` (3,) onto each row of `b` (T,3)."""
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    axis = np.cross(a, b)
    sin = np.linalg.norm(axis, axis=-1, keepdims=True)
    return Rotation.from_rotvec(axis / np.maximum(sin, 1e-12) * np.arctan2(sin, b @ a[:, None]))


def leg_ik(
    root: Rotation, pelvis: np.ndarray, ankles: np.ndarray, foot: Rotation, forward: np.ndarray
) -> dict[int, np.ndarray]:
    """Hip, knee and ankle rotvecs that put each ankle at its fixed world position with the foot at
    `foot`.

    `pelvis` (T,3) is the pelvis joint's world position, `root` its rotation, `ankles` (2,3) the
    left and right ankle targets. The knee lies in the plane of the hip–ankle line and `forward`.
    """
    J = REST_JOINTS
    out = {}
    for (hip, knee, ankle), target in zip(LEGS, ankles, strict=True):
        h = pelvis + root.apply(J[hip] - J[0])
        thigh0, shin0 = J[knee] - J[hip], J[ankle] - J[knee]
        l1, l2 = np.linalg.norm(thigh0), np.linalg.norm(shin0)
        to_ankle = target - h
        d = np.minimum(np.linalg.norm(to_ankle, axis=-1, keepdims=True), 0.9999 * (l1 + l2))
        u = to_ankle / np.linalg.norm(to_ankle, axis=-1, keepdims=True)
        along = (l1**2 - l2**2 + d**2) / (2 * d)
        off = np.sqrt(np.maximum(l1**2 - along**2, 0.0))
        pole = forward - (u @ forward)[:, None] * u
        pole /= np.linalg.norm(pole, axis=-1, keepdims=True)
        knee_pos = h + along * u + off * pole
        thigh = _align(thigh0, knee_pos - h)
        shin = _align(shin0, target - knee_pos)
        out[hip] = (root.inv() * thigh).as_rotvec()
        out[knee] = (thigh.inv() * shin).as_rotvec()
        out[ankle] = (shin.inv() * foot).as_rotvec()
    return out
