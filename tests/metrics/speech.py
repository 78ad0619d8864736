"""Speech-aligned motion pairs (BC, SRGR) shared by the speech metric tests."""

from __future__ import annotations

import itertools

import numpy as np
import torch

from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion, SemInterval
from gesturebench.metrics.functional.bc import audio_onsets
from gesturebench.metrics.pair import MotionPair

SR = 16000


# ---------- constructed speech and motion ----------


def click_track(seconds: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Decaying noise bursts 1.6–2.4 s apart over a faint noise floor; returns (audio, librosa onset
    times)."""
    rng = np.random.default_rng(seed)
    y = 0.001 * rng.standard_normal(int(seconds * SR))
    n = int(0.03 * SR)
    for c in np.cumsum(rng.uniform(1.6, 2.4, size=int(seconds))) + 0.5:
        if c < seconds - 0.5:
            i = int(c * SR)
            y[i : i + n] += 0.8 * rng.standard_normal(n) * np.exp(-np.arange(n) / (0.006 * SR))
    y = y.astype(np.float32)
    return y, audio_onsets(torch.from_numpy(y), SR).numpy()


def first_of_clusters(times: np.ndarray, gap: float = 0.2) -> np.ndarray:
    """librosa marks a sharp burst in one or two consecutive hops: keep the first onset of each
    burst."""
    keep = np.concatenate([[True], np.diff(times) > gap])
    return times[keep]


def positions_with_speed_minima(n_frames: int, beat_frames: np.ndarray, fps: float) -> np.ndarray:
    """Joint positions (T,55,3) whose x swings between beats (velocity 0 at each beat) plus a
    constant y drift.

    Every joint's speed then has strict minima at the beat frames, of value `drift` (above the
    threshold).
    """
    x = np.zeros(n_frames)
    edges = np.concatenate([[0], beat_frames, [n_frames - 1]])
    for k, (a, b) in enumerate(itertools.pairwise(edges)):
        u = (np.arange(a, b + 1) - a) / max(b - a, 1)
        x[a : b + 1] = (1 - np.cos(np.pi * u)) / 2 if k % 2 == 0 else (1 + np.cos(np.pi * u)) / 2
    y = 0.3 * np.arange(n_frames) / fps
    pos = np.stack([x, y, np.zeros(n_frames)], axis=1)
    return np.repeat(pos[:, None, :], 55, axis=1)


# ---------- metric class ----------


def make_pair(index, gen_joints, ref_joints, audio=None, sem=None, words=None, fps=30):
    t = gen_joints.shape[0]
    motion = Motion(np.zeros((t, 165)), np.zeros((t, 3)), np.zeros(10), np.zeros((t, 100)), fps)
    return MotionPair(
        index=index,
        sequence_id=f"s{index}",
        generated=motion,
        reference=motion,
        gen_body=BodyOutput(torch.as_tensor(gen_joints, dtype=torch.float32), None),
        ref_body=BodyOutput(torch.as_tensor(ref_joints, dtype=torch.float32), None),
        audio=audio,
        sem=sem,
        words=words,
    )


def bc_pairs(n: int):
    """`n` sequences of 14–22 s: reference on the onsets, generated shifted by 1 s."""
    pairs = []
    for i in range(n):
        seconds = 14 + 2 * (i % 5)
        audio, onsets = click_track(seconds, seed=10 + i)
        frames = np.round(first_of_clusters(onsets) * 30).astype(int)
        t = seconds * 30
        ref = positions_with_speed_minima(t, frames, 30)
        gen = positions_with_speed_minima(t, np.clip(frames + 30, 1, t - 2), 30)
        pairs.append(make_pair(i, gen, ref, audio=audio))
    return pairs


MEAN_SPEED = [1.0] * 55


def srgr_pairs(n):
    rng = np.random.default_rng(3)
    pairs = []
    for i in range(n):
        t = 30 + 7 * i
        ref = rng.standard_normal((t, 55, 3)) * 0.1
        gen = ref + rng.standard_normal((t, 55, 3)) * 0.06
        sem = [SemInterval("iconic", 0.1 * i, 0.1 * i + 0.6, 0.2 + 0.1 * i)]
        pairs.append(make_pair(i, gen, ref, sem=sem))
    return pairs
