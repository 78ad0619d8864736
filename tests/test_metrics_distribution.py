"""FGD, Density and Coverage: the pure maths against scipy / prdc, and the metric classes (states,
DDP, encoder)."""

from __future__ import annotations

import dataclasses
import hashlib
import re

import numpy as np
import pytest
import scipy.linalg
import torch
from prdc import compute_prdc

from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion
from gesturebench.encoders.checkpoint import motion_ae_path, save_motion_ae
from gesturebench.encoders.motion_ae import MotionAutoencoder
from gesturebench.encoders.motion_ae_training import MotionAEConfig
from gesturebench.errors import CheckpointError
from gesturebench.metrics.frechet import FGD
from gesturebench.metrics.functional.frechet import frechet_distance, moments
from gesturebench.metrics.functional.prdc import coverage, density, knn_radii
from gesturebench.metrics.pair import MotionPair
from gesturebench.metrics.prdc import Coverage, Density
from tests.distributed import run_distributed
from tests.helpers import toy_context
from tests.test_motion_ae import mixing, smooth_motion

pytestmark = pytest.mark.usefixtures("one_thread")

# ---------- Fréchet distance ----------


def scipy_frechet(x: np.ndarray, y: np.ndarray) -> float:
    """The textbook computation (as in the FID/FGD reference code): numpy moments and scipy's
    sqrtm."""
    mu1, mu2 = x.mean(0), y.mean(0)
    s1, s2 = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    covmean = scipy.linalg.sqrtm(s1 @ s2).real
    return float(((mu1 - mu2) ** 2).sum() + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean))


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


# ---------- Density / Coverage ----------


@pytest.mark.parametrize(
    "seed,k,n,m", [(0, 5, 200, 150), (1, 3, 120, 300), (2, 1, 50, 50), (3, 7, 301, 99)]
)
def test_density_coverage_match_prdc_package(seed, k, n, m):
    rng = np.random.default_rng(seed)
    real = rng.normal(size=(n, 8))
    fake = rng.normal(size=(m, 8)) * 1.2 + 0.3
    ref = compute_prdc(real, fake, nearest_k=k)
    r, f = torch.from_numpy(real), torch.from_numpy(fake)
    for chunk in (7, 4096):  # chunking must not change anything
        assert density(r, f, k, chunk) == pytest.approx(ref["density"], abs=1e-12)
        assert coverage(r, f, k, chunk) == pytest.approx(ref["coverage"], abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_density_coverage_of_features_equal_to_the_reference_are_exactly_one(seed):
    # Ground truth: every generated feature is a reference feature. Each ball then holds its centre
    # and the k-1 nearer neighbours (the k-th lies on the radius, not inside), so Density = Coverage
    # = 1 exactly.
    real = (
        torch.randn(600, 32, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 3
        + 1
    )
    assert density(real, real.clone(), k=5, chunk_size=128) == 1.0
    assert coverage(real, real.clone(), k=5, chunk_size=128) == 1.0


def test_knn_radii_hand_worked_and_too_few_points():
    x = torch.tensor([[0.0], [1.0], [3.0], [7.0]])
    assert knn_radii(x, 1, chunk_size=3).tolist() == [1.0, 1.0, 2.0, 4.0]
    assert knn_radii(x, 2, chunk_size=3).tolist() == [3.0, 2.0, 3.0, 6.0]
    with pytest.raises(ValueError, match="more than 4"):
        knn_radii(x, 4)


# ---------- metric classes with a tiny (untrained, fixed) encoder ----------

TINY = dataclasses.asdict(MotionAEConfig(hidden_dim=16, latent_dim=8, window=32, hop=16))
ENCODER_CONFIG = {"hidden_dim": 16, "latent_dim": 8}


def tiny_checkpoint(checkpoints_dir) -> str:
    torch.manual_seed(0)
    module = MotionAutoencoder(hidden_dim=16, latent_dim=8)
    module.set_normalisation(torch.zeros(333), torch.full((333,), 0.5))
    return save_motion_ae(module, motion_ae_path(checkpoints_dir, "toy"), TINY, {})


def motions(n: int, seed: int = 0) -> list[Motion]:
    rng, mix = np.random.default_rng(seed), mixing()
    return [smooth_motion(rng, int(rng.integers(90, 200)), mix) for _ in range(n)]


def pair(i: int, generated: Motion, reference: Motion) -> MotionPair:
    body = BodyOutput(torch.zeros(reference.n_frames, 55, 3), None)
    return MotionPair(i, f"s{i}", generated, reference, body, body)


def mean_pose_motions(refs: list[Motion]) -> list[Motion]:
    """The references' overall mean pose held still (as the mean_pose baseline), one per
    reference."""
    pose = np.concatenate([m.poses for m in refs]).mean(0)
    trans = np.concatenate([m.trans for m in refs]).mean(0)
    return [
        Motion(
            np.tile(pose, (m.n_frames, 1)), np.tile(trans, (m.n_frames, 1)), m.betas, m.expressions
        )
        for m in refs
    ]


def make_metrics() -> dict:
    return {
        "fgd": FGD(encoder_config=ENCODER_CONFIG),
        "density": Density(encoder_config=ENCODER_CONFIG),
        "coverage": Coverage(encoder_config=ENCODER_CONFIG),
    }


def evaluate(
    checkpoints_dir, gens: list[Motion], refs: list[Motion], rank: int = 0, world: int = 1
) -> dict:
    metrics = make_metrics()
    for m in metrics.values():
        m.prepare(toy_context(checkpoints_dir))
    for i in range(rank, len(refs), world):
        for m in metrics.values():
            m.update(pair(i, gens[i], refs[i]))
    return {k: v for m in metrics.values() for k, v in m.compute().items()}


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    path = tmp_path_factory.mktemp("checkpoints")
    return path, tiny_checkpoint(path)


def test_metric_values_equal_the_functional_maths_on_extracted_features(ckpt):
    ckpt_dir, _ = ckpt
    refs, gens = motions(5, 0), motions(5, 1)
    values = evaluate(ckpt_dir, gens, refs)
    probe = FGD(encoder_config=ENCODER_CONFIG)
    probe.prepare(toy_context(ckpt_dir))
    feats = {
        k: np.concatenate([probe.encode(m)[1].numpy() for m in ms])
        for k, ms in (("ref", refs), ("gen", gens))
    }
    raw = {
        k: np.concatenate([probe.encode(m)[0].mean(1).double().numpy() for m in ms])
        for k, ms in (("ref", refs), ("gen", gens))
    }
    assert feats["ref"].shape[1] == 8 and raw["ref"].shape[1] == 333
    assert values["fgd"] == pytest.approx(scipy_frechet(feats["ref"], feats["gen"]), rel=1e-6)
    # 333-d raw features from ~40 windows: rank-deficient; compare to the same maths from numpy
    # moments
    t = torch.from_numpy
    rm, rg = raw["ref"], raw["gen"]
    expected_raw = frechet_distance(
        t(rm.mean(0)), t(np.cov(rm, rowvar=False)), t(rg.mean(0)), t(np.cov(rg, rowvar=False))
    )
    assert values["fgd_raw_pose"] == pytest.approx(float(expected_raw), rel=1e-6)
    ref = compute_prdc(feats["ref"], feats["gen"], nearest_k=5)
    assert values["density"] == pytest.approx(ref["density"], abs=1e-12)
    assert values["coverage"] == pytest.approx(ref["coverage"], abs=1e-12)


def test_ground_truth_itself_other_real_motion_and_a_static_motion(ckpt):
    ckpt_dir, _ = ckpt
    refs = motions(10, 2)
    same = evaluate(ckpt_dir, refs, refs)
    assert same["fgd"] == pytest.approx(0.0, abs=1e-9) and same["fgd_raw_pose"] == pytest.approx(
        0.0, abs=1e-7
    )
    assert same["coverage"] == 1.0
    real = evaluate(ckpt_dir, motions(10, 12), refs)  # other draws of the same distribution
    static = evaluate(ckpt_dir, mean_pose_motions(refs), refs)
    assert real["coverage"] >= 0.9 and static["coverage"] <= 0.1
    assert static["fgd"] > 10 * real["fgd"] and static["fgd_raw_pose"] > 5 * real["fgd_raw_pose"]


def _evaluate_on_rank(rank, world, ckpt_dir, gens, refs):
    torch.set_num_threads(
        1
    )  # as the single process: float32 convolutions then give identical features
    return evaluate(ckpt_dir, gens, refs, rank, world)


def test_two_process_ddp_equals_one_process(ckpt):
    ckpt_dir, _ = ckpt
    refs, gens = motions(5, 3), motions(5, 4)  # odd: the ranks hold 3 and 2 sequences
    single = evaluate(ckpt_dir, gens, refs)
    ddp = run_distributed(_evaluate_on_rank, ckpt_dir, gens, refs)
    assert set(ddp) == set(single) == {"fgd", "fgd_raw_pose", "density", "coverage"}
    for k in single:
        assert ddp[k] == pytest.approx(single[k], rel=1e-9, abs=1e-12), k


def test_provenance_options_and_windows_come_from_the_checkpoint(ckpt):
    ckpt_dir, sha = ckpt
    m = Coverage(encoder_config=ENCODER_CONFIG)
    m.prepare(toy_context(ckpt_dir))
    prov = m.provenance()["motion_ae"]
    path = motion_ae_path(ckpt_dir, "toy")
    assert prov["sha256"] == sha == hashlib.sha256(path.read_bytes()).hexdigest()
    assert prov["path"] == str(path) and prov["config"] == TINY
    assert m.options() == {"encoder": "motion_ae", "window": 32, "hop": 16, "dim": 8, "k": 5}
    assert m.encode(motions(1)[0])[0].shape[1:] == (32, 333)


def test_missing_encoder_without_auto_train_names_the_command(tmp_path):
    with pytest.raises(
        CheckpointError,
        match=re.escape("python launch.py task=train_encoder encoder=motion_ae dataset=toy"),
    ):
        FGD().prepare(toy_context(tmp_path))
    with pytest.raises(RuntimeError, match="prepare"):
        Density().update(pair(0, *motions(2)))


def test_latent_dim_mismatch_is_a_checkpoint_error(ckpt):
    with pytest.raises(CheckpointError, match="latent_dim=8"):
        FGD().prepare(toy_context(ckpt[0]))


def test_too_few_windows_give_none_with_a_reason(ckpt):
    fgd, cov = FGD(encoder_config=ENCODER_CONFIG), Coverage(encoder_config=ENCODER_CONFIG)
    assert (
        fgd.compute() == {"fgd": None, "fgd_raw_pose": None}
        and "at least 2 windows" in fgd.skip_reason()
    )
    cov.prepare(toy_context(ckpt[0]))
    m = motions(1)[0].frames(0, 40)  # one window: fewer than k + 1 reference windows
    cov.update(pair(0, m, m))
    assert cov.compute() == {"coverage": None} and "more than k=5" in cov.skip_reason()


def test_fgd_density_coverage_encode_each_motion_once_per_pair(ckpt):
    ckpt_dir, _ = ckpt
    metrics = make_metrics()
    calls = []
    for m in metrics.values():
        m.prepare(toy_context(ckpt_dir))
        real = m.encoder.features
        m.encoder.features = lambda w, real=real: calls.append(w.shape[0]) or real(w)
    (ref,), (gen,) = motions(1, 0), motions(1, 1)
    p = pair(0, gen, ref)
    for m in metrics.values():
        m.update(p)
    assert (
        len(calls) == 2
    )  # the reference's and the generated motion's windows, once for all three metrics
    assert torch.equal(metrics["density"].ref_features[0], metrics["coverage"].ref_features[0])
