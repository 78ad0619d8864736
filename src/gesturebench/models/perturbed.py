"""`Perturbed`: the reference with one controlled defect, to check that metrics react to what they
should. The defect is a `Perturbation` (`model/perturbation=<option>`, conf/model/perturbation/*),
chosen by its `_target_`."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
from scipy.ndimage import gaussian_filter1d

from gesturebench.body.joints import BODY_HANDS, LEFT_HAND, RIGHT_HAND
from gesturebench.data.gesture_classes import SEMANTIC_CLASSES
from gesturebench.data.records import N_JOINTS, Motion, SemInterval, SequenceRecord
from gesturebench.models.base import GestureModel
from gesturebench.runtime.errors import ConfigError
from gesturebench.synthesis.curves import window
from gesturebench.synthesis.gestures import (
    ARM_JOINTS,
    BEAT_HAND,
    BEAT_READY,
    Stroke,
    arm_rotvecs,
    hand_rotvecs,
    mirror,
    stroke_offsets,
)

# Pose channels of the body and hand joints other than the root (global orientation is left
# untouched).
_JOINTS = list(BODY_HANDS)
_CHANNELS = np.array([3 * j + c for j in _JOINTS for c in range(3)])


def rotation_noise(record: SequenceRecord, level: float, rng: np.random.Generator) -> Motion:
    """Smooth (σ = 5 frames) Gaussian noise of standard deviation `level` rad on every body/hand
    joint angle."""
    m = record.motion
    noise = gaussian_filter1d(
        rng.standard_normal((m.n_frames, _CHANNELS.size)), sigma=5, axis=0, mode="nearest"
    )
    noise *= level / max(float(noise.std()), 1e-12)
    poses = m.poses.copy()
    poses[:, _CHANNELS] += noise
    return replace(m, poses=poses)


def jitter(record: SequenceRecord, level: float, rng: np.random.Generator) -> Motion:
    """White per-frame noise of standard deviation `level` rad on every body/hand joint angle."""
    m = record.motion
    poses = m.poses.copy()
    poses[:, _CHANNELS] += level * rng.standard_normal((m.n_frames, _CHANNELS.size))
    return replace(m, poses=poses)


def time_shift(record: SequenceRecord, level: float, rng: np.random.Generator) -> Motion:
    """Motion delayed by `level` seconds (negative: advanced); the edge frame fills the gap."""
    m = record.motion
    shift = round(level * m.fps)
    idx = np.clip(np.arange(m.n_frames) - shift, 0, m.n_frames - 1)
    return replace(m, poses=m.poses[idx], trans=m.trans[idx], expressions=m.expressions[idx])


def freeze(record: SequenceRecord, level: float, rng: np.random.Generator) -> Motion:
    """In every 1 s block the last `level` fraction of frames holds the pose reached before it."""
    m = record.motion
    block = m.fps
    hold = round(np.clip(level, 0, 1) * block)
    idx = np.arange(m.n_frames)
    if hold:
        pos = idx % block
        start = block - hold
        idx = np.where(pos >= start, idx - pos + max(start - 1, 0), idx)
    return replace(m, poses=m.poses[idx], trans=m.trans[idx], expressions=m.expressions[idx])


def _beat_strokes(interval: SemInterval, words) -> tuple[Stroke, ...]:
    """Strokes on both arms at the word onsets inside `interval` (≥ 0.5 s apart), else one in its
    middle."""
    times: list[float] = []
    for w in sorted(words or (), key=lambda w: w.start):
        if interval.start <= w.start <= interval.end - 0.05 and (
            not times or w.start - times[-1] >= 0.5
        ):
            times.append(w.start)
    return tuple(Stroke(t, (0, 1), 1.0) for t in times or [(interval.start + interval.end) / 2])


def beat_collapse(record: SequenceRecord, level: float, rng: np.random.Generator) -> Motion:
    """A fraction `level` of the semantic intervals (iconic, metaphoric, deictic by their sem name;
    round(level·n) of them, chosen with `rng`) turned into beat gestures, as mini-BEAT2 draws them.

    Over each chosen interval ± 0.6 s the arm and finger joints leave the original gesture — their
    pose is interpolated between the frames just outside that span — and, with mini-BEAT2's envelope
    (rising over the 0.35 s before the interval, falling over the 0.35 s around its end), blend into
    the beat-ready forearms with a relaxed hand and strike down at each word onset inside the
    interval. A record without sem is unchanged.
    """
    m = record.motion
    semantic = [iv for iv in record.sem or () if iv.label in SEMANTIC_CLASSES]
    k = round(float(np.clip(level, 0.0, 1.0)) * len(semantic))
    chosen = (
        [semantic[i] for i in sorted(rng.choice(len(semantic), size=k, replace=False))] if k else []
    )
    poses = m.poses.reshape(m.n_frames, N_JOINTS, 3).copy()
    joints = [j for arm in ARM_JOINTS for j in arm] + list(LEFT_HAND + RIGHT_HAND)
    for iv in chosen:
        a = max(0, int(np.floor((iv.start - 0.6) * m.fps)))
        b = min(m.n_frames - 1, int(np.ceil((iv.end + 0.6) * m.fps)))
        t = np.arange(a, b + 1) / m.fps
        share = ((t - t[0]) / max(t[-1] - t[0], 1e-9))[:, None, None]
        base = (1 - share) * poses[a, joints] + share * poses[b, joints]
        arm = BEAT_READY + stroke_offsets(t, _beat_strokes(iv, record.words))  # (T, 2, N_ARM)
        hand = hand_rotvecs(np.broadcast_to(BEAT_HAND, (len(t), 5)), np.zeros(len(t)))
        target = np.concatenate(
            [arm_rotvecs(arm[:, 0]), mirror(arm_rotvecs(arm[:, 1])), hand, mirror(hand)], 1
        )
        envelope = window(t, iv.start - 0.35, iv.start, iv.end - 0.05, iv.end + 0.3)[:, None, None]
        poses[a : b + 1, joints] = base + envelope * (target - base)
    return replace(m, poses=poses.reshape(m.n_frames, -1))


_STD = (0.0, float("inf"), "≥ 0 (a standard deviation in rad)")
_FRACTION = (0.0, 1.0, "a fraction in [0, 1]")


class Perturbation:
    """One kind of defect (`name`, the model's name says it): `apply` makes it at a level, one of
    `levels` (lowest, highest, in words); `stochastic` where it draws from the rng (noise, or which
    semantic intervals collapse). Each is a frozen dataclass, built by its `_target_`."""

    name: str
    levels: ClassVar[tuple[float, float, str]] = _STD
    stochastic: ClassVar[bool] = True

    def apply(self, record: SequenceRecord, level: float, rng: np.random.Generator) -> Motion:
        raise NotImplementedError


@dataclass(frozen=True)
class RotationNoise(Perturbation):
    name: str = "rotation_noise"
    apply = staticmethod(rotation_noise)


@dataclass(frozen=True)
class Jitter(Perturbation):
    name: str = "jitter"
    apply = staticmethod(jitter)


@dataclass(frozen=True)
class TimeShift(Perturbation):
    """Only a time shift may be negative (motion advanced)."""

    name: str = "time_shift"
    levels = (float("-inf"), float("inf"), "a finite number of seconds")
    stochastic = False
    apply = staticmethod(time_shift)


@dataclass(frozen=True)
class Freeze(Perturbation):
    name: str = "freeze"
    levels = _FRACTION
    stochastic = False
    apply = staticmethod(freeze)


@dataclass(frozen=True)
class BeatCollapse(Perturbation):
    name: str = "beat_collapse"
    levels = _FRACTION
    apply = staticmethod(beat_collapse)


class Perturbed(GestureModel):
    """Reference motion with a `perturbation` (RotationNoise, Jitter, TimeShift, Freeze,
    BeatCollapse) at `level` (seeded per sequence); a level outside the perturbation's range
    (`Perturbation.levels`) or not finite is a `ConfigError`, not a silently clipped or meaningless
    defect."""

    cacheable = False

    def __init__(
        self,
        perturbation: Perturbation,
        name: str = "perturbed",
        level: float = 0.1,
        seed: int = 0,
    ):
        super().__init__(name, kind=perturbation.name, level=level, seed=seed)
        low, high, allowed = perturbation.levels
        if not (np.isfinite(level) and low <= level <= high):
            raise ConfigError(
                f"model.level={level} for model/perturbation={perturbation.name}: must be {allowed}"
            )
        self.perturbation = perturbation
        self.stochastic = perturbation.stochastic
        self.level = float(level)
        self.seed = seed

    def generate(self, record: SequenceRecord) -> Motion:
        rng = np.random.default_rng([self.seed, zlib.crc32(record.id.encode())])
        return self.perturbation.apply(record, self.level, rng)
