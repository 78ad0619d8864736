"""Beat consistency (BC, docs/metrics.md): how closely motion beats (joint-speed minima) meet speech
onsets.

Audio beats are librosa onsets; motion beats of a joint are the local minima of its speed (scipy's
`argrelextrema`) whose speed, relative to the joint's mean speed over the reference data, exceeds a
threshold. Both are taken inside the same trimmed segment (``trim`` seconds cut at each end) and
timed from its start.

The functions take and return tensors (on the CPU); inside they run the numpy, scipy and librosa
maths BC's values were first computed with (float64, the same operations in the same order), so
that the values stay the same to the last bit.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.signal import argrelextrema

from gesturebench.runtime.librosa_lock import librosa

#: BC alignments: from motion beats to onsets (the paper's) or from onsets to motion beats
#: (EMAGE's).
ALIGNMENTS = ("motion_to_audio", "audio_to_motion")


def joint_speeds(joints: torch.Tensor, fps: float) -> torch.Tensor:
    """Speed (m/s) of each joint of (T,J,3) positions: central differences inside, one-sided at the
    ends (T,J), float64."""
    velocity = np.gradient(joints.detach().cpu().double().numpy(), 1.0 / fps, axis=0)
    return torch.from_numpy(np.linalg.norm(velocity, axis=-1))


def trim_frames(n_frames: int, fps: float, trim: float) -> tuple[int, int]:
    """The frame range [start, stop) left after cutting `trim` seconds at each end (empty when too
    short)."""
    cut = round(trim * fps)
    return cut, max(cut, n_frames - cut)


def audio_onsets(audio: torch.Tensor, sr: int, hop_length: int = 512) -> torch.Tensor:
    """Onset times (s, float64) of `audio`: `librosa.onset.onset_detect(units="time")` of its
    float32 samples."""
    y = np.ascontiguousarray(audio.detach().cpu().numpy(), dtype=np.float32)
    times = librosa().onset.onset_detect(y=y, sr=sr, hop_length=hop_length, units="time")
    return torch.from_numpy(np.array(times, dtype=np.float64))


def segment_onsets(
    audio: torch.Tensor, sr: int, start: int, stop: int, fps: float, hop_length: int = 512
) -> torch.Tensor:
    """Onset times (s from the segment start) of the audio under motion frames [start, stop)."""
    a, b = round(start / fps * sr), round(stop / fps * sr)
    segment = audio[a:b]
    if segment.numel() < hop_length:
        return torch.zeros(0, dtype=torch.float64)
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


def reloaded_like_librosa(audio: torch.Tensor, sr: int, load_sr: int = 22050) -> torch.Tensor:
    """`audio` at `sr` as EMAGE's 2024 evaluation sees it: `librosa.load` at its default rate
    (`load_sr`), then `librosa.resample` back to `sr` (both soxr_hq); float32."""
    y = audio.detach().cpu().numpy().astype(np.float32)
    y = librosa().resample(y, orig_sr=sr, target_sr=load_sr)
    return torch.from_numpy(np.array(librosa().resample(y, orig_sr=load_sr, target_sr=sr)))


def motion_beats(
    speed: torch.Tensor,
    mean_speed: float,
    threshold: float = 0.1,
    order: int = 7,
    tested_speed: torch.Tensor | None = None,
) -> torch.Tensor:
    """Frame indices (int64) of the local speed minima of one joint whose speed / `mean_speed`
    exceeds `threshold`.

    The threshold is tested on `speed` at each minimum, or, given `tested_speed`, on
    ``tested_speed`` at the minimum's index: EMAGE's code finds the minima in the trimmed segment
    but tests the whole sequence's speed at the same index, i.e. `trim` seconds earlier.
    """
    tested = None if tested_speed is None else tested_speed.cpu().numpy()
    return torch.from_numpy(
        _motion_beats(speed.cpu().numpy(), mean_speed, threshold, order, tested)
    )


def _motion_beats(
    speed: np.ndarray,
    mean_speed: float,
    threshold: float,
    order: int,
    tested_speed: np.ndarray | None,
) -> np.ndarray:
    """`motion_beats` in numpy."""
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
    speeds: torch.Tensor,
    onsets: torch.Tensor,
    mean_speed: torch.Tensor,
    fps: float,
    sigma: float = 0.3,
    order: int = 7,
    threshold: float = 0.1,
    direction: str = "motion_to_audio",
    tested_speeds: torch.Tensor | None = None,
) -> torch.Tensor:
    """BC of one segment (float64 scalar): speeds (T,J) of the scored joints, onset times (s) from
    the segment start, each joint's mean speed (J,); `tested_speeds` (T′,J), where given, is what
    the threshold tests (`motion_beats`).

    The mean over joints of `_gaussian_alignment` from motion beats to onsets (``motion_to_audio``,
    the paper's) or from onsets to motion beats (``audio_to_motion``, EMAGE's). A joint without a
    motion beat, or a segment without an onset, scores 0 (EMAGE's code also scores a beatless joint
    0).
    """
    if direction not in ALIGNMENTS:
        raise ValueError(f"direction must be one of {ALIGNMENTS}, got {direction!r}")
    speed = speeds.cpu().double().numpy()
    tested_all = None if tested_speeds is None else tested_speeds.cpu().double().numpy()
    means = mean_speed.cpu().double().numpy()
    times = onsets.cpu().double().numpy()
    values = []
    for j in range(speed.shape[1]):
        tested = None if tested_all is None else tested_all[:, j]
        beats = _motion_beats(speed[:, j], means[j], threshold, order, tested) / fps
        a, b = (beats, times) if direction == "motion_to_audio" else (times, beats)
        values.append(_gaussian_alignment(a, b, sigma))
    return torch.tensor(np.mean(values), dtype=torch.float64)
