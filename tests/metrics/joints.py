"""Random joint sets, pairs of them and the brute-force MJD and PCK loop: the helpers of
test_mjd.py, test_pck.py and of the harness's MJD and PCK cases (tester.py)."""

from __future__ import annotations

import numpy as np
import torch

from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion
from gesturebench.metrics.pair import MotionPair

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


def make_pair(index: int, seed: int) -> MotionPair:
    t = 10 + index
    motion = Motion(np.zeros((t, 165)), np.zeros((t, 3)), np.zeros(300), np.zeros((t, 100)))
    gen, ref = random_joints(seed, t).float(), random_joints(seed + 50, t).float()
    return MotionPair(
        index, f"seq{index}", motion, motion, BodyOutput(gen, None), BodyOutput(ref, None)
    )
