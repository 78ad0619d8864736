"""Damaged cache entries (truncated or garbled files) are set aside as `<name>.corrupt`, logged and
recomputed to the value they held; the onset and speed caches are tested with BC
(tests/metrics/test_bc.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gesturebench.encoders.checkpoint import save_motion_ae
from gesturebench.encoders.motion_ae import MotionAutoencoder
from gesturebench.encoders.motion_ae_training import MotionAEConfig
from gesturebench.models.base import GestureModel
from gesturebench.models.cache import MotionCache
from gesturebench.runtime.errors import CheckpointError
from tests.helpers import zero_motion
from tests.metrics.test_bc import damage


class Counting(GestureModel):
    """A cacheable model whose motion is a seeded random walk; counts its generations."""

    def __init__(self):
        super().__init__("counting")
        self.calls = 0

    def generate(self, record):
        self.calls += 1
        motion = zero_motion(record.motion.n_frames)
        walk = np.random.default_rng(7).standard_normal(motion.poses.shape).cumsum(0)
        motion.poses[:] = 0.05 * walk  # plausible rotations (the motion reader checks them)
        return motion


@pytest.mark.parametrize("how", ["truncate", "garble"])
def test_a_damaged_generated_motion_is_set_aside_and_regenerated(tmp_path, how, caplog):
    from gesturebench.data.records import SequenceRecord

    record = SequenceRecord("2_scott_0_1_1", 2, zero_motion(40))
    model, cache = Counting(), MotionCache(tmp_path)
    first = cache.get(model, record)
    entry = cache.path(model, record)
    damage(entry, how)
    again = cache.get(model, record)
    assert model.calls == 2 and np.array_equal(again.poses, first.poses)
    assert entry.with_name(entry.name + ".corrupt").is_file() and str(entry) in caplog.text
    assert np.array_equal(cache.get(model, record).poses, first.poses) and model.calls == 2


def test_a_damaged_auto_trained_encoder_is_set_aside_and_retrained(tmp_path, monkeypatch, caplog):
    cfg = MotionAEConfig()

    def train(self, train, val, out_path, checkpoints_dir="checkpoints", logger=None):
        torch.manual_seed(0)
        save_motion_ae(MotionAutoencoder(**self.module_kwargs()), out_path, {}, {})

    monkeypatch.setattr(MotionAEConfig, "train", train)
    first, _ = cfg.load_or_train(tmp_path, "toy", lambda split: [], auto_train=True)
    entry = cfg.checkpoint_path(tmp_path, "toy")
    damage(entry, "truncate")
    with pytest.raises(CheckpointError, match="not a usable"):  # not a cache: the user's file
        cfg.load_or_train(tmp_path, "toy", lambda split: [], auto_train=False)
    again, _ = cfg.load_or_train(tmp_path, "toy", lambda split: [], auto_train=True)
    for a, b in zip(first.state_dict().values(), again.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert entry.with_name(entry.name + ".corrupt").is_file() and str(entry) in caplog.text
