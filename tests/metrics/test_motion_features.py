"""FGD, Density and Coverage as metric classes on the motion autoencoder's features
(motion_features.py, fgd.py, density.py, coverage.py): values equal the functional maths,
provenance, checkpoint errors (two-process DDP: the harness, tests/metrics/tester.py)."""

from __future__ import annotations

import dataclasses
import hashlib
import re

import numpy as np
import pytest
import torch
from prdc import compute_prdc

from gesturebench.data.records import Motion
from gesturebench.encoders.checkpoint import motion_ae_path
from gesturebench.encoders.emage_fgd import EmageFGDEncoder
from gesturebench.metrics.coverage import Coverage
from gesturebench.metrics.density import Density
from gesturebench.metrics.emage_eval_files import FGD_ENCODER as WEIGHTS
from gesturebench.metrics.fgd import FGD
from gesturebench.metrics.functional.frechet import frechet_distance
from gesturebench.runtime.errors import CheckpointError
from tests.emage_fgd_support import released_state
from tests.helpers import toy_context
from tests.metrics.references import scipy_frechet
from tests.support.feature_metrics import ENCODER_CONFIG, TINY, make_metrics, pair
from tests.support.smooth_motions import motions

pytestmark = pytest.mark.usefixtures("one_thread")


# ---------- metric classes with a tiny (untrained, fixed) encoder ----------


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
        and "at least 2 features" in fgd.skip_reason()
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


# ---------- EMAGE's released FGD encoder (seeded weights in the released layout) ----------


@pytest.fixture(scope="module")
def emage_ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("checkpoints")
    path = root / WEIGHTS.folder / WEIGHTS.files[0]
    path.parent.mkdir(parents=True)
    torch.save({"model_state": released_state(7)}, path)
    return root, hashlib.sha256(path.read_bytes()).hexdigest()


def test_emage_encoder_features(emage_ckpt):
    root, sha = emage_ckpt
    context = dataclasses.replace(toy_context(root), dataset_name="beat2")
    refs, gens = motions(6, 5), motions(6, 6)
    metrics = {
        "fgd": FGD(covariance_offset=1e-6, encoder="emage"),
        "density": Density(k=3, encoder="emage"),
        "coverage": Coverage(k=3, encoder="emage"),
    }
    for m in metrics.values():
        m.prepare(context)
        for i, (g, r) in enumerate(zip(gens, refs, strict=True)):
            m.update(pair(i, g, r))
    values = {k: v for m in metrics.values() for k, v in m.compute().items()}
    encoder = EmageFGDEncoder()
    encoder.load_released(released_state(7), "seeded")
    feats = {
        k: np.concatenate(
            [encoder.features(torch.as_tensor(m.poses, dtype=torch.float32)).numpy() for m in ms]
        ).astype(np.float64)
        for k, ms in (("ref", refs), ("gen", gens))
    }
    n_frames = sum(m.n_frames // 32 * 32 // 16 for m in refs)
    assert feats["ref"].shape == (n_frames, 240)
    t = torch.from_numpy
    expected = frechet_distance(
        *(
            t(f.mean(0)) if j == 0 else t(np.cov(f, rowvar=False))
            for f in feats.values()
            for j in (0, 1)
        ),
        offset=1e-6,
    )
    assert values["fgd"] == pytest.approx(float(expected), rel=1e-6)
    prdc = compute_prdc(feats["ref"], feats["gen"], nearest_k=3)
    assert values["density"] == pytest.approx(prdc["density"], abs=1e-9)
    assert values["coverage"] == pytest.approx(prdc["coverage"], abs=1e-9)
    fgd = metrics["fgd"]
    assert fgd.options()["encoder"] == "emage" and fgd.options()["dim"] == 240
    prov = fgd.provenance()["emage_fgd"]
    assert prov["sha256"] == sha and prov["weights_source"] == "checkpoints"


def test_motion_ae_is_the_default_and_emage_an_option(ckpt, emage_ckpt):
    m = FGD(encoder_config=ENCODER_CONFIG)
    m.prepare(toy_context(ckpt[0]))
    assert m.options()["encoder"] == "motion_ae"
    e = Coverage(encoder="emage", weights=str(emage_ckpt[0] / WEIGHTS.folder / WEIGHTS.files[0]))
    e.prepare(toy_context(ckpt[0]))
    assert e.provenance()["emage_fgd"]["weights_source"] == "configured"
