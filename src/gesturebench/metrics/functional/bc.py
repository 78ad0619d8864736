"""Beat consistency (BC, docs/metrics.md): how closely motion beats (joint-speed minima) meet speech
onsets.

Audio beats are librosa onsets; motion beats of a joint are the local minima of its speed (scipy's
`argrelextrema`) whose speed, relative to the joint's mean speed over the reference data, exceeds a
threshold. Both are taken inside the same trimmed segment (``trim`` seconds cut at each end) and
timed from its start.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from scipy.signal import argrelextrema

from gesturebench.runtime.librosa_lock import librosa

#: BC alignments: from motion beats to onsets (the paper's) or from onsets to motion beats
#: (EMAGE's).
ALIGNMENTS = ("motion_to_audio", "audio_to_motion")


def joint_speeds(joints: np.ndarray, fps: float) -> np.ndarray:
    """Speed (m/s) of each joint of (T,J,3) positions: central differences inside, one-sided at the
    ends (T,J)."""
    velocity = np.gradient(np.asarray(joints, dtype=np.float64), 1.0 / fps, axis=0)
    return np.linalg.norm(velocity, axis=-1)


def trim_frames(n_frames: int, fps: float, trim: float) -> tuple[int, int]:
    """The frame range [start, stop) left after cutting `trim` seconds at each end (empty when too
    short)."""
    cut = round(trim * fps)
    return cut, max(cut, n_frames - cut)


def audio_onsets(audio: np.ndarray, sr: int, hop_length: int = 512) -> np.ndarray:
    """Onset times (s) of `audio`: `librosa.onset.onset_detect(units="time")`."""
    y = np.ascontiguousarray(audio, dtype=np.float32)
    return librosa.onset.onset_detect(y=y, sr=sr, hop_length=hop_length, units="time")


def segment_onsets(
    audio: np.ndarray, sr: int, start: int, stop: int, fps: float, hop_length: int = 512
) -> np.ndarray:
    """Onset times (s from the segment start) of the audio under motion frames [start, stop)."""
    a, b = round(start / fps * sr), round(stop / fps * sr)
    segment = np.asarray(audio)[a:b]
    if segment.size < hop_length:
        return np.zeros(0)
    return audio_onsets(segment, sr, hop_length)


def emage_segment_samples(
    n_samples: int, sr: int, start: int, stop: int, n_frames: int, fps: float, release: str
) -> tuple[int, int]:
    """The audio sample range EMAGE's evaluation code takes under motion frames [start, stop) of an
    `n_frames` sequence (BC's ``audio_segment`` option).

    ``emage2025`` (`emage_evaltools`): from ⌊start/fps·sr⌋ to ⌊stop/fps·sr⌋. ``emage2024``
    (`utils/metric.py` as its trainer calls it): the audio is first cut at ⌊sr/fps·n_frames⌋, then
    taken from ⌊start·sr/fps⌋ to the *audio's* length minus that same start, so the segment ends
    `start` frames before the audio ends, not before the motion ends (capped by the first cut).
    """
    if release == "emage2025":
        return int(start / fps * sr), int(stop / fps * sr)
    first = int(start * (sr / fps))
    return first, min(int(sr / fps * n_frames), n_samples - first)


def reloaded_like_librosa(audio: np.ndarray, sr: int, load_sr: int = 22050) -> np.ndarray:
    """`audio` at `sr` as EMAGE's 2024 evaluation sees it: `librosa.load` at its default rate
    (`load_sr`), then `librosa.resample` back to `sr` (both soxr_hq)."""
    y = librosa.resample(np.asarray(audio, dtype=np.float32), orig_sr=sr, target_sr=load_sr)
    return librosa.resample(y, orig_sr=load_sr, target_sr=sr)


def motion_beats(
    speed: np.ndarray,
    mean_speed: float,
    threshold: float = 0.1,
    order: int = 7,
    tested_speed: np.ndarray | None = None,
) -> np.ndarray:
    """Frame indices of the local speed minima of one joint whose speed / `mean_speed` exceeds
    `threshold`.

    The threshold is tested on `speed` at each minimum, or, given `tested_speed`, on
    ``tested_speed`` at the minimum's index: EMAGE's code finds the minima in the trimmed segment
    but tests the whole sequence's speed at the same index, i.e. `trim` seconds earlier.
    """
    idx = argrelextrema(speed, np.less, order=order)[0]
    tested = speed if tested_speed is None else tested_speed
    return idx[tested[idx] / mean_speed > threshold]


def _gaussian_alignment(from_times: np.ndarray, to_times: np.ndarray, sigma: float) -> float:
    """Mean over `from_times` t of exp(−min_s (t − s)² / 2σ²) over `to_times` s; 0 when either set
    is empty."""
    a, b = np.asarray(from_times, dtype=np.float64), np.asarray(to_times, dtype=np.float64)
    if a.size == 0 or b.size == 0:
        return 0.0
    gap = np.abs(a[:, None] - b[None, :]).min(axis=1)
    return float(np.exp(-(gap**2) / (2 * sigma**2)).mean())


def beat_consistency(
    speeds: np.ndarray,
    onsets: np.ndarray,
    mean_speed: Sequence[float] | np.ndarray,
    fps: float,
    sigma: float = 0.3,
    order: int = 7,
    threshold: float = 0.1,
    direction: str = "motion_to_audio",
    tested_speeds: np.ndarray | None = None,
) -> torch.Tensor:
    """BC of one segment: speeds (T,J) of the scored joints, onset times (s) from the segment start;
    `tested_speeds` (T′,J), where given, is what the threshold tests (`motion_beats`).

    The mean over joints of `_gaussian_alignment` from motion beats to onsets (``motion_to_audio``,
    the paper's) or from onsets to motion beats (``audio_to_motion``, EMAGE's). A joint without a
    motion beat, or a segment without an onset, scores 0 (EMAGE's code also scores a beatless joint
    0).
    """
    if direction not in ALIGNMENTS:
        raise ValueError(f"direction must be one of {ALIGNMENTS}, got {direction!r}")
    values = []
    for j in range(speeds.shape[1]):
        tested = None if tested_speeds is None else tested_speeds[:, j]
        beats = motion_beats(speeds[:, j], mean_speed[j], threshold, order, tested) / fps
        a, b = (beats, onsets) if direction == "motion_to_audio" else (onsets, beats)
        values.append(_gaussian_alignment(a, b, sigma))
    return torch.tensor(np.mean(values), dtype=torch.float64)
