"""Random pose sequences, their pooled Fréchet distance by numpy and scipy, and a metric run over
them: the helpers of test_fd_g.py, test_fd_k.py and the harness's FD_g and FD_k cases
(tester.py)."""

from __future__ import annotations

import numpy as np

from gesturebench.data.records import Motion
from gesturebench.metrics.fd_g import PoseFrechet
from gesturebench.metrics.pair import MotionPair
from tests.metrics.genea import pose_pair
from tests.metrics.references import scipy_frechet


def motion(poses: np.ndarray) -> Motion:
    t = len(poses)
    return Motion(poses, np.zeros((t, 3)), np.zeros(300), np.zeros((t, 100)))


def pairs(n_seq: int = 4, offset: float = 0.0) -> list[MotionPair]:
    """Smooth random pose sequences (random walks) of 300–420 frames, generated = reference
    perturbed and scaled, all shifted by `offset`."""
    rng = np.random.default_rng(7)
    out = []
    for i in range(n_seq):
        t = 300 + 40 * i
        ref = rng.normal(scale=0.05, size=(t, 165)).cumsum(0) + offset
        gen = 1.3 * ref + rng.normal(scale=0.05, size=(t, 165)) - 0.3 * offset
        out.append(pose_pair(i, motion(gen), motion(ref)))
    return out


def expected(seqs: list[MotionPair], kinematic: bool) -> float:
    """scipy_frechet on all frames (or frame differences) pooled, reference against generated."""

    def stack(side: str) -> np.ndarray:
        frames = [getattr(p, side).poses.astype(np.float64) for p in seqs]
        return np.concatenate([np.diff(f, axis=0) if kinematic else f for f in frames])

    return scipy_frechet(stack("reference"), stack("generated"))


def evaluate(kind: type[PoseFrechet], seqs, rank: int = 0, world: int = 1) -> float | None:
    metric = kind()
    for i in range(rank, len(seqs), world):
        metric.update(seqs[i])
    return metric.compute()[metric.name]
