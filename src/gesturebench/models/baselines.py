"""Reference-free baselines fitted on the training split: a static mean pose and random real
motion."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.metrics.context import MetricContext
from gesturebench.models.base import GestureModel


class MeanPose(GestureModel):
    """The training split's mean pose, translation and expression, held for every frame (betas: the
    reference's)."""

    cacheable = False

    def __init__(self, name: str = "mean_pose"):
        super().__init__(name)
        self.mean: dict[str, np.ndarray] = {}  # fitted by prepare

    def prepare(self, context: MetricContext) -> None:
        sums: dict[str, np.ndarray] = {}
        count = 0
        for record in context.split("train"):
            m = record.motion
            for key in ("poses", "trans", "expressions"):
                sums[key] = sums.get(key, 0) + getattr(m, key).sum(0, dtype=np.float64)
            count += m.n_frames
        self.mean = {k: (v / max(count, 1)).astype(np.float32) for k, v in sums.items()}

    def generate(self, record: SequenceRecord) -> Motion:
        t = record.n_frames
        return Motion(
            poses=np.tile(self.mean["poses"], (t, 1)),
            trans=np.tile(self.mean["trans"], (t, 1)),
            betas=record.motion.betas,
            expressions=np.tile(self.mean["expressions"], (t, 1)),
        )


class RandomClip(GestureModel):
    """Real training motion of the same length, chosen by a seeded draw per sequence
    (speech-agnostic)."""

    cacheable = False
    stochastic = True

    def __init__(self, name: str = "random_clip", seed: int = 0):
        super().__init__(name, seed=seed)
        self.seed = seed
        self.clips: Sequence[SequenceRecord] = []  # the training split, from prepare

    def prepare(self, context: MetricContext) -> None:
        self.clips = context.split("train")

    def generate(self, record: SequenceRecord) -> Motion:
        rng = np.random.default_rng([self.seed, zlib.crc32(record.id.encode())])
        need, parts = record.n_frames, []
        while need > 0:
            clip = self.clips[int(rng.integers(len(self.clips)))].motion
            start = int(rng.integers(max(clip.n_frames - need, 0) + 1))
            part = clip.frames(start, start + need)
            parts.append(part)
            need -= part.n_frames
        return Motion(
            poses=np.concatenate([p.poses for p in parts]),
            trans=np.concatenate([p.trans - p.trans[:1] + parts[0].trans[:1] for p in parts]),
            betas=record.motion.betas,
            expressions=np.concatenate([p.expressions for p in parts]),
        )
