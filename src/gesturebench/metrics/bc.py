"""BC: beat consistency of generated (and reference) motion with the speech onsets
(docs/metrics.md, BC).

Joint speeds come from global joint positions by default (the body model run with the sequence's
translation; EMAGE's evaluation zeroes it, see `translation`); ``root_aligned=True`` measures them
relative to the pelvis instead. The threshold divides each joint's speed by that joint's mean speed
over the dataset's train split, computed once through the body model and cached in the context's
cache folder. The speech onsets of each segment depend on its audio alone, so they are cached there
too (keyed by a hash of the samples): every model scored on the same data reuses them.

The defaults are the paper's convention. The other variants are option files of the knobs they
set (conf/metrics/bc/*.yaml, chosen by the presets): ``emage2024`` / ``emage2025`` reproduce
EMAGE's evaluation code (2024 `utils/metric.py` with its trainer, 2025 `emage_evaltools`),
``genea_a2m`` / ``genea_m2a`` the GENEA Leaderboard's two BA values (the 2025 code, one per
alignment direction). Each fixes where the speed threshold is tested (`threshold_frame`), how the
body model runs (`translation`, `global_orient`), the speed normaliser (`mean_speed_file`) and how
the audio is cut (`audio_segment`).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from gesturebench.assets.table import BC_TAG, Need, Table
from gesturebench.body.joints import UPPER
from gesturebench.body.output import BodyOutput
from gesturebench.data.records import N_JOINTS, SequenceRecord, records_digest
from gesturebench.metrics.base import SequenceMetric, sequences
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.convention import BodyConvention, Convention
from gesturebench.metrics.emage_eval_files import MEAN_SPEED
from gesturebench.metrics.functional.bc import (
    audio_onsets,
    beat_consistency,
    emage_segment_samples,
    joint_speeds,
    reloaded_like_librosa,
    segment_onsets,
    trim_frames,
)
from gesturebench.metrics.pair import MotionPair
from gesturebench.runtime.caches import CacheEntry, Schema
from gesturebench.runtime.errors import ConfigError
from gesturebench.runtime.stages import Deferred, progress
from gesturebench.runtime.weights import resolve_weights, sha256_file

#: EMAGE's fixed per-joint speed normaliser (55 values, computed with SMPL-X over BEAT2), published
#: with its evaluation code; this name is resolved like released weights (`emage_eval_files`).
EMAGE_MEAN_SPEED = Path(MEAN_SPEED.files[0]).name
#: the BC alignments (`functional.bc.ALIGNMENTS`), where the speed threshold is tested, how the
#: body model runs, how the audio is cut (module docstring)
Alignment = Literal["motion_to_audio", "audio_to_motion"]
ThresholdFrame = Literal["minimum", "official_offset"]
AudioSegment = Literal["paper", "emage2024", "emage2025"]


def body_positions(body: BodyOutput, root_aligned: bool) -> torch.Tensor:
    """Joint positions (T,55,3) as float64 on the CPU, global or with the pelvis at the origin."""
    joints = body.root_aligned_joints() if root_aligned else body.joints
    return joints.detach().cpu().double()


def reference_mean_speed(
    records: Iterable[SequenceRecord], body_model: Any, root_aligned: bool = False
) -> np.ndarray:
    """Mean speed (m/s) of each of the 55 joints over all frames of `records`, through
    `body_model`."""
    total, frames = np.zeros(N_JOINTS), 0
    for record in records:
        with torch.no_grad():
            body = body_model(record.motion, vertices=False)
        speeds = joint_speeds(body_positions(body, root_aligned), record.motion.fps).numpy()
        total += speeds.sum(axis=0)  # numpy's summation order: the cached speeds stay the same
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


def split_stamp(records: Sequence[SequenceRecord]) -> str:
    """What identifies the train split `records` for its cached speed statistics: a BEAT2
    folder's motion files by path, size and modification time (`Beat2Dataset.motion_stamp`; read
    at every run, so no file's content is), other records by their content (`records_digest`)."""
    stamp = getattr(records, "motion_stamp", None)
    return stamp() if callable(stamp) else records_digest(records)


#: the range of a cached mean joint speed (m/s): positive (only the pelvis's is 0, root-aligned)
#: and below 20 m/s, faster than any person runs (12.4 m/s, the 2009 100 m world record's peak)
SPEED_RANGE = (1e-6, 20.0)


def speed_entry(path: Path, key: dict, root_aligned: bool) -> CacheEntry[list[float]]:
    """The cache entry of BC's mean joint speeds at `path` (JSON {"dataset", "mean_speed"})."""
    low = tuple(0.0 if root_aligned and j == 0 else SPEED_RANGE[0] for j in range(N_JOINTS))
    return CacheEntry(
        path,
        "gesturebench.metrics.bc mean_speed v1",
        key,
        Schema((N_JOINTS,), low=low, high=SPEED_RANGE[1]),
        decode=lambda p: json.loads(p.read_text())["mean_speed"],
        arrays=lambda speed: {"mean_speed": np.asarray(speed)},
    )


#: the speech onsets shipped with the package: those of mini-BEAT2's test split under the default
#: options (`gesturebench.ship_onsets`), so that a first `python launch.py` reads them instead of
#: importing librosa and compiling its kernels into a new environment
SHIPPED_ONSETS = Path(__file__).resolve().parent / "shipped" / "onsets"


def onset_entry(path: Path, key: dict, seconds: float) -> CacheEntry[np.ndarray]:
    """The cache entry of one segment's speech onsets at `path` (`.npy`): times (s) from the
    segment start, sorted, within `seconds`; also looked for in `SHIPPED_ONSETS`."""
    return CacheEntry(
        path,
        "gesturebench.metrics.bc onsets v1",
        key,
        Schema((None,), low=0.0, high=seconds, sorted=True),
        decode=lambda p: np.load(p, allow_pickle=False),
        arrays=lambda onsets: {"onsets": onsets},
        shipped=SHIPPED_ONSETS,
    )


class BeatConsistency(SequenceMetric):
    """BC ↑ of the generated motion, with ``bc_ref`` (the reference motion against the same speech).

    The `direction` argument is the BC alignment (`ALIGNMENTS`), reported under that name in the
    options; the metric's ↑/↓ property is the class attribute `direction`.
    """

    default_name = "bc"
    direction = "higher"
    requires = ("audio",)
    extras = reference_only = ("{name}_ref",)  # the reference's own value, beside the metric's
    hidden_options = ("mean_speed",)
    too_short: torch.Tensor
    longest_short: torch.Tensor
    no_onsets: torch.Tensor

    def __init__(
        self,
        sigma: float = 0.3,
        order: int = 7,
        threshold: float = 0.1,
        trim: float = 2.0,
        direction: Alignment = "motion_to_audio",
        joints: Sequence[int] = UPPER,
        root_aligned: bool = False,
        hop_length: int = 512,
        mean_speed: Sequence[float] | None = None,
        threshold_frame: ThresholdFrame = "minimum",
        translation: Convention = "keep",
        global_orient: Convention = "keep",
        mean_speed_file: str | None = None,
        audio_segment: AudioSegment = "paper",
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        #: the convention's knobs (recorded in `options`)
        self.settings: dict[str, Any] = {
            "threshold": threshold,
            "direction": direction,
            "threshold_frame": threshold_frame,
            "translation": translation,
            "global_orient": global_orient,
            "mean_speed_file": mean_speed_file,
            "audio_segment": audio_segment,
        }
        if mean_speed is not None and len(mean_speed) != N_JOINTS:
            raise ConfigError(
                f"metric {self.name}: mean_speed needs one value per SMPL-X joint ({N_JOINTS})"
            )
        self.sigma, self.order, self.trim = sigma, order, trim
        self.threshold: float = self.settings["threshold"]
        self.alignment: str = self.settings["direction"]
        self.joints, self.root_aligned = list(joints), root_aligned
        # joint speeds of global positions include the root's travel: a copied `trans` enters BC
        keeps_trans = not root_aligned and self.settings["translation"] == "keep"
        self.reads = ("trans",) if keeps_trans else ()
        self.hop_length = hop_length
        self.mean_speed = None if mean_speed is None else np.asarray(mean_speed, dtype=np.float64)
        self.mean_speed_source = "config" if mean_speed is not None else None
        self.onset_cache: Path | None = None
        #: the onsets not yet cached, announced at the first (a first use) and timed
        self.onset_stage: Deferred | None = None
        self.mean_speed_file_path: Path | None = None
        self.convention = BodyConvention(
            self.name, self.settings["translation"], self.settings["global_orient"]
        )
        # sequences with audio but too short for `trim` and `order`, and the longest of them (s)
        self.add_state("too_short", torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")
        self.add_state("longest_short", torch.zeros((), dtype=torch.float64), dist_reduce_fx="max")
        # sequences whose scored segment has no speech onset: BC is undefined there, not 0
        self.add_state("no_onsets", torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")

    @classmethod
    def public_assets(cls, options: Mapping[str, Any], table: Table) -> list[Need]:
        """EMAGE's speed normaliser, where `mean_speed_file` names it by its bare name."""
        if str(options.get("mean_speed_file") or "") != EMAGE_MEAN_SPEED:
            return []
        return [(a, None) for a in table.needed_by(BC_TAG)]

    def extra_options(self) -> dict:
        return {**self.settings, "mean_speed_source": self.mean_speed_source}

    def prepare(self, context: MetricContext) -> None:
        """Keep the speech onsets' cache folder and the body model; load the mean speeds from
        `mean_speed_file`, or the train split's from the cache, or compute and cache them."""
        self.onset_cache = Path(context.cache_dir) / "onsets"
        self.onset_stage = Deferred(
            f"{self.name}: finding the speech onsets of each scored sequence's audio",
            "its beats; each segment once",
            kept=str(self.onset_cache),
        )
        self.convention.prepare(context)
        if self.mean_speed is not None:
            return
        if self.settings["mean_speed_file"] is not None:
            path = self._mean_speed_path(Path(self.settings["mean_speed_file"]), context)
            speed = np.load(path).astype(np.float64).reshape(-1)
            if speed.shape != (N_JOINTS,):
                raise ConfigError(
                    f"{path}: BC's mean_speed_file needs one speed per SMPL-X joint ({N_JOINTS}),"
                    f" got shape {speed.shape}"
                )
            self.mean_speed, self.mean_speed_source = speed, str(path)
            self.mean_speed_file_path = path
            return
        train = context.split("train")
        inputs = {
            "dataset": context.dataset_name,
            "body_model": _body_model_hash(context.body_model),
            "root_aligned": self.root_aligned,
            "train": split_stamp(train),
            "threads": torch.get_num_threads(),  # the forward's sums, to the last bit
        }
        key = hashlib.sha256("|".join(map(str, inputs.values())).encode()).hexdigest()[:16]
        path = Path(context.cache_dir) / f"bc_mean_speed-{context.dataset_name}-{key}.json"
        entry = speed_entry(path, inputs, self.root_aligned)
        speed = entry.read()
        if speed is None:
            records = progress(
                train,
                f"building BC's joint speed statistics of {context.dataset_name}",
                "BC normalises joint speeds by the train split's mean",
                kept=str(path),
                label="BC speed statistics",
            )
            speed = reference_mean_speed(records, context.body_model, self.root_aligned).tolist()
            entry.write(json.dumps({"dataset": context.dataset_name, "mean_speed": speed}).encode())
        self.mean_speed = np.asarray(speed, dtype=np.float64)
        self.mean_speed_source = str(path)

    def _mean_speed_path(self, path: Path, context: MetricContext) -> Path:
        """`path` as given, else in the checkpoints folder; EMAGE's file by its bare name is then
        resolved like released weights (`<checkpoints>/emage_eval/`, the Hugging Face cache, a
        download), with a one-line error naming where to put it."""
        for candidate in (path, Path(context.checkpoints_dir) / path):
            if candidate.is_file():
                return candidate
        if str(path) == EMAGE_MEAN_SPEED:
            resolved = resolve_weights(
                MEAN_SPEED,
                None,
                context.checkpoints_dir,
                owner=f"metric {self.name}",
                key=f"metrics.{self.name}.mean_speed_file",
            )
            return resolved.path(MEAN_SPEED.files[0])
        raise ConfigError(
            f"metric {self.name}: mean_speed_file {path} not found (nor in"
            f" {context.checkpoints_dir})"
        )

    def compute_values(self) -> dict[str, float | None]:
        if self.onset_stage is not None:  # scoring is over: the first-use onsets' seconds
            self.onset_stage.done()
        return super().compute_values()

    def unscored_reason(self) -> str:
        """The sequences too short for the trim, with the numbers, and those without a speech
        onset, before those whose audio the dataset left out and those without audio."""
        own = [r for r in (self.too_short_reason(), self.onsetless_reason()) if r]
        if not own:
            return super().unscored_reason()
        lacking = self.lacking(int(self.missing - self.too_short - self.no_onsets))
        return "; ".join([*own, lacking] if lacking else own)

    def too_short_reason(self) -> str | None:
        """How many sequences were too short for the trim (None: none)."""
        if not self.too_short:
            return None
        return (
            f"{int(self.too_short)} sequences too short for {self.name} (the longest"
            f" {float(self.longest_short):.2f} s): it cuts metrics.{self.name}.trim={self.trim} s"
            f" at each end and needs {2 * self.order + 1} frames (2·order+1) left"
        )

    def onsetless_reason(self) -> str | None:
        """How many sequences had no speech onset in their scored segment (None: none)."""
        if not self.no_onsets:
            return None
        return (
            f"{sequences(int(self.no_onsets))} without a speech onset in the scored segment not"
            f" scored ({self.name} is undefined without one, not 0)"
        )

    def caveat(self) -> str | None:
        """The sequences scored without their left-out audio, and those without a speech onset."""
        notes = [n for n in (super().caveat(), self.onsetless_reason()) if n]
        return "; ".join(notes) or None

    def provenance(self) -> dict:
        """The speed normaliser file and its SHA-256, when one was read."""
        if self.mean_speed_file_path is None:
            return {}
        path = self.mean_speed_file_path
        return {f"{self.name}_mean_speed": {"path": str(path), "sha256": sha256_file(path)}}

    def _segment_onsets(
        self, audio: np.ndarray, sr: int, start: int, stop: int, n_frames: int, fps: float
    ) -> torch.Tensor:
        """Onset times (s from the segment start) of the audio under frames [start, stop), cut as
        `audio_segment` says."""
        samples = torch.from_numpy(np.array(audio))
        convention = self.settings["audio_segment"]
        if convention == "paper":
            return segment_onsets(samples, sr, start, stop, fps, self.hop_length)
        if convention == "emage2024":
            samples = reloaded_like_librosa(samples, sr)
        a, b = emage_segment_samples(len(samples), sr, start, stop, n_frames, fps, convention)
        return audio_onsets(samples[a:b], sr, self.hop_length)

    def _onsets(
        self, audio: np.ndarray, sr: int, start: int, stop: int, n_frames: int, fps: float
    ) -> torch.Tensor:
        """`_segment_onsets`, read from the onset cache when it holds this segment."""
        if self.onset_cache is None:
            return self._segment_onsets(audio, sr, start, stop, n_frames, fps)
        digest = hashlib.sha256(np.ascontiguousarray(audio, dtype=np.float32).tobytes())
        key = f"{sr}|{start}|{stop}|{fps}|{self.hop_length}"
        if self.settings["audio_segment"] != "paper":  # paper's keys stay those cached before
            key += f"|{self.settings['audio_segment']}|{n_frames}"
        inputs = {"audio_sha256": digest.hexdigest(), "segment": key}
        digest.update(key.encode())
        path = self.onset_cache / f"{digest.hexdigest()[:32]}.npy"
        # onset times lie within the audio (one hop more: librosa's frames round up)
        entry = onset_entry(path, inputs, (len(audio) + self.hop_length) / sr)
        cached = entry.read()
        if cached is not None:
            return torch.from_numpy(cached)
        assert self.onset_stage is not None  # set with the cache folder
        with self.onset_stage.piece():
            onsets = self._segment_onsets(audio, sr, start, stop, n_frames, fps)
        buffer = io.BytesIO()
        np.save(buffer, onsets.numpy())
        entry.write(buffer.getvalue())
        return onsets

    def _score(
        self,
        body: BodyOutput,
        onsets: torch.Tensor,
        mean_speed: np.ndarray,
        start: int,
        stop: int,
        fps: float,
    ) -> float:
        whole = joint_speeds(body_positions(body, self.root_aligned)[:, self.joints], fps)
        offset = self.settings["threshold_frame"] == "official_offset"
        return float(
            beat_consistency(
                whole[start:stop],
                onsets,
                torch.from_numpy(mean_speed[self.joints]),
                fps,
                self.sigma,
                self.order,
                self.threshold,
                self.alignment,
                tested_speeds=whole if offset else None,
            )
        )

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float] | None:
        if self.mean_speed is None:
            raise ConfigError(
                f"metric {self.name}: prepare(context) must run before update (mean joint speeds)"
            )
        start, stop = trim_frames(pair.n_frames, pair.fps, self.trim)
        if pair.audio is None:
            return None
        if stop - start < 2 * self.order + 1:  # too short to find a speed minimum
            self.too_short += 1
            self.longest_short.clamp_(min=pair.n_frames / pair.fps)
            return None
        onsets = self._onsets(pair.audio, pair.sample_rate, start, stop, pair.n_frames, pair.fps)
        if len(onsets) == 0:  # no speech to be consistent with: BC is undefined, not 0
            self.no_onsets += 1
            return None
        values: list[float | None] = [
            self._score(body, onsets, self.mean_speed, start, stop, pair.fps)
            for body in self.convention.bodies(pair)
        ]
        return values, float(stop - start)
