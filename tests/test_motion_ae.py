"""Motion representation, windows, and the motion autoencoder: training, checkpoint round trip,
errors."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest
import torch
from scipy.spatial.transform import Rotation

from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.encoders.checkpoint import load_motion_ae, motion_ae_path
from gesturebench.encoders.motion_ae_training import (
    MotionAEConfig,
    reconstruction_errors,
)
from gesturebench.encoders.representation import (
    REP_DIM,
    motion_representation,
    root_velocity,
    rotation_6d,
    sliding_windows,
)
from gesturebench.runtime.errors import CheckpointError, ConfigError
from tests.support.smooth_motions import mixing, smooth_motion

pytestmark = pytest.mark.usefixtures("one_thread")


def records(seed: int, n: int, n_frames: int) -> list[SequenceRecord]:
    rng, mix = np.random.default_rng(seed), mixing()
    return [SequenceRecord(f"s{seed}_{i}", 1, smooth_motion(rng, n_frames, mix)) for i in range(n)]


def test_rotation_6d_matches_scipy_on_real_beat2_poses(beat2_sample):
    poses = (
        np.load(beat2_sample / "2_scott_0_1_1.npz")["poses"][::50].reshape(-1, 3).astype(np.float64)
    )
    expected = Rotation.from_rotvec(poses).as_matrix()[:, :2, :].reshape(-1, 6)
    got = rotation_6d(torch.from_numpy(poses)).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_representation_layout_and_velocity():
    rng = np.random.default_rng(1)
    poses = rng.normal(0, 1, (5, 165))
    trans = np.array([[0.0, 1.0, 0.0]]) + np.arange(5)[:, None] * np.array([[0.1, 0.0, -0.2]])
    rep = motion_representation(
        Motion(poses, trans, np.zeros(10), np.zeros((5, 100)), fps=30)
    ).numpy()
    assert rep.shape == (5, REP_DIM) == (5, 333)
    mats = Rotation.from_rotvec(poses.reshape(-1, 3)).as_matrix().reshape(5, 55, 3, 3)
    np.testing.assert_allclose(rep[:, :330], mats[:, :, :2, :].reshape(5, 330), atol=1e-5)
    np.testing.assert_allclose(
        rep[:, 330:], np.tile([3.0, 0.0, -6.0], (5, 1)), atol=1e-5
    )  # m/s, frame 0 repeated
    assert torch.equal(root_velocity(torch.ones(1, 3), 30), torch.zeros(1, 3))


def test_sliding_windows_positions_and_padding():
    rep = torch.arange(200.0)[:, None].expand(200, 4)
    w = sliding_windows(rep, 64, 32)
    assert w.shape == (5, 64, 4)  # starts 0, 32, 64, 96, 128; frames 192..199 dropped
    for i in range(5):
        assert torch.equal(w[i], rep[32 * i : 32 * i + 64])
    short = sliding_windows(rep[:10], 64, 32)
    assert short.shape == (1, 64, 4)
    assert torch.equal(short[0, :10], rep[:10]) and bool((short[0, 10:] == 9.0).all())
    assert sliding_windows(rep[:64], 64, 32).shape[0] == 1
    assert sliding_windows(rep[:0], 64, 32).shape == (0, 64, 4)


def test_config_rejects_unknown_keys_and_bad_windows():
    with pytest.raises(TypeError, match="latent_dims"):
        MotionAEConfig.coerce({"latent_dims": 3})
    with pytest.raises(ConfigError, match="window=30"):
        MotionAEConfig(window=30)


TOY = {
    "window": 32,
    "hop": 16,
    "train_hop": 8,
    "batch_size": 32,
    "max_steps": 150,
    "patience": 50,
    "lr": 3e-3,
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory, one_thread):
    """A small encoder trained on synthetic motion through the auto-training path."""
    ckpt_dir = tmp_path_factory.mktemp("checkpoints")
    splits = {"train": records(0, 6, 400), "val": records(1, 2, 300)}
    module, info = MotionAEConfig.coerce(TOY).load_or_train(
        ckpt_dir, "toy", splits.__getitem__, True
    )
    return module, info, splits, ckpt_dir


def test_training_leaves_torch_determinism_off(trained):
    """Lightning's `deterministic=True` must not outlive the fit: evaluation follows in the same
    process."""
    assert not torch.are_deterministic_algorithms_enabled()
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ


def val_windows(splits, i=None):
    recs = splits["val"] if i is None else splits["val"][i : i + 1]
    return torch.cat(
        [sliding_windows(motion_representation(r.motion), TOY["window"], TOY["hop"]) for r in recs]
    )


def test_encoder_reconstructs_far_better_than_the_mean_pose(trained):
    module, _, splits, _ = trained
    val = val_windows(splits)
    err = reconstruction_errors(module, val)
    assert err["recon_mse"] < 0.25 * err["mean_pose_mse"], err
    feats = module.features(val)
    assert feats.shape == (len(val), 128) and torch.isfinite(feats).all()


def test_checkpoint_is_a_plain_dict_with_its_hash_and_config_beside(trained):
    module, info, splits, ckpt_dir = trained
    path = motion_ae_path(ckpt_dir, "toy")
    assert info["path"] == str(path)
    assert info["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    payload = torch.load(path, weights_only=True)
    assert set(payload) == {"format", "state_dict", "hparams", "config"}  # no wall time
    assert {"mean", "std"} <= set(payload["state_dict"])
    meta = json.loads(path.with_suffix(".json").read_text())
    assert (
        meta["sha256"] == info["sha256"]
        and meta["config"] == info["config"]
        and info["config"]["max_steps"] == 150
    )
    # a second call loads the existing file instead of retraining
    mtime = path.stat().st_mtime_ns
    again, info2 = MotionAEConfig.coerce(TOY).load_or_train(
        ckpt_dir, "toy", splits.__getitem__, True
    )
    assert path.stat().st_mtime_ns == mtime and info2["sha256"] == info["sha256"]
    w = val_windows(splits, 0)
    assert torch.equal(again.features(w), module.features(w))


def test_missing_or_corrupt_checkpoint_says_how_to_create_it(tmp_path):
    with pytest.raises(CheckpointError, match="task=train_encoder encoder=motion_ae dataset=beat2"):
        MotionAEConfig().load_or_train(tmp_path, "beat2", lambda s: [], auto_train=False)
    bad = motion_ae_path(tmp_path, "beat2")
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match=f"{bad}.*not a usable"):
        load_motion_ae(bad)
