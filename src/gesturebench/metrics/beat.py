"""BC: beat consistency of generated (and reference) motion with the speech onsets
(docs/metrics.md, BC).

Joint speeds come from global joint positions by default, as in EMAGE's evaluation (the body model
is run with the sequence's translation); ``root_aligned=True`` measures them relative to the pelvis
instead. The threshold divides each joint's speed by that joint's mean speed over the dataset's
train split, computed once through the body model and cached in the context's cache folder. The
speech onsets of each segment depend on its audio alone, so they are cached there too (keyed by a
hash of the samples): every model scored on the same data reuses them.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gesturebench.atomic import write_atomic
from gesturebench.body.joints import UPPER
from gesturebench.body.output import BodyOutput
from gesturebench.data.records import N_JOINTS, SequenceRecord
from gesturebench.errors import ConfigError
from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.functional.beat import (
    ALIGNMENTS,
    beat_consistency,
    joint_speeds,
    segment_onsets,
    trim_frames,
)
from gesturebench.metrics.pair import MotionPair


def body_positions(body: BodyOutput, root_aligned: bool) -> np.ndarray:
    """Joint positions (T,55,3) as float64 numpy, global or with the pelvis at the origin."""
    joints = body.root_aligned_joints() if root_aligned else body.joints
    return joints.detach().cpu().double().numpy()


def reference_mean_speed(
    records: Iterable[SequenceRecord], body_model: Any, root_aligned: bool = False
) -> np.ndarray:
    """Mean speed (m/s) of each of the 55 joints over all frames of `records`, through
    `body_model`."""
    total, frames = np.zeros(N_JOINTS), 0
    for record in records:
        with torch.no_grad():
            body = body_model(record.motion, vertices=False)
        speeds = joint_speeds(body_positions(body, root_aligned), record.motion.fps)
        total += speeds.sum(axis=0)
        frames += speeds.shape[0]
    if frames == 0:
        raise ConfigError(
            "BC needs the train split's joint speeds, but the train split has no frames"
        )
    return total / frames


def _body_model_hash(body_model: Any) -> str:
    """SHA-256 of the body model file (the joints, hence the speeds, depend on it); its class name
    otherwise."""
    path = getattr(body_model, "model_path", None)
    if path is not None and Path(path).is_file():
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return type(body_model).__name__ + ":" + str(path)


class BeatConsistency(SequenceMetric):
    """BC ↑ of the generated motion, with ``bc_ref`` (the reference motion against the same speech).

    The `direction` argument is the BC alignment (`ALIGNMENTS`), reported under that name in the
    options; the metric's ↑/↓ property is the class attribute `direction`.
    """

    direction = "higher"
    requires = ("audio",)
    extras = ("{name}_ref",)
    reference_only = ("{name}_ref",)
    hidden_options = ("mean_speed",)

    def __init__(
        self,
        name: str = "bc",
        sigma: float = 0.3,
        order: int = 7,
        threshold: float = 0.1,
        trim: float = 2.0,
        direction: str = "motion_to_audio",
        joints: Sequence[int] = UPPER,
        root_aligned: bool = False,
        hop_length: int = 512,
        mean_speed: Sequence[float] | None = None,
        **kwargs: Any,
    ):
        super().__init__(name, **kwargs)
        if direction not in ALIGNMENTS:
            raise ConfigError(
                f"metric {name}: direction must be one of {ALIGNMENTS}, got {direction!r}"
            )
        if mean_speed is not None and len(mean_speed) != N_JOINTS:
            raise ConfigError(
                f"metric {name}: mean_speed needs one value per SMPL-X joint ({N_JOINTS})"
            )
        self.sigma, self.order, self.threshold, self.trim = sigma, order, threshold, trim
        self.alignment, self.joints, self.root_aligned = direction, list(joints), root_aligned
        # joint speeds of global positions include the root's travel: a copied `trans` enters BC
        self.reads = () if root_aligned else ("trans",)
        self.hop_length = hop_length
        self.mean_speed = None if mean_speed is None else np.asarray(mean_speed, dtype=np.float64)
        self.mean_speed_source = "config" if mean_speed is not None else None
        self.onset_cache: Path | None = None

    def extra_options(self) -> dict:
        return {"mean_speed_source": self.mean_speed_source}

    def prepare(self, context: MetricContext) -> None:
        """Load the train split's per-joint mean speeds from the cache, or compute and cache
        them; keep the speech onsets' cache folder."""
        self.onset_cache = Path(context.cache_dir) / "onsets"
        if self.mean_speed is not None:
            return
        key = hashlib.sha256(
            f"{context.dataset_name}|{_body_model_hash(context.body_model)}|{self.root_aligned}".encode()
        ).hexdigest()[:16]
        path = Path(context.cache_dir) / f"bc_mean_speed-{context.dataset_name}-{key}.json"
        if path.is_file():
            speed = json.loads(path.read_text())["mean_speed"]
        else:
            speed = reference_mean_speed(
                context.split("train"), context.body_model, self.root_aligned
            ).tolist()
            write_atomic(path, json.dumps({"dataset": context.dataset_name, "mean_speed": speed}))
        self.mean_speed = np.asarray(speed, dtype=np.float64)
        self.mean_speed_source = str(path)

    def _onsets(self, audio: np.ndarray, sr: int, start: int, stop: int, fps: float) -> np.ndarray:
        """`segment_onsets`, read from the onset cache when it holds this segment."""
        if self.onset_cache is None:
            return segment_onsets(audio, sr, start, stop, fps, self.hop_length)
        digest = hashlib.sha256(np.ascontiguousarray(audio, dtype=np.float32).tobytes())
        digest.update(f"{sr}|{start}|{stop}|{fps}|{self.hop_length}".encode())
        path = self.onset_cache / f"{digest.hexdigest()[:32]}.npy"
        if path.is_file():
            return np.load(path)
        onsets = segment_onsets(audio, sr, start, stop, fps, self.hop_length)
        buffer = io.BytesIO()
        np.save(buffer, onsets)
        write_atomic(path, buffer.getvalue())
        return onsets

    def _score(
        self,
        body: BodyOutput,
        onsets: np.ndarray,
        mean_speed: np.ndarray,
        start: int,
        stop: int,
        fps: float,
    ) -> float:
        speeds = joint_speeds(body_positions(body, self.root_aligned)[:, self.joints], fps)[
            start:stop
        ]
        return float(
            beat_consistency(
                speeds,
                onsets,
                mean_speed[self.joints],
                fps,
                self.sigma,
                self.order,
                self.threshold,
                self.alignment,
            )
        )

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float] | None:
        if self.mean_speed is None:
            raise ConfigError(
                f"metric {self.name}: prepare(context) must run before update (mean joint speeds)"
            )
        start, stop = trim_frames(pair.n_frames, pair.fps, self.trim)
        if pair.audio is None or stop - start < 2 * self.order + 1:
            return None  # too short to find a speed minimum: counted as missing
        onsets = self._onsets(pair.audio, pair.sample_rate, start, stop, pair.fps)
        values: list[float | None] = [
            self._score(body, onsets, self.mean_speed, start, stop, pair.fps)
            for body in (pair.gen_body, pair.ref_body)
        ]
        return values, float(stop - start)
