"""`Perturbed`: the reference with one controlled defect, to check that metrics react to what they should."""

from __future__ import annotations

import zlib
from dataclasses import replace

import numpy as np
from scipy.ndimage import gaussian_filter1d

from gesturebench.body.joints import BODY_HANDS
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.errors import ConfigError
from gesturebench.models.base import GestureModel

# Pose channels of the body and hand joints other than the root (global orientation is left untouched).
_JOINTS = [j for j in BODY_HANDS if j != 0]
_CHANNELS = np.array([3 * j + c for j in _JOINTS for c in range(3)])


def rotation_noise(m: Motion, level: float, rng: np.random.Generator) -> Motion:
    """Smooth (σ = 5 frames) Gaussian noise of standard deviation `level` rad on every body/hand joint angle."""
    noise = gaussian_filter1d(rng.standard_normal((m.n_frames, _CHANNELS.size)), sigma=5, axis=0, mode="nearest")
    noise *= level / max(float(noise.std()), 1e-12)
    poses = m.poses.copy()
    poses[:, _CHANNELS] += noise
    return replace(m, poses=poses)


def jitter(m: Motion, level: float, rng: np.random.Generator) -> Motion:
    """White per-frame noise of standard deviation `level` rad on every body/hand joint angle."""
    poses = m.poses.copy()
    poses[:, _CHANNELS] += level * rng.standard_normal((m.n_frames, _CHANNELS.size))
    return replace(m, poses=poses)


def time_shift(m: Motion, level: float, rng: np.random.Generator) -> Motion:
    """Motion delayed by `level` seconds (negative: advanced); the edge frame fills the gap."""
    shift = int(round(level * m.fps))
    idx = np.clip(np.arange(m.n_frames) - shift, 0, m.n_frames - 1)
    return replace(m, poses=m.poses[idx], trans=m.trans[idx], expressions=m.expressions[idx])


def freeze(m: Motion, level: float, rng: np.random.Generator) -> Motion:
    """In every 1 s block the last `level` fraction of frames holds the pose reached before it."""
    block = m.fps
    hold = int(round(np.clip(level, 0, 1) * block))
    idx = np.arange(m.n_frames)
    if hold:
        pos = idx % block
        start = block - hold
        idx = np.where(pos >= start, idx - pos + max(start - 1, 0), idx)
    return replace(m, poses=m.poses[idx], trans=m.trans[idx], expressions=m.expressions[idx])


PERTURBATIONS = {f.__name__: f for f in (rotation_noise, jitter, time_shift, freeze)}


class Perturbed(GestureModel):
    """Reference motion with `kind` ∈ rotation_noise, jitter, time_shift, freeze at `level` (seeded per sequence)."""

    cacheable = False

    def __init__(self, name: str = "perturbed", kind: str = "rotation_noise", level: float = 0.1, seed: int = 0):
        super().__init__(name, kind=kind, level=level, seed=seed)
        if kind not in PERTURBATIONS:
            raise ConfigError(f"model.kind={kind!r} is not one of {sorted(PERTURBATIONS)}")
        self.perturb = PERTURBATIONS[kind]
        self.level = float(level)
        self.seed = seed

    def generate(self, record: SequenceRecord) -> Motion:
        rng = np.random.default_rng([self.seed, zlib.crc32(record.id.encode())])
        return self.perturb(record.motion, self.level, rng)
