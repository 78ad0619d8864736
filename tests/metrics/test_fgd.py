"""FGD (fgd.py, functional/fgd.py): exact moments with a large mean, DDP, the bootstrap against
recomputation, and EMAGE 2024's square-root failure path. The metric is also tested on the motion
autoencoder with Density and Coverage in test_motion_features.py."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.linalg
import torch

from gesturebench.encoders.representation import REP_DIM
from gesturebench.metrics.fgd import FGD
from gesturebench.metrics.functional.frechet import (
    frechet_distance,
)
from gesturebench.runtime.errors import ConfigError
from gesturebench.stats.bootstrap import Resamples
from tests.distributed import run_distributed
from tests.support.frechet_inputs import offset_features

#: one torch thread here and on the ranks: float64 eigh/svd of the 333-d raw-pose moments take
#: seconds each on two threads of a shared 2-core machine, milliseconds on one
pytestmark = pytest.mark.usefixtures("one_thread")

LATENT = 8


def reference_fgd(x: np.ndarray, y: np.ndarray) -> float:
    """FGD in float64 the textbook way, on data centred first (the offset cancels exactly in
    μx − μy and does not enter the covariances): np.cov and scipy.linalg.sqrtm."""
    mx, my = x.mean(0), y.mean(0)
    sx, sy = np.cov(x - mx, rowvar=False), np.cov(y - my, rowvar=False)
    covmean = scipy.linalg.sqrtm(sx @ sy).real
    return float(((mx - my) ** 2).sum() + np.trace(sx) + np.trace(sy) - 2 * np.trace(covmean))


class GivenFeatures(FGD):
    """FGD reading prepared window features instead of running the encoder: `features[pair.index]`
    is (reference, generated), each (encoder features (n, LATENT), raw window means
    (n, REP_DIM))."""

    def __init__(self, features, **options):
        super().__init__(encoder_config={"latent_dim": LATENT}, **options)
        self.features = features

    def pair_features(self, pair, side):
        feat, raw = self.features[pair.index][side]
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


def filled(seqs, rank: int = 0, world: int = 1, **options) -> GivenFeatures:
    """A `GivenFeatures` updated with this rank's share of `seqs`."""
    metric = GivenFeatures(seqs, **options)
    for i in range(rank, len(seqs), world):
        metric.update(SimpleNamespace(index=i))
    return metric


def evaluate(seqs, rank: int = 0, world: int = 1) -> dict:
    return filled(seqs, rank, world).compute()


def resampled_sets(seqs, resamples: Resamples):
    """Each resample's index and its drawn sequences (repeated ones repeated)."""
    for b, counts in enumerate(resamples.counts):
        yield b, [seqs[s] for s in np.repeat(np.arange(len(seqs)), counts)]


def test_metric_with_a_large_offset_equals_the_float64_computation():
    seqs = sequences()
    got, expected = evaluate(seqs), expected_values(seqs)
    for name in ("fgd", "fgd_raw_pose"):
        assert got[name] == pytest.approx(expected[name], rel=1e-6), name


def _evaluate_on_rank(rank, world, seqs):
    torch.set_num_threads(1)  # as the single process (the worker puts its count back after)
    return evaluate(seqs, rank, world)  # compute() syncs: every rank's partials, stacked


@pytest.mark.slow  # two processes of the DDP pool (tests/distributed.py)
def test_two_process_ddp_with_a_large_offset_equals_one_process():
    seqs = sequences()  # 5 sequences: the ranks hold 3 and 2
    single, ddp = evaluate(seqs), run_distributed(_evaluate_on_rank, seqs)
    expected = expected_values(seqs)
    for name in ("fgd", "fgd_raw_pose"):
        assert ddp[name] == pytest.approx(single[name], rel=1e-9), name
        assert ddp[name] == pytest.approx(expected[name], rel=1e-6), name


def test_bootstrap_with_a_large_offset_equals_recomputation_on_resampled_features():
    """Each replicate equals the textbook float64 FGD of the resampled sequences' windows (the
    same draws, repeated sequences repeated), and drawing every sequence once gives the value."""
    seqs = sequences()
    metric = filled(seqs)
    resamples = Resamples.draw(range(len(seqs)), 6, seed=2)
    boot = metric.bootstrap(resamples)
    for b, drawn in resampled_sets(seqs, resamples):
        expected = reference_fgd(*(np.concatenate([s[i][0] for s in drawn]) for i in (0, 1)))
        assert boot["fgd"][b] == pytest.approx(expected, rel=1e-6)
    once = metric.bootstrap(Resamples(np.arange(len(seqs)), np.ones((1, len(seqs)), int)))
    value = metric.compute()
    for name in ("fgd", "fgd_raw_pose"):
        assert once[name][0] == pytest.approx(value[name], rel=1e-9), name


@pytest.mark.parametrize("offset", [0.0, 0.05])
def test_bootstrap_with_covariance_offset_and_unequal_counts_equals_recomputation(offset):
    """Without ε (the square root's trace taken in the span of the side with fewer windows) and
    with ε = 0.05 (large enough to matter), and, as with EMAGE's encoder, other feature counts
    than window counts: each replicate of both spaces (the 333-d raw pose projected onto its
    span, ε added back for the dropped dimensions) equals `frechet_distance` of the resampled
    features' numpy moments in the full space."""
    rng = np.random.default_rng(4)
    seqs = [
        [(rng.normal(size=(3 + s + i, LATENT)), rng.normal(size=(6 + s, REP_DIM))) for i in (0, 1)]
        for s in range(5)
    ]
    resamples = Resamples.draw(range(len(seqs)), 5, seed=3)
    boot = filled(seqs, covariance_offset=offset).bootstrap(resamples)
    for b, drawn in resampled_sets(seqs, resamples):
        for name, space in (("fgd", 0), ("fgd_raw_pose", 1)):
            sides = [np.concatenate([s[i][space] for s in drawn]) for i in (0, 1)]
            stats = [
                torch.from_numpy(v) for x in sides for v in (x.mean(0), np.cov(x, rowvar=False))
            ]
            expected = float(frechet_distance(*stats, offset=offset))
            assert boot[name][b] == pytest.approx(expected, rel=1e-9, abs=1e-9), (name, b)


# ---------- EMAGE 2024's square-root failure path (sqrt_check=emage2024) ----------


def emage2024_official(gen: np.ndarray, ref: np.ndarray) -> float:
    """EMAGE 2024's `FIDCalculator.frechet_distance(generated, reference)` written out from its
    definition: np.cov, scipy's sqrtm of Σ_gen Σ_ref, retried with 1e-6·I on both where not
    finite, 1e10 where the root's diagonal keeps an imaginary part above 1e-3."""
    s1, s2 = np.cov(gen, rowvar=False), np.cov(ref, rowvar=False)
    diff = gen.mean(0) - ref.mean(0)
    covmean = scipy.linalg.sqrtm(s1 @ s2)
    if not np.isfinite(covmean).all():
        shift = np.eye(len(s1)) * 1e-6
        covmean = scipy.linalg.sqrtm((s1 + shift) @ (s2 + shift))
    if np.iscomplexobj(covmean):
        if not np.allclose(np.diagonal(covmean).imag, 0, atol=1e-3):
            return 1e10
        covmean = covmean.real
    return float(diff @ diff + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean))


def feature_sets(seed: int, windows: int, scale: float = 1.0) -> list:
    """Two sequences of (reference, generated) features: `windows` encoder features a side, of
    spread `scale`."""
    rng = np.random.default_rng(seed)
    return [
        [
            ((rng.normal(size=(windows, LATENT)) + i) * scale, rng.normal(size=(windows, REP_DIM)))
            for i in (0, 1)
        ]
        for _ in range(2)
    ]


def stacked(seqs, side: int) -> np.ndarray:
    return np.concatenate([s[side][0] for s in seqs])


def test_sqrt_check_emage2024_keeps_the_value_where_the_official_root_is_fine():
    seqs = feature_sets(0, 40)
    official = emage2024_official(stacked(seqs, 1), stacked(seqs, 0))
    assert official < 1e10
    metric = filled(seqs, sqrt_check="emage2024")
    assert metric.skip_reason() is None
    assert metric.compute()["fgd"] == pytest.approx(official, rel=1e-6)
    assert metric.compute()["fgd"] == pytest.approx(filled(seqs).compute()["fgd"], rel=1e-12)


def test_sqrt_check_emage2024_gives_no_value_where_the_official_code_returns_1e10():
    # 4 features a side in 8 dimensions (rank-deficient), spread 1e4: scipy's root of the singular
    # product carries imaginary parts of order 1, far above the code's 1e-3
    seqs = feature_sets(0, 2, scale=1e4)
    assert emage2024_official(stacked(seqs, 1), stacked(seqs, 0)) == 1e10
    metric = filled(seqs, sqrt_check="emage2024")
    assert metric.compute() == {"fgd": None, "fgd_raw_pose": None}
    reason = metric.skip_reason()
    assert reason is not None and "returns its 1e10 sentinel" in reason
    exact = filled(seqs).compute()["fgd"]  # the exact trace exists: sqrt_check none reports it
    assert exact is not None and 0 < exact < 1e10


def test_sqrt_check_emage2024_retries_with_the_offset_where_the_first_root_is_not_finite(
    monkeypatch,
):
    # scipy's sqrtm made to fail on every first try (a NaN root), as it can on a singular product:
    # the official code then retries with 1e-6·I on both covariances and keeps that root
    seqs = feature_sets(1, 40)
    real_sqrtm, calls = scipy.linalg.sqrtm, []

    def failing_first(m, *args, **kwargs):
        calls.append(m)
        return np.full_like(m, np.nan) if len(calls) % 2 else real_sqrtm(m, *args, **kwargs)

    monkeypatch.setattr(scipy.linalg, "sqrtm", failing_first)
    official = emage2024_official(stacked(seqs, 1), stacked(seqs, 0))
    assert len(calls) == 2
    calls.clear()
    metric = filled(seqs, sqrt_check="emage2024")
    value = metric.compute()["fgd"]
    assert len(calls) >= 2 and metric.skip_reason() is None
    monkeypatch.setattr(scipy.linalg, "sqrtm", real_sqrtm)
    plain = filled(seqs).compute()["fgd"]
    assert value == pytest.approx(official, rel=1e-6)
    assert value != pytest.approx(plain, rel=1e-9)  # the retried root is the shifted one


def test_sqrt_check_is_checked():
    with pytest.raises(ConfigError, match="needs covariance_offset 0"):
        filled(feature_sets(0, 3), sqrt_check="emage2024", covariance_offset=1e-6)
