"""The Fréchet distance (functional/frechet.py) against a closed form and scipy's sqrtm; the FGD
class is tested with Density and Coverage in test_motion_features.py."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.linalg
import torch

from gesturebench.encoders.representation import REP_DIM
from gesturebench.errors import ConfigError
from gesturebench.metrics.frechet import FGD
from gesturebench.metrics.functional.frechet import (
    batch_moments,
    frechet_distance,
    merge_moments,
    moments,
)
from gesturebench.stats.bootstrap import Resamples
from tests.distributed import run_distributed
from tests.metrics.references import scipy_frechet

pytestmark = pytest.mark.usefixtures("one_thread")


def stats(x: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and covariance through the metric's sufficient statistics (Σx, Σxxᵀ, n)."""
    t = torch.from_numpy(x)
    return moments(t.sum(0), t.T @ t, len(t))


def test_frechet_closed_form_for_diagonal_gaussians():
    rng = np.random.default_rng(0)
    mu_a, mu_b = rng.normal(size=7), rng.normal(size=7)
    a, b = rng.uniform(0.1, 3, 7), rng.uniform(0.1, 3, 7)
    expected = ((mu_a - mu_b) ** 2).sum() + ((np.sqrt(a) - np.sqrt(b)) ** 2).sum()
    t = torch.from_numpy
    got = frechet_distance(t(mu_a), torch.diag(t(a)), t(mu_b), torch.diag(t(b)))
    assert float(got) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_frechet_matches_scipy_sqrtm_on_full_rank_features(seed):
    rng = np.random.default_rng(seed)
    d = 16
    x = rng.normal(size=(600, d)) @ rng.normal(size=(d, d)) + rng.normal(size=d)
    y = rng.normal(size=(400, d)) @ rng.normal(size=(d, d)) * 0.7 + rng.normal(size=d)
    mx, sx = stats(x)
    np.testing.assert_allclose(sx.numpy(), np.cov(x, rowvar=False), rtol=1e-9, atol=1e-9)
    got = float(frechet_distance(mx, sx, *stats(y)))
    assert got == pytest.approx(scipy_frechet(x, y), rel=1e-6)


def emage2025_fgd(x: np.ndarray, y: np.ndarray, eps: float = 1e-6) -> float:
    """EMAGE's 2025 formula, written out with numpy/scipy: εI added to both covariances inside
    sqrtm only, the traces unshifted."""
    s1, s2 = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    diff = x.mean(0) - y.mean(0)
    offset = np.eye(len(s1)) * eps
    covmean = scipy.linalg.sqrtm((s1 + offset) @ (s2 + offset)).real
    return float(diff @ diff + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean))


def test_covariance_offset_is_emage2025s_formula():
    """Features of spread ~1e-3 (covariance eigenvalues near the 1e-6 offset): the offset moves
    the value well beyond the tolerance, and matches the formula written with scipy."""
    rng = np.random.default_rng(7)
    d = 12
    x = (rng.normal(size=(500, d)) @ rng.normal(size=(d, d))) * 1e-3
    y = (rng.normal(size=(400, d)) @ rng.normal(size=(d, d))) * 7e-4 + 1e-3
    got = float(frechet_distance(*stats(x), *stats(y), offset=1e-6))
    assert got == pytest.approx(emage2025_fgd(x, y), rel=1e-7)
    plain = float(frechet_distance(*stats(x), *stats(y)))
    assert plain == pytest.approx(scipy_frechet(x, y), rel=1e-7)
    assert abs(got - plain) > 1e-3 * plain


def test_frechet_of_identical_features_is_zero():
    x = np.random.default_rng(3).normal(size=(300, 32)) * 5 + 10
    mu, cov = stats(x)
    assert float(frechet_distance(mu, cov, mu, cov)) <= 1e-9 * float(cov.trace())


def test_frechet_rank_deficient_is_finite_and_at_least_the_mean_term():
    rng = np.random.default_rng(4)
    x, y = (
        rng.normal(size=(10, 64)),
        rng.normal(size=(12, 64)) + 0.3,
    )  # fewer samples than dimensions
    (mx, sx), (my, sy) = stats(x), stats(y)
    d = float(frechet_distance(mx, sx, my, sy))
    mean_term = float(((mx - my) ** 2).sum())
    assert np.isfinite(d) and d >= mean_term - 1e-9  # FD = ‖Δμ‖² + W₂²(centred Gaussians) ≥ ‖Δμ‖²


def test_frechet_rank_deficient_does_not_depend_on_summation_order():
    """Sums accumulated in pieces (as across DDP ranks) give the same distance: null eigenvalues at
    round-off level must not leak their square roots into the result."""
    rng = np.random.default_rng(5)
    basis = rng.normal(size=(20, 333))
    x = torch.from_numpy(rng.normal(size=(70, 20)) @ basis * 0.1 + 5 * rng.normal(size=333))
    y = torch.from_numpy(rng.normal(size=(75, 20)) @ basis * 0.12 + 5 * rng.normal(size=333))

    def pooled(t, parts):
        pieces = t.tensor_split(parts)
        return moments(sum(p.sum(0) for p in pieces), sum(p.T @ p for p in pieces), len(t))

    whole = float(frechet_distance(*pooled(x, 1), *pooled(y, 1)))
    split = float(frechet_distance(*pooled(x, 3), *pooled(y, 2)))
    assert split == pytest.approx(whole, rel=1e-12)


# ---------- FGD's moments stay exact for features with a large mean ----------


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
    return evaluate(seqs, rank, world)  # compute() syncs: every rank's partials, stacked


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
    with pytest.raises(ConfigError, match="sqrt_check must be one of"):
        filled(feature_sets(0, 3), sqrt_check="scipy")
    with pytest.raises(ConfigError, match="needs covariance_offset 0"):
        filled(feature_sets(0, 3), sqrt_check="emage2024", covariance_offset=1e-6)
