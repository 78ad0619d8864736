"""Dice (dice.py, functional/dice.py): rasterisation against a brute-force clipper, hand-worked
squares and bones."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gesturebench.metrics.functional.dice import bone_raster, dice, rasterise_segments

pytestmark = pytest.mark.usefixtures("one_thread")


# ---------------------------------------------------------------- Dice


def liang_barsky_raster(starts: np.ndarray, ends: np.ndarray, g: int, cell: float) -> np.ndarray:
    """Cells whose open interior a segment passes through, plus its end cells: a brute-force check
    over all cells."""
    raster = np.zeros((g, g), dtype=bool)
    i, j = np.meshgrid(np.arange(g), np.arange(g), indexing="ij")
    for p0, p1 in zip(starts / cell + g / 2, ends / cell + g / 2):
        lo, hi = np.zeros((g, g)), np.ones((g, g))
        inside = np.ones((g, g), dtype=bool)
        for axis, k in ((0, i), (1, j)):
            d = p1[axis] - p0[axis]
            if d == 0:
                inside &= (k < p0[axis]) & (p0[axis] < k + 1)
                continue
            t1, t2 = (k - p0[axis]) / d, (k + 1 - p0[axis]) / d
            lo, hi = np.maximum(lo, np.minimum(t1, t2)), np.minimum(hi, np.maximum(t1, t2))
        raster |= inside & (lo < hi)
        for p in (p0, p1):
            c = np.floor(p).astype(int)
            if (c >= 0).all() and (c < g).all():
                raster[c[0], c[1]] = True
    return raster


def test_rasterise_segments_matches_brute_force():
    rng = np.random.default_rng(4)
    starts = rng.uniform(-1.3, 1.3, (60, 2))  # some leave the 2 m square: clipped
    ends = starts + rng.normal(scale=0.4, size=(60, 2))
    ends[:5, 1] = starts[:5, 1]  # horizontal and vertical segments too
    ends[5:10, 0] = starts[5:10, 0]
    ends[10], ends[11] = (
        (5000.0, 0.33),
        (-0.7, -3000.0),
    )  # far outside: only the in-grid part is drawn
    got = rasterise_segments(torch.tensor(starts), torch.tensor(ends), cell=0.1, extent=2.0).numpy()
    expected = liang_barsky_raster(starts, ends, 20, 0.1)
    assert got.shape == (20, 20)
    np.testing.assert_array_equal(got, expected)


def square(g: int, x0: int, y0: int, size: int) -> torch.Tensor:
    r = torch.zeros(g, g, dtype=torch.bool)
    r[x0 : x0 + size, y0 : y0 + size] = True
    return r


def test_dice_of_overlapping_squares():
    a, b = square(40, 0, 0, 10), square(40, 5, 4, 10)  # overlap 5 × 6 = 30 cells of 100 each
    assert dice(a, b) == pytest.approx(2 * 30 / 200)
    assert dice(a, a) == 1.0 and dice(a, square(40, 20, 20, 10)) == 0.0
    # The same squares drawn as stacks of horizontal segments through cell centres (cell 0.05, 2 m:
    # 40 × 40).
    rows = np.arange(10) * 0.05 + 0.025 - 1.0
    starts = np.stack([np.full(10, -1.0 + 0.025), rows], 1)
    ends = np.stack([np.full(10, -1.0 + 0.475), rows], 1)
    drawn = rasterise_segments(torch.tensor(starts), torch.tensor(ends), cell=0.05)
    assert torch.equal(drawn, a)


def test_bone_raster_by_hand():
    """All joints at the pelvis's cell except the left wrist, 0.1 m to the right: 21 cells of one
    row."""
    pelvis = np.array([1.0, 1.0, 1.0])
    offset = np.array([0.0025, 0.0025, 0.0])
    joints = np.tile(pelvis + offset, (1, 55, 1))
    joints[0, 0] = pelvis
    far = joints.copy()
    joints[0, 20] = pelvis + np.array(
        [0.1025, 0.0025, 0.3]
    )  # depth (z) is ignored by the frontal projection
    far[0, 20] = pelvis + np.array([0.0525, 0.0025, -0.2])
    raster = bone_raster(torch.tensor(joints))
    expected = torch.zeros(400, 400, dtype=torch.bool)
    expected[200:221, 200] = True
    assert torch.equal(raster, expected)
    near = bone_raster(torch.tensor(far))
    assert int(near.sum()) == 11
    assert dice(raster, near) == pytest.approx(2 * 11 / (21 + 11))
    # leaves the 2 m square at x = 1 m: clipped at the border
    joints[0, 20] = pelvis + np.array([1.5, 0.0025, 0.0])
    assert int(bone_raster(torch.tensor(joints)).sum()) == 200
