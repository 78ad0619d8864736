"""FD_g and FD_k (pose_frechet.py) against numpy moments with scipy's sqrtm on the pooled frames,
across DDP ranks, and against the GENEA Leaderboard's code on the real BEAT2 sample (fixture)."""

from __future__ import annotations

import numpy as np
import pytest

from gesturebench.data.records import Motion
from gesturebench.metrics.pair import MotionPair
from gesturebench.metrics.pose_frechet import PoseDifferenceFrechet, PoseFrechet
from tests.distributed import run_distributed
from tests.metrics.genea import GENEA, genea_motions, pose_pair
from tests.metrics.references import scipy_frechet

pytestmark = pytest.mark.usefixtures("one_thread")


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


@pytest.mark.parametrize("kind", [PoseFrechet, PoseDifferenceFrechet])
def test_pooled_frames_equal_numpy_and_scipy(kind):
    seqs = pairs()
    got = evaluate(kind, seqs)
    assert got == pytest.approx(expected(seqs, kind is PoseDifferenceFrechet), rel=1e-6)
    assert got > 0.1  # the perturbation is far from the reference


def test_names_and_identical_motion():
    assert PoseFrechet().name == "fd_g" and PoseDifferenceFrechet().name == "fd_k"
    same = [pose_pair(p.index, p.reference, p.reference) for p in pairs(2)]
    for kind in (PoseFrechet, PoseDifferenceFrechet):
        assert evaluate(kind, same) == pytest.approx(0.0, abs=1e-8)


def test_too_few_frames_is_skipped_with_a_reason():
    metric = PoseDifferenceFrechet()
    one = motion(np.zeros((2, 165)))  # one difference per side
    metric.update(pose_pair(0, one, one))
    assert metric.compute() == {"fd_k": None}
    assert "at least 2" in (metric.skip_reason() or "")


def _on_rank(rank, world, kind, seqs):
    return evaluate(kind, seqs, rank, world)


@pytest.mark.parametrize("kind", [PoseFrechet, PoseDifferenceFrechet])
def test_two_process_ddp_with_a_large_offset_equals_one_process(kind):
    seqs = pairs(5, offset=1e3)  # the ranks hold 3 and 2 sequences
    single, ddp = evaluate(kind, seqs), run_distributed(_on_rank, kind, seqs)
    assert ddp == pytest.approx(single, rel=1e-9)
    assert single == pytest.approx(expected(seqs, kind is PoseDifferenceFrechet), rel=1e-6)


@pytest.mark.parametrize("kind", [PoseFrechet, PoseDifferenceFrechet])
def test_real_sample_equals_the_leaderboard_code(beat2_sample, kind):
    reference, generated = genea_motions(beat2_sample)
    for model, gen in generated.items():
        metric = kind()
        metric.update(pose_pair(0, gen, reference))
        official = GENEA["values"][metric.name][model]
        assert metric.compute()[metric.name] == pytest.approx(official, abs=1e-6), model
    # the rolled motion holds the same frames: FD_g ≈ 0; the perturbation is clearly nonzero
    assert GENEA["values"][metric.name]["perturbed"] > 0.1
