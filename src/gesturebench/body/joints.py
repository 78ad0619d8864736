"""SMPL-X joint tree and the joint/vertex index sets the metrics use (docs/metrics.md,
"Conventions")."""

from __future__ import annotations

import numpy as np

# Parent of each of SMPL-X's 55 joints (-1 for the pelvis), in the `smplx` package's joint order.
PARENTS = np.array(
    [
        -1,
        0,
        0,
        0,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        9,
        9,
        12,
        13,
        14,
        16,
        17,
        18,
        19,
        15,
        15,
        15,
        20,
        25,
        26,
        20,
        28,
        29,
        20,
        31,
        32,
        20,
        34,
        35,
        20,
        37,
        38,
        21,
        40,
        41,
        21,
        43,
        44,
        21,
        46,
        47,
        21,
        49,
        50,
        21,
        52,
        53,
    ],
    dtype=np.int64,
)

PELVIS = 0
HEAD = 15
LEFT_SHOULDER, RIGHT_SHOULDER = 16, 17
LEFT_WRIST, RIGHT_WRIST = 20, 21
LEFT_FOOT, RIGHT_FOOT = 10, 11
LEFT_HAND = tuple(range(25, 40))
RIGHT_HAND = tuple(range(40, 55))

# Body+hand joints: 1–21 and 25–54 (51 joints). The pelvis is the root every metric aligns to, so
# its root-aligned position is always 0 and counting it would only dilute MJD, PCK, SRGR and
# Diversity (docs/metrics.md, "Conventions"); jaw and eyes are not body or hand joints.
BODY_HANDS = tuple(range(1, 22)) + LEFT_HAND + RIGHT_HAND
# Upper body: spine, neck, collars, head, shoulders, elbows, wrists.
UPPER = (3, 6, 9, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21)
# Bones rasterised by Dice: from each of these joints to its parent.
DICE_BONES = UPPER + LEFT_HAND + RIGHT_HAND

# The `smplx` package's landmark vertex ids of the feet (heel, big toe, small toe).
LEFT_FOOT_VERTICES = (8846, 5770, 5780)
RIGHT_FOOT_VERTICES = (8635, 8463, 8474)
N_VERTICES = 10475
