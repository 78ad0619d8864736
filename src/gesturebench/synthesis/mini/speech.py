"""Mini-BEAT2 audio: speech-like sound for a speech plan, so that onset detection and loudness line
up with the words.

Each syllable is a source-filter vowel — a sawtooth at the speaker's f0 (gliding down 10 %) through
three formant resonators — preceded by a 15 ms consonant burst, with an 8 ms attack, so
``librosa.onset.onset_detect`` fires at syllable starts; stressed syllables are louder and higher.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

from gesturebench.data.records import FPS, SAMPLE_RATE
from gesturebench.synthesis.mini.plan import SequencePlan
from gesturebench.synthesis.mini.speakers import SpeakerStyle


def _resonator(frequency: float, bandwidth: float, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """A two-pole formant resonator (b, a) with unit gain near its peak."""
    r = np.exp(-np.pi * bandwidth / sr)
    return np.array([1.0 - r]), np.array(
        [1.0, -2.0 * r * np.cos(2 * np.pi * frequency / sr), r * r]
    )


def synthesize_speech(
    rng: np.random.Generator, style: SpeakerStyle, plan: SequencePlan, sr: int = SAMPLE_RATE
) -> np.ndarray:
    """Speech-like float32 audio for `plan`: one voiced, formant-filtered syllable per plan
    syllable."""
    n = plan.n_frames * sr // FPS
    y = np.zeros(n)
    attack, release, burst_len = int(0.008 * sr), int(0.03 * sr), int(0.015 * sr)
    for syl in plan.syllables:
        i0, m = round(syl.start * sr), round((syl.end - syl.start) * sr)
        m = min(m, n - i0)
        tt = np.arange(m) / sr
        f0 = (
            style.f0
            * (1.12 if syl.stressed else 1.0)
            * rng.uniform(0.94, 1.06)
            * (1.05 - 0.1 * tt / tt[-1])
        )
        voiced = 2.0 * (np.cumsum(f0 / sr) % 1.0) - 1.0
        for formant, bandwidth in (
            (rng.uniform(300, 800), 90),
            (rng.uniform(900, 2300), 120),
            (rng.uniform(2400, 3000), 200),
        ):
            voiced = lfilter(*_resonator(formant, bandwidth, sr), voiced)
        envelope = np.minimum(1.0, np.minimum(np.arange(m) / attack, (m - np.arange(m)) / release))
        envelope = np.sin(0.5 * np.pi * envelope) ** 2 * (1.0 - 0.3 * tt / tt[-1])
        gain = (0.17 if syl.stressed else 0.1) * rng.uniform(0.85, 1.1)
        segment = gain * envelope * voiced / (np.std(voiced) + 1e-12)
        burst = np.diff(rng.standard_normal(burst_len + 1)) * np.hanning(burst_len) * 0.4 * gain
        segment[: min(burst_len, m)] += burst[: min(burst_len, m)]
        y[i0 : i0 + m] += segment
    y += 3e-4 * rng.standard_normal(n)
    return np.clip(y, -0.99, 0.99).astype(np.float32)


def frame_envelope(audio: np.ndarray, n_frames: int, sr: int = SAMPLE_RATE) -> np.ndarray:
    """Per-motion-frame RMS of `audio`, scaled to [0, 1] by its 95th percentile."""
    bounds = np.arange(n_frames) * sr // FPS
    power = np.add.reduceat(audio.astype(np.float64) ** 2, bounds) / np.diff(
        np.append(bounds, len(audio))
    )
    rms = np.sqrt(power)
    return np.clip(rms / (np.percentile(rms, 95) + 1e-9), 0.0, 1.0)
