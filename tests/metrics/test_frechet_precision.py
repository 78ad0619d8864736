"""FGD's moments stay exact for features with a large mean: against numpy's float64 covariance and
scipy's sqrtm on centred data, in one process, batch by batch, and across two DDP processes."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch

from gesturebench.encoders.representation import REP_DIM
from gesturebench.metrics.frechet import FGD
from gesturebench.metrics.functional.frechet import (
    batch_moments,
    frechet_distance,
    merge_moments,
    moments,
)
from tests.distributed import run_distributed

pytestmark = pytest.mark.usefixtures("one_thread")

OFFSET = 1e6
LATENT = 8


def reference_fgd(x: np.ndarray, y: np.ndarray) -> float:
    """FGD in float64 the textbook way, on data centred first (the offset cancels exactly in
    μx − μy and does not enter the covariances): np.cov and scipy.linalg.sqrtm."""
    mx, my = x.mean(0), y.mean(0)
    sx, sy = np.cov(x - mx, rowvar=False), np.cov(y - my, rowvar=False)
    covmean = scipy.linalg.sqrtm(sx @ sy).real
    return float(((mx - my) ** 2).sum() + np.trace(sx) + np.trace(sy) - 2 * np.trace(covmean))


def offset_features(seed: int, n: int, dim: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mixing = rng.normal(size=(dim, dim)) / np.sqrt(dim)
    return rng.normal(size=(n, dim)) @ mixing + rng.normal(size=dim) + OFFSET


def pooled_in_batches(x: np.ndarray, sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and covariance of `x` pooled from consecutive batches of `sizes` rows."""
    parts = [batch_moments(torch.from_numpy(p)) for p in np.split(x, np.cumsum(sizes)[:-1])]
    n, mean, scatter = merge_moments(*(torch.stack(column) for column in zip(*parts, strict=True)))
    return mean, scatter / (n - 1)


@pytest.mark.parametrize("sizes", [[400], [1, 2, 397], [150, 0, 250]])
def test_pooled_covariance_with_a_large_offset_equals_numpy(sizes):
    x = offset_features(0, 400, 6)
    mean, cov = pooled_in_batches(x, sizes)
    expected = np.cov(x - x.mean(0), rowvar=False)
    np.testing.assert_allclose(cov.numpy(), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(mean.numpy(), x.mean(0), rtol=1e-12)


def test_sums_lose_the_covariance_at_this_offset():
    # what the merge replaces: Σxxᵀ − nμμᵀ cancels ~1e12-sized terms (the test above can fail)
    x = offset_features(0, 400, 6)
    t = torch.from_numpy(x)
    _, cov = moments(t.sum(0), t.T @ t, len(t))
    expected = np.cov(x - x.mean(0), rowvar=False)
    assert np.abs(cov.numpy() - expected).max() > 1e-4 * np.abs(expected).max()


class GivenFeatures(FGD):
    """FGD reading prepared window features instead of running the encoder: `features[index]` is
    (reference, generated), each (encoder features (n, LATENT), raw window means (n, REP_DIM))."""

    def __init__(self, features):
        super().__init__(encoder_config={"latent_dim": LATENT})
        self.features = features

    def pair_features(self, pair, side):
        feat, raw = self.features[pair][side]
        return torch.from_numpy(raw)[:, None], torch.from_numpy(feat)


def sequences(n_seq: int = 5) -> list:
    """Per sequence, (reference, generated) features with the 1e6 offset, 7-12 windows each."""
    out = []
    for s in range(n_seq):
        n = 7 + s
        sides = [
            (offset_features(100 * s + i, n, LATENT), offset_features(100 * s + 50 + i, n, REP_DIM))
            for i in (0, 1)
        ]
        out.append(sides)
    return out


def expected_values(seqs) -> dict:
    def stacked(side: int, space: int) -> np.ndarray:
        return np.concatenate([s[side][space] for s in seqs])

    return {
        "fgd": reference_fgd(stacked(0, 0), stacked(1, 0)),
        # 333-d from 45 windows: rank-deficient, where sqrtm is inaccurate; the same float64
        # moments go through frechet_distance instead
        "fgd_raw_pose": float(
            frechet_distance(
                *(
                    torch.from_numpy(v)
                    for side in (0, 1)
                    for v in (
                        stacked(side, 1).mean(0),
                        np.cov(stacked(side, 1) - stacked(side, 1).mean(0), rowvar=False),
                    )
                )
            )
        ),
    }


def evaluate(seqs, rank: int = 0, world: int = 1) -> dict:
    metric = GivenFeatures(seqs)
    for i in range(rank, len(seqs), world):
        metric.update(i)
    return metric.compute()


def test_metric_with_a_large_offset_equals_the_float64_computation():
    seqs = sequences()
    got, expected = evaluate(seqs), expected_values(seqs)
    for name in ("fgd", "fgd_raw_pose"):
        assert got[name] == pytest.approx(expected[name], rel=1e-6), name


def _evaluate_on_rank(rank, world, seqs):
    return evaluate(seqs, rank, world)  # compute() syncs: every rank's partials, stacked


def test_two_process_ddp_with_a_large_offset_equals_one_process():
    seqs = sequences()  # 5 sequences: the ranks hold 3 and 2
    single, ddp = evaluate(seqs), run_distributed(_evaluate_on_rank, seqs)
    expected = expected_values(seqs)
    for name in ("fgd", "fgd_raw_pose"):
        assert ddp[name] == pytest.approx(single[name], rel=1e-9), name
        assert ddp[name] == pytest.approx(expected[name], rel=1e-6), name
