"""Mini-BEAT2: a synthetic dataset in BEAT2's exact on-disk layout, generated on first use in
seconds.

Why: every part of gesturebench (metrics, encoders, annotation, studies, the tests) needs data whose
structure is known — which words are stressed, where the semantic gestures are and of which class —
and that runs offline on a laptop. Real BEAT2 is large and licensed; this generator writes the same
files, so the same reader serves both.

Layout (as in ``beat_english_v2.0.0``): ``smplxflame_30/{id}.npz`` (BEAT2's keys and dtypes),
``wave16k/{id}.wav`` (16 kHz mono float), ``textgrid/{id}.TextGrid`` (tier ``words``),
``sem/{id}.txt`` (BEAT's six tab-separated columns), ``train_test_split.csv`` (``id,type``). Ids
read ``{speaker}_{name}_0_{k}_{k}``. Sizes:

* ``default``: 4 speakers × 6 sequences = 16 train, 4 val, 4 test (one per speaker, 30–36 s; others
  30–60 s).
* ``standard``: a BEAT2-sized test split (265 sequences of 10–75 s, lognormal like BEAT2's, ≈ 2 h
  over 25 speakers) plus 25 train and 5 val sequences of 30–60 s.

Generative model (all draws from ``numpy.random.default_rng`` keyed by (seed, speaker[, sequence]),
so a sequence does not depend on which others are generated; same seed → byte-identical arrays):

* **Speaker style**: voice pitch f0 ∈ [100, 220] Hz, syllable-duration range inside [0.12, 0.25] s
  (tempo), gesture amplitude, handedness, beat rate, idle-sway scale, breathing rate, rest-arm
  variation and 300 betas.
* **Speech**: phrases of 2–8 words separated by 0.25–0.7 s pauses; a word has 1–3 syllables (30–50
  ms closures inside, 60–140 ms gaps between words); content words are stressed on their first
  syllable (louder, higher). Each syllable is a source-filter vowel — a sawtooth at f0 (gliding down
  10 %) through three formant resonators — preceded by a 15 ms consonant burst, with an 8 ms attack,
  so ``librosa.onset.onset_detect`` fires at syllable starts. Words come from a small filler
  vocabulary; the TextGrid holds every word with its syllables' span.
* **Semantic intervals** (``sem``), one every 4–6 s, classes cycling through a shuffled deictic /
  iconic / metaphoric / beat order: the phrase carries a class keyword (deictic: there, you, this…;
  iconic: big, round, box…; metaphoric: idea, whole, offer…; beat: really, never…) that starts 0.1 s
  after the interval, which lasts 0.6–1.5 s (beat: 1.0–1.5 s) and lies inside the phrase's words.
  Names follow BEAT's codes (``01_beat_align``, ``02..04_deictic_{l,m,h}``, ``05..07_iconic_*``,
  ``08..10_metaphoric_*``), so the class is the name's first word (`annotations_io.sem_label`);
  score ∈ [0.3, 1.0] by quality level (beat: 0.3, the lowest — real BEAT gives beats 0.1); keywords
  = the class keyword.
* **Motion** (SMPL-X axis-angle in BEAT2's joint order, 30 fps), a sum of smooth layers around the
  speaker's rest pose (arms hanging, elbows soft, fingers relaxed): breathing on the spine; idle
  sway and weight shifts of the pelvis (±1–3.5 cm, 0.8–1.5 s transitions) with the pelvis rolling
  toward the unloaded side, legs solved by two-bone IK so both ankles stay fixed in world space and
  the feet flat (`REST_BODY_JOINTS`); head drift and small nods on strokes; slow finger-curl
  articulation; jaw opening with the audio's frame RMS; smooth small expressions (the first
  following the audio). Gestures blend the arms toward class forms with C² (smootherstep) envelopes
  rising over the 0.35 s before an interval and falling from its last 0.05 s to 0.3 s after it:
  deictic = the dominant arm extended forward, index finger out, other fingers curled, held; iconic
  = both open hands tracing a circle or a box outline in front of the chest; metaphoric = both
  forearms supinated (palms up), open hands moving outward; beat = forearm(s) raised to gesture
  space. Beat strokes (inside beat intervals at every stressed word, elsewhere at some stressed
  words, never near a semantic gesture) lift the forearm over 0.3 s and strike down in 0.15 s,
  ending with zero velocity exactly on the stressed word's onset; a slow forward/back shoulder
  component keeps the top of the lift from being a stop.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from itertools import cycle
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.ndimage import gaussian_filter1d
from scipy.signal import lfilter
from scipy.spatial.transform import Rotation

from gesturebench.data.annotations_io import write_sem, write_textgrid_words
from gesturebench.data.audio import write_wav
from gesturebench.data.beat2 import SPLIT_FILE, sequence_paths, write_motion_npz
from gesturebench.data.records import (
    FPS,
    N_EXPRESSIONS,
    N_JOINTS,
    SAMPLE_RATE,
    Motion,
    SemInterval,
    Word,
)
from gesturebench.errors import ConfigError, DataError
from gesturebench.gestures import SEMANTIC_CLASSES

GENERATOR_VERSION = 1
MARKER = ".complete"
SIZES = ("default", "standard")
#: The gesture forms generated, in the order drawn from (alphabetical semantic classes, then beat).
CLASSES = (*sorted(SEMANTIC_CLASSES), "beat")

SPEAKER_NAMES = {
    1: "wayne", 2: "scott", 3: "solomon", 4: "lawrence", 5: "stewart", 6: "carla", 7: "sophie", 8: "catherine",
    9: "miranda", 10: "kieks", 11: "nidal", 12: "zhao", 13: "lu", 14: "zhang", 15: "carlos", 16: "jorge",
    17: "itoi", 18: "daiki", 19: "jaime", 20: "li", 21: "ayana", 22: "luqi", 23: "hailing", 24: "kexin", 25: "goto",
}
DEFAULT_SPEAKERS = (2, 4, 6, 8)

# Keyword vocabularies per class, with syllable counts.
KEYWORDS = {
    "deictic": {"there": 1, "you": 1, "this": 1, "here": 1, "them": 1},
    "iconic": {"big": 1, "round": 1, "box": 1, "tall": 1, "wide": 1},
    "metaphoric": {"idea": 3, "whole": 1, "offer": 2, "concept": 2, "future": 2},
    "beat": {"really": 2, "never": 2, "always": 2, "very": 2, "must": 1},
}
FILLERS = {
    1: ("the", "and", "we", "to", "it", "is", "of", "a", "in", "what", "when", "I", "was", "for", "but", "all",
        "know", "think", "just", "so"),
    2: ("about", "people", "maybe", "going", "little", "something", "into", "other", "thinking", "moment",
        "doing", "started"),
    3: ("everything", "remember", "probably", "family", "together", "beautiful", "important"),
}
# BEAT's gesture-type codes: 1 beat, 2–4 deictic, 5–7 iconic, 8–10 metaphoric (low / middle / high
# quality).
_SEM_CODE = {"deictic": 2, "iconic": 5, "metaphoric": 8}
_LEVELS = {"l": (0.3, 0.55), "m": (0.55, 0.8), "h": (0.8, 1.0)}
BEAT_SEM_NAME, BEAT_SCORE = "01_beat_align", 0.3

# Approximate SMPL-X neutral rest positions (metres, y up, facing +z, left = +x) of the 22 body
# joints: enough for the leg IK that keeps the feet planted; the real model's offsets differ by
# millimetres to centimetres.
REST_BODY_JOINTS = np.array([
    [0.003, -0.351, 0.012], [0.061, -0.444, -0.014], [-0.060, -0.455, -0.009], [0.000, -0.242, -0.016],
    [0.116, -0.823, -0.002], [-0.104, -0.818, -0.005], [0.010, -0.106, 0.006], [0.072, -1.224, -0.046],
    [-0.088, -1.219, -0.044], [-0.002, -0.055, 0.026], [0.119, -1.281, 0.076], [-0.118, -1.283, 0.079],
    [-0.013, 0.155, -0.013], [0.044, 0.070, -0.007], [-0.049, 0.069, -0.012], [0.011, 0.266, 0.004],
    [0.171, 0.111, -0.028], [-0.176, 0.106, -0.021], [0.427, 0.075, -0.050], [-0.423, 0.073, -0.048],
    [0.683, 0.083, -0.047], [-0.679, 0.080, -0.044],
])
# Syllables start ONSET_LEAD before a multiple of 32 ms (librosa's default 512-sample hop at 16
# kHz): its onset detector (128 ms frames, envelope shifted by n_fft / 2) then reports each syllable
# exactly once, 44 ms late.
ONSET_HOP_S = 512 / SAMPLE_RATE
ONSET_LEAD = 0.012
REST_TRANS_Y = 1.29
_LEGS = ((1, 4, 7), (2, 5, 8))  # hip, knee, ankle of the left and right leg
_KNEE_SOFTEN = 0.004  # the pelvis sits this much (m) below straight legs, so weight shifts never overstretch them

# Arm parameters, in the left arm's convention (the right arm is its mirror image, rotvec (x, -y,
# -z)).
COLLAR, LOWER, FLEX, YAW, TWIST, ELBOW, PRON, WFLEX, WDEV = range(9)
N_ARM = 9
ARM_JOINTS = ((13, 16, 18, 20), (14, 17, 19, 21))  # collar, shoulder, elbow, wrist of the left and right arm
_REST_ARM = np.array([0.0, 1.38, 0.12, 0.0, 0.0, 0.35, -0.3, 0.1, 0.0])
BEAT_READY = np.array([0.03, 1.3, 0.35, 0.05, 0.0, 1.15, -0.6, 0.1, 0.0])  # forearms raised, ready to strike beats
_PALM_UP = -1.5
# Finger curls (index, middle, pinky, ring, thumb) of the hand shapes; curl is shared by a finger's
# three joints.
RELAXED = np.array([0.30, 0.40, 0.55, 0.48, 0.15])
OPEN = np.array([0.03, 0.03, 0.06, 0.05, 0.0])
POINT = np.array([0.0, 1.35, 1.45, 1.40, 0.7])
BEAT_HAND = np.array([0.35, 0.45, 0.60, 0.52, 0.2])
_DISTAL = np.array([0.8, 1.0, 0.7])  # share of a finger's curl at its three joints
_SPREAD_SIGN = np.array([-1.0, 0.0, 1.0, 0.5])  # index and pinky spread apart (rotation about the palm normal)
_THUMB_REST = np.array([[0.25, 0.25, 0.15], [0.0, 0.1, -0.2], [0.0, 0.1, -0.2]])
_THUMB_AXIS = np.array([0.0, 0.3, -1.0]) / np.hypot(0.3, 1.0)


@dataclass(frozen=True)
class SpeakerStyle:
    """What makes one synthetic speaker recognisable (drawn once per speaker and seed)."""

    speaker: int
    name: str
    f0: float
    syllable_range: tuple[float, float]
    amplitude: float
    beat_rate: float
    right_handed: bool
    sway: float
    breath_hz: float
    rest_arm: np.ndarray  # (2, N_ARM): left and right arm, left-arm convention
    betas: np.ndarray  # (300,)

    @property
    def dominant(self) -> int:
        """0 = left arm, 1 = right arm."""
        return 1 if self.right_handed else 0


@dataclass(frozen=True)
class Syllable:
    """One voiced syllable (seconds); a stressed one is louder, higher and may carry a beat stroke.
    """

    start: float
    end: float
    stressed: bool


@dataclass(frozen=True)
class Stroke:
    """A beat stroke whose downward motion ends (zero velocity) at `time`, on `arms` (0 left, 1
    right)."""

    time: float
    arms: tuple[int, ...]
    amplitude: float


@dataclass(frozen=True)
class SequencePlan:
    """The timeline of one sequence: what is said when, where the gestures are; audio and motion
    follow from it."""

    n_frames: int
    words: tuple[Word, ...]
    syllables: tuple[Syllable, ...]
    sem: tuple[SemInterval, ...]
    strokes: tuple[Stroke, ...]

    @property
    def duration(self) -> float:
        return self.n_frames / FPS


@dataclass(frozen=True)
class SequenceSpec:
    """One sequence of a mini-BEAT2 size: its id, speaker, split and length."""

    id: str
    speaker: int
    take: int
    split: str
    n_frames: int


@dataclass(frozen=True)
class GeneratedSequence:
    """Everything generated for one sequence, before it is written to disk."""

    spec: SequenceSpec
    plan: SequencePlan
    motion: Motion
    audio: np.ndarray


# ----------------------------------------------------------------------------------------------
# small maths


def smootherstep(x: np.ndarray) -> np.ndarray:
    """Perlin's C² step from 0 (x ≤ 0) to 1 (x ≥ 1): zero velocity and acceleration at both ends."""
    x = np.clip(x, 0.0, 1.0)
    return x * x * x * (x * (6.0 * x - 15.0) + 10.0)


def window(t: np.ndarray, rise0: float, rise1: float, fall0: float, fall1: float) -> np.ndarray:
    """0 → 1 over [rise0, rise1], 1 until fall0, → 0 over [fall0, fall1] (smootherstep ramps)."""
    return smootherstep((t - rise0) / (rise1 - rise0)) - smootherstep((t - fall0) / (fall1 - fall0))


def onset_grid(t: float) -> float:
    """The first time ≥ `t` that lies `ONSET_LEAD` s before a multiple of librosa's 512-sample hop
    at 16 kHz."""
    return round(np.ceil((t + ONSET_LEAD) / ONSET_HOP_S - 1e-9) * ONSET_HOP_S - ONSET_LEAD, 4)


def smooth_noise(rng: np.random.Generator, n: int, dims: int, cutoff_hz: float, rate: float = FPS) -> np.ndarray:
    """(n, dims) Gaussian noise low-passed by a Gaussian kernel (σ = rate / 2π·cutoff), unit
    variance."""
    sigma = rate / (2.0 * np.pi * cutoff_hz)
    smoothed = gaussian_filter1d(rng.standard_normal((n, dims)), sigma, axis=0, mode="reflect")
    return smoothed * np.sqrt(2.0 * np.sqrt(np.pi) * sigma)  # the kernel's output std is (2√π σ)^-1/2


def _axis_rotation(axis: int, angle: np.ndarray) -> Rotation:
    rotvec = np.zeros((len(angle), 3))
    rotvec[:, axis] = angle
    return Rotation.from_rotvec(rotvec)


def _align(a: np.ndarray, b: np.ndarray) -> Rotation:
    """The smallest rotations taking the fixed vector `a` (3,) onto each row of `b` (T,3)."""
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    axis = np.cross(a, b)
    sin = np.linalg.norm(axis, axis=-1, keepdims=True)
    return Rotation.from_rotvec(axis / np.maximum(sin, 1e-12) * np.arctan2(sin, b @ a[:, None]))


def mirror(rotvec: np.ndarray) -> np.ndarray:
    """The left/right mirror image of axis-angle rotations (reflection through the x = 0 plane)."""
    return rotvec * np.array([1.0, -1.0, -1.0])


# ----------------------------------------------------------------------------------------------
# sizes and styles


def sequence_specs(seed: int, size: str) -> list[SequenceSpec]:
    """The sequences of a mini-BEAT2 `size` ("default" or "standard"), in split-file order."""
    if size not in SIZES:
        raise ConfigError(f"mini-BEAT2 size {size!r} is not one of {SIZES}")
    rng = np.random.default_rng([seed, 2])
    if size == "default":
        plan = [(spk, split) for spk in DEFAULT_SPEAKERS for split in ("train",) * 4 + ("val", "test")]
        lengths = [rng.uniform(30, 36) if split == "test" else rng.uniform(30, 60) for _, split in plan]
    else:
        speakers = sorted(SPEAKER_NAMES)
        test = [(speakers[i % len(speakers)], "test") for i in range(265)]
        plan = [(spk, "train") for spk in speakers] + [(spk, "val") for spk in speakers[:5]] + test
        test_lengths = rng.lognormal(np.log(24.0), 0.55, len(test))
        test_lengths = np.clip(test_lengths * 7200.0 / test_lengths.sum(), 10.0, 75.0)
        lengths = list(rng.uniform(30, 60, len(plan) - len(test))) + list(test_lengths)
    takes: dict[int, int] = {}
    specs = []
    for (spk, split), seconds in zip(plan, lengths):
        take = takes[spk] = takes.get(spk, 0) + 1
        n_frames = 3 * round(float(seconds) * FPS / 3)  # a multiple of 3 frames = a whole number of 16 kHz samples
        specs.append(SequenceSpec(f"{spk}_{SPEAKER_NAMES[spk]}_0_{take}_{take}", spk, take, split, n_frames))
    return specs


def speaker_style(seed: int, speaker: int) -> SpeakerStyle:
    """The style of `speaker` under `seed`."""
    rng = np.random.default_rng([seed, 0, speaker])
    fast = rng.uniform(0.0, 0.04)
    betas = rng.standard_normal(300) * np.where(np.arange(300) < 10, 0.7, np.where(np.arange(300) < 50, 0.4, 0.08))
    rest = _REST_ARM + rng.uniform(-1, 1, N_ARM) * np.array([0.04, 0.06, 0.05, 0.04, 0.08, 0.12, 0.15, 0.08, 0.04])
    asym = rng.uniform(-1, 1, (2, N_ARM)) * np.array([0.02, 0.03, 0.03, 0.02, 0.03, 0.05, 0.05, 0.03, 0.02])
    return SpeakerStyle(
        speaker=speaker,
        name=SPEAKER_NAMES[speaker],
        f0=float(rng.uniform(100, 220)),
        syllable_range=(0.12 + fast, 0.21 + fast),
        amplitude=float(rng.uniform(0.75, 1.25)),
        beat_rate=float(rng.uniform(0.3, 0.6)),
        right_handed=bool(rng.random() < 0.8),
        sway=float(rng.uniform(0.6, 1.3)),
        breath_hz=float(rng.uniform(0.2, 0.3)),
        rest_arm=rest + asym,
        betas=betas.astype(np.float32),
    )


# ----------------------------------------------------------------------------------------------
# speech plan


class _Transcript:
    """Accumulates words and syllables left to right, drawing their timing from the speaker's style.
    """

    def __init__(self, rng: np.random.Generator, style: SpeakerStyle):
        self.rng, self.style = rng, style
        self.words: list[Word] = []
        self.syllables: list[Syllable] = []
        self.stressed_starts: list[float] = []

    def say(self, t: float, text: str, n_syllables: int, stressed: bool) -> float:
        """Append `text` starting at `t`; returns its end time."""
        lo, hi = self.style.syllable_range
        start = t = onset_grid(t)
        for i in range(n_syllables):
            if i:
                t = onset_grid(t + self.rng.uniform(0.03, 0.05))
            stress = stressed and i == 0
            duration = min(self.rng.uniform(lo, hi) * (1.15 if stress else 1.0), 0.25)
            self.syllables.append(Syllable(t, round(t + duration, 4), stress))
            t += duration
        self.words.append(Word(text, start, round(t, 4)))
        if stressed:
            self.stressed_starts.append(start)
        return t

    def filler(self, t: float, stress_probability: float) -> float:
        n = int(self.rng.choice([1, 2, 3], p=[0.5, 0.35, 0.15]))
        return self.say(t, str(self.rng.choice(FILLERS[n])), n, bool(self.rng.random() < stress_probability))

    def gap(self) -> float:
        return float(self.rng.uniform(0.06, 0.14))

    def keep_until(self, end: float, start: float) -> float:
        """Drop the words that end after `end`; returns where the kept words end (`start` if none is
        kept)."""
        self.words = [w for w in self.words if w.end <= end]
        last = self.words[-1].end if self.words else start
        self.syllables = [s for s in self.syllables if s.end <= last]
        self.stressed_starts = [s for s in self.stressed_starts if s < last]
        return last

    def extend(self, other: _Transcript) -> None:
        self.words += other.words
        self.syllables += other.syllables
        self.stressed_starts += other.stressed_starts


def _semantic_name(rng: np.random.Generator, label: str) -> tuple[str, float]:
    """A BEAT-style interval name and score for `label`."""
    if label == "beat":
        return BEAT_SEM_NAME, BEAT_SCORE
    level = str(rng.choice(list(_LEVELS)))
    code = _SEM_CODE[label] + list(_LEVELS).index(level)
    return f"{code:02d}_{label}_{level}", round(float(rng.uniform(*_LEVELS[level])), 2)


def plan_sequence(rng: np.random.Generator, style: SpeakerStyle, n_frames: int) -> SequencePlan:
    """Draw the words, syllables, semantic intervals and beat strokes of one sequence."""
    duration = n_frames / FPS
    limit = duration - 0.4
    classes = cycle(rng.permutation(CLASSES))
    sem: list[SemInterval] = []
    t = float(rng.uniform(0.4, 0.9))
    next_event = t + float(rng.uniform(1.0, 2.5))
    text = _Transcript(rng, style)
    while t < limit - 1.0:
        trial = _Transcript(rng, style)
        if t >= next_event:
            label = str(next(classes))
            for _ in range(int(rng.integers(0, 2))):
                t = trial.filler(t, 0.3) + trial.gap()
            keyword = str(rng.choice(list(KEYWORDS[label])))
            t = trial.say(t, keyword, KEYWORDS[label][keyword], stressed=True)
            start = max(trial.words[0].start, trial.words[-1].start - 0.1)
            end = start + float(rng.uniform(1.0, 1.5) if label == "beat" else rng.uniform(0.6, 1.5))
            while t < end + 0.05:
                t = trial.filler(t + trial.gap(), 0.75 if label == "beat" else 0.3)
            for _ in range(int(rng.integers(0, 3))):
                t = trial.filler(t + trial.gap(), 0.3)
            if t > limit:
                break
            name, score = _semantic_name(rng, label)
            sem.append(SemInterval(name, round(start, 3), round(end, 3), score, keyword, label))
            next_event = end + float(rng.uniform(2.2, 3.8))
        else:  # an ordinary phrase, ending early when the next semantic interval is due
            phrase_start = t
            for i in range(int(rng.integers(2, 9))):
                t = trial.filler(t + (trial.gap() if i else 0.0), 0.35)
                if t > next_event:
                    break
            t = trial.keep_until(limit, phrase_start)
        text.extend(trial)
        t += float(rng.uniform(0.25, 0.7))
    strokes = _plan_strokes(rng, style, text.stressed_starts, sem)
    return SequencePlan(n_frames, tuple(text.words), tuple(text.syllables), tuple(sem), strokes)


def _plan_strokes(rng: np.random.Generator, style: SpeakerStyle, stressed: list[float],
                  sem: list[SemInterval]) -> tuple[Stroke, ...]:
    """Beat strokes: every stressed word in a beat interval, some elsewhere, none near a semantic
    gesture."""
    strokes: list[Stroke] = []
    both_in = {iv.start: bool(rng.random() < 0.35) for iv in sem if iv.label == "beat"}
    for onset in stressed:
        beat = next((iv for iv in sem if iv.label == "beat" and iv.start <= onset <= iv.end - 0.05), None)
        near_semantic = any(iv.label != "beat" and iv.start - 0.8 <= onset <= iv.end + 0.6 for iv in sem)
        near_beat_edge = beat is None and any(iv.label == "beat" and iv.start - 0.8 <= onset <= iv.end + 0.6
                                              for iv in sem)
        if near_semantic or near_beat_edge or onset < 0.6 or (strokes and onset - strokes[-1].time < 0.5):
            continue
        if beat is not None:
            arms = (0, 1) if both_in[beat.start] else (style.dominant,)
            strokes.append(Stroke(onset, arms, style.amplitude * float(rng.uniform(0.8, 1.0))))
        elif rng.random() < style.beat_rate:
            strokes.append(Stroke(onset, (style.dominant,), style.amplitude * float(rng.uniform(0.35, 0.6))))
    return tuple(strokes)


# ----------------------------------------------------------------------------------------------
# audio


def _resonator(frequency: float, bandwidth: float, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """A two-pole formant resonator (b, a) with unit gain near its peak."""
    r = np.exp(-np.pi * bandwidth / sr)
    return np.array([1.0 - r]), np.array([1.0, -2.0 * r * np.cos(2 * np.pi * frequency / sr), r * r])


def synthesize_speech(rng: np.random.Generator, style: SpeakerStyle, plan: SequencePlan,
                      sr: int = SAMPLE_RATE) -> np.ndarray:
    """Speech-like float32 audio for `plan`: one voiced, formant-filtered syllable per plan
    syllable."""
    n = plan.n_frames * sr // FPS
    y = np.zeros(n)
    attack, release, burst_len = int(0.008 * sr), int(0.03 * sr), int(0.015 * sr)
    for syl in plan.syllables:
        i0, m = round(syl.start * sr), round((syl.end - syl.start) * sr)
        m = min(m, n - i0)
        tt = np.arange(m) / sr
        f0 = style.f0 * (1.12 if syl.stressed else 1.0) * rng.uniform(0.94, 1.06) * (1.05 - 0.1 * tt / tt[-1])
        voiced = 2.0 * (np.cumsum(f0 / sr) % 1.0) - 1.0
        for formant, bandwidth in ((rng.uniform(300, 800), 90), (rng.uniform(900, 2300), 120),
                                   (rng.uniform(2400, 3000), 200)):
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
    power = np.add.reduceat(audio.astype(np.float64) ** 2, bounds) / np.diff(np.append(bounds, len(audio)))
    rms = np.sqrt(power)
    return np.clip(rms / (np.percentile(rms, 95) + 1e-9), 0.0, 1.0)


# ----------------------------------------------------------------------------------------------
# motion


def _leg_ik(root: Rotation, pelvis: np.ndarray, ankles: np.ndarray, foot: Rotation,
            forward: np.ndarray) -> dict[int, np.ndarray]:
    """Hip, knee and ankle rotvecs that put each ankle at its fixed world position with the foot at
    `foot`.

    Two-bone IK per leg on `REST_BODY_JOINTS`: the knee lies in the plane of the hip–ankle line and
    `forward`.
    """
    J = REST_BODY_JOINTS
    out = {}
    for (hip, knee, ankle), target in zip(_LEGS, ankles):
        h = pelvis + root.apply(J[hip] - J[0])
        thigh0, shin0 = J[knee] - J[hip], J[ankle] - J[knee]
        l1, l2 = np.linalg.norm(thigh0), np.linalg.norm(shin0)
        to_ankle = target - h
        d = np.minimum(np.linalg.norm(to_ankle, axis=-1, keepdims=True), 0.9999 * (l1 + l2))
        u = to_ankle / np.linalg.norm(to_ankle, axis=-1, keepdims=True)
        along = (l1**2 - l2**2 + d**2) / (2 * d)
        off = np.sqrt(np.maximum(l1**2 - along**2, 0.0))
        pole = forward - (u @ forward)[:, None] * u
        pole /= np.linalg.norm(pole, axis=-1, keepdims=True)
        knee_pos = h + along * u + off * pole
        thigh = _align(thigh0, knee_pos - h)
        shin = _align(shin0, target - knee_pos)
        out[hip] = (root.inv() * thigh).as_rotvec()
        out[knee] = (thigh.inv() * shin).as_rotvec()
        out[ankle] = (shin.inv() * foot).as_rotvec()
    return out


def arm_rotvecs(params: np.ndarray) -> np.ndarray:
    """(T, 4, 3) collar, shoulder, elbow, wrist rotvecs of a left arm from its (T, N_ARM)
    parameters."""
    p = params
    collar = _axis_rotation(2, p[:, COLLAR])
    shoulder = (_axis_rotation(1, p[:, YAW]) * _axis_rotation(0, -p[:, FLEX]) * _axis_rotation(2, -p[:, LOWER])
                * _axis_rotation(0, p[:, TWIST]))
    elbow = _axis_rotation(1, -p[:, ELBOW]) * _axis_rotation(0, p[:, PRON])
    wrist = _axis_rotation(2, -p[:, WFLEX]) * _axis_rotation(1, p[:, WDEV])
    return np.stack([r.as_rotvec() for r in (collar, shoulder, elbow, wrist)], axis=1)


def hand_rotvecs(curl: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """(T, 15, 3) left-hand joint rotvecs (index, middle, pinky, ring, thumb × 3) from finger curls
    (T, 5)."""
    T = len(curl)
    out = np.zeros((T, 5, 3, 3))
    out[:, :4, :, 2] = -curl[:, :4, None] * _DISTAL
    out[:, :4, 0, 1] = spread[:, None] * _SPREAD_SIGN
    out[:, 4] = _THUMB_REST + curl[:, 4, None, None] * _THUMB_AXIS * _DISTAL[:, None]
    return out.reshape(T, 15, 3)


def _gesture_form(rng: np.random.Generator, style: SpeakerStyle, iv: SemInterval, t: np.ndarray,
                  strokes: tuple[Stroke, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Target arm parameters (T, 2, N_ARM) and finger curls (2, 5) of the gesture of interval `iv`.
    """
    arms = np.broadcast_to(style.rest_arm, (len(t), 2, N_ARM)).copy()
    hands = np.stack([RELAXED, RELAXED])
    dom = style.dominant
    phase = smootherstep((t - iv.start - 0.05) / max(iv.end - iv.start - 0.15, 0.1))
    if iv.label == "deictic":
        arms[:, dom] = [0.05, 1.45, rng.uniform(1.05, 1.3), rng.uniform(-0.25, 0.55), 0.0, 0.12, 0.4, 0.0, 0.0]
        hands[dom] = POINT
    elif iv.label == "iconic":
        arms[:] = [0.05, 1.3, 0.75, 0.1, 0.0, 1.05, -0.5, -0.1, 0.0]
        radius = 0.22 * style.amplitude * min(1.0, iv.end - iv.start)  # short intervals: a smaller shape
        if rng.random() < 0.5:  # circle
            arms[:, :, FLEX] += (radius * np.sin(2 * np.pi * phase))[:, None]
            arms[:, :, YAW] += (radius * (1 - np.cos(2 * np.pi * phase)))[:, None]
        else:  # box outline: four sides, each eased, stopping at the corners
            corners = radius * np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], dtype=float)
            side = np.minimum((phase * 4).astype(int), 3)
            frac = smootherstep(phase * 4 - side)[:, None]
            yaw_flex = corners[side] + (corners[side + 1] - corners[side]) * frac
            arms[:, :, YAW] += yaw_flex[:, :1]
            arms[:, :, FLEX] += yaw_flex[:, 1:]
        hands[:] = OPEN
    elif iv.label == "metaphoric":
        arms[:] = [0.05, 1.32, 0.55, 0.0, 0.0, 1.3, _PALM_UP, -0.25, 0.0]
        arms[:, :, YAW] += (0.5 * style.amplitude * phase)[:, None]
        hands[:] = OPEN
    else:  # beat: forearms in gesture space; the strokes themselves come from the plan
        active = sorted({arm for s in strokes if iv.start <= s.time <= iv.end for arm in s.arms}) or [dom]
        arms[:, active] = BEAT_READY
        hands[active] = BEAT_HAND
    return arms, hands


def stroke_offsets(t: np.ndarray, strokes: tuple[Stroke, ...]) -> np.ndarray:
    """(T, 2, N_ARM) arm-parameter offsets of the beat strokes.

    Each stroke lifts the forearm (elbow flexion) over 0.3 s and strikes it down in 0.15 s, stopping
    on the onset; the hand drops at the wrist with the strike; a shoulder component moves forward
    through lift and strike (so the top of the lift is no stop) and eases back over 0.5 s from the
    onset.
    """
    out = np.zeros((len(t), 2, N_ARM))
    for s in strokes:
        lift = smootherstep((t - (s.time - 0.45)) / 0.3)
        strike = smootherstep((t - (s.time - 0.15)) / 0.15)
        forward = smootherstep((t - (s.time - 0.45)) / 0.45)
        back = smootherstep((t - s.time) / 0.5)
        delta = np.zeros((len(t), N_ARM))
        delta[:, ELBOW] = 0.28 * (lift - strike)
        delta[:, FLEX] = 0.12 * (forward - back)
        delta[:, WFLEX] = 0.25 * (strike - back)
        out[:, list(s.arms)] += s.amplitude * delta[:, None]
    return out


def _weight_shifts(rng: np.random.Generator, t: np.ndarray, scale: float) -> np.ndarray:
    """Lateral pelvis offset (m): levels of ±1–3.5 cm held for 6–14 s, changed over 0.8–1.5 s."""
    shift = np.zeros_like(t)
    level, when, side = 0.0, float(rng.uniform(1.0, 6.0)), float(rng.choice([-1.0, 1.0]))
    while when < t[-1]:
        new = side * float(rng.uniform(0.01, 0.035)) * scale
        shift += (new - level) * smootherstep((t - when) / float(rng.uniform(0.8, 1.5)))
        level, side, when = new, -side, when + float(rng.uniform(6.0, 14.0))
    return shift


def synthesize_motion(rng: np.random.Generator, style: SpeakerStyle, plan: SequencePlan,
                      audio: np.ndarray) -> Motion:
    """SMPL-X motion for `plan` (see the module docstring for the layers)."""
    n = plan.n_frames
    t = np.arange(n) / FPS
    J = REST_BODY_JOINTS
    poses = np.zeros((n, N_JOINTS, 3))

    def noise(dims: int, cutoff_hz: float) -> np.ndarray:
        return smooth_noise(rng, n, dims, cutoff_hz)

    # Stance, sway and weight shifts; the legs follow by IK so the ankles stay where they started.
    facing = Rotation.from_rotvec([0.0, rng.uniform(-0.15, 0.15), 0.0])
    trans0 = np.array([rng.uniform(-0.1, 0.1), REST_TRANS_Y, rng.uniform(-0.1, 0.1)])
    ankles = np.stack([trans0 + J[0] + facing.apply(J[ankle] - J[0]) for _, _, ankle in _LEGS])
    local = np.zeros((n, 3))
    local[:, 0] = _weight_shifts(rng, t, style.sway) + 0.004 * style.sway * noise(1, 0.25)[:, 0]
    local[:, 1] = -_KNEE_SOFTEN
    local[:, 2] = 0.006 * style.sway * noise(1, 0.15)[:, 0]
    pelvis = trans0 + J[0] + facing.apply(local)
    sway = np.column_stack([0.015 * noise(1, 0.15)[:, 0], 0.025 * noise(1, 0.1)[:, 0], 0.8 * local[:, 0]])
    root = facing * Rotation.from_rotvec(sway)
    poses[:, 0] = root.as_rotvec()
    for joint, rotvec in _leg_ik(root, pelvis, ankles, facing, facing.apply([0.0, 0.0, 1.0])).items():
        poses[:, joint] = rotvec

    # Spine: breathing, and most of the pelvis sway taken back so the chest stays upright; head
    # drift and nods.
    breath = np.sin(2 * np.pi * style.breath_hz * t + rng.uniform(0, 2 * np.pi))
    for joint, share in ((3, 0.4), (6, 0.3), (9, 0.2)):
        poses[:, joint] = -share * sway + 0.01 * noise(3, 0.2)
        poses[:, joint, 0] -= 0.012 * breath
    nods = sum(0.05 * s.amplitude * np.exp(-0.5 * ((t - s.time + 0.03) / 0.1) ** 2) for s in plan.strokes)
    poses[:, 12] = 0.02 * noise(3, 0.3)
    poses[:, 15] = 0.04 * noise(3, 0.3)
    poses[:, 15, 0] += nods

    # Arms and hands: rest pose, gestures blended in over their intervals, beat strokes, idle drift.
    arms = np.broadcast_to(style.rest_arm, (n, 2, N_ARM)).copy()
    curls = np.broadcast_to(RELAXED, (n, 2, 5)).copy()
    engaged = np.zeros(n)
    for iv in plan.sem:
        envelope = window(t, iv.start - 0.35, iv.start, iv.end - 0.05, iv.end + 0.3)
        target, shape = _gesture_form(rng, style, iv, t, plan.strokes)
        arms += envelope[:, None, None] * (target - arms)
        curls += envelope[:, None, None] * (shape - curls)
        engaged = np.maximum(engaged, envelope)
    calm = (1.0 - 0.85 * engaged)[:, None, None]
    arms += stroke_offsets(t, plan.strokes) + calm * 0.02 * noise(2 * N_ARM, 0.25).reshape(n, 2, N_ARM)
    arms[:, :, COLLAR] += 0.01 * breath[:, None]
    curls += calm * 0.07 * noise(10, 0.4).reshape(n, 2, 5)
    spread = 0.12 * np.clip(1.0 - curls[:, :, :4].mean(axis=-1) / 0.4, 0.0, 1.0)
    for side, (joints, hand) in enumerate(zip(ARM_JOINTS, (slice(25, 40), slice(40, 55)))):
        arm, fingers = arm_rotvecs(arms[:, side]), hand_rotvecs(curls[:, side], spread[:, side])
        poses[:, list(joints)] = mirror(arm) if side else arm
        poses[:, hand] = mirror(fingers) if side else fingers

    # Face: jaw with the speech envelope, slow eye drift, small smooth expressions.
    loudness = gaussian_filter1d(frame_envelope(audio, n), 2.0)
    poses[:, 22, 0] = 0.01 + 0.1 * loudness
    poses[:, 23, :2] = poses[:, 24, :2] = 0.03 * noise(2, 0.3)
    expressions = noise(N_EXPRESSIONS, 0.6) * 0.3 * np.exp(-np.arange(N_EXPRESSIONS) / 15.0)
    expressions[:, 0] += 0.8 * loudness - 0.3
    expressions[:, 1] += 0.3 * loudness

    return Motion(poses=poses.reshape(n, 3 * N_JOINTS), trans=pelvis - J[0], betas=style.betas,
                  expressions=expressions, fps=FPS)


# ----------------------------------------------------------------------------------------------
# dataset


def generate_sequence(seed: int, spec: SequenceSpec) -> GeneratedSequence:
    """Plan, audio and motion of one sequence; depends only on (seed, speaker, take, length)."""
    style = speaker_style(seed, spec.speaker)
    rng = np.random.default_rng([seed, 1, spec.speaker, spec.take])
    plan = plan_sequence(rng, style, spec.n_frames)
    audio = synthesize_speech(rng, style, plan)
    return GeneratedSequence(spec, plan, synthesize_motion(rng, style, plan, audio), audio)


def _read_marker(root: Path) -> dict | None:
    """The `.complete` marker of a mini-BEAT2 folder; {} when unreadable; None when absent."""
    path = root / MARKER
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _install(tmp: Path, root: Path, marker: dict) -> None:
    """Move the finished `tmp` folder onto `root`, replacing an older mini-BEAT2; keep a concurrent
    identical one."""
    if _read_marker(root) not in (None, marker):
        old = root.with_name(f".{root.name}.old-{uuid.uuid4().hex[:8]}")
        os.replace(root, old)
        shutil.rmtree(old)
    try:
        os.replace(tmp, root)  # atomic onto a missing or empty folder
    except OSError as exc:
        if _read_marker(root) != marker:
            raise DataError(root, f"could not move the generated mini-BEAT2 into place ({exc})") from exc


def generate_mini_beat2(root: str | Path, seed: int = 0, size: str = "default") -> Path:
    """Write mini-BEAT2 (`size` "default" or "standard") under `root` in BEAT2's layout and return
    `root`.

    Idempotent: a folder whose `.complete` marker names this generator version, seed and size is
    left as is. The data are written sequence by sequence into a hidden sibling folder whose marker
    is written last, then renamed onto `root`, so a crash never leaves a half dataset that looks
    complete. An older mini-BEAT2 (other version, seed or size) is replaced; a non-empty folder
    without a marker is refused (`DataError`), never overwritten.
    """
    root = Path(root).expanduser()
    marker = {"generator": "gesturebench.data.mini", "version": GENERATOR_VERSION, "seed": int(seed), "size": size}
    if _read_marker(root) == marker:
        return root
    specs = sequence_specs(int(seed), size)
    if root.is_dir() and _read_marker(root) is None and any(root.iterdir()):
        raise DataError(root, "exists, is not empty and is not a mini-BEAT2 folder (no .complete marker); "
                              "refusing to overwrite it — choose another dataset root")
    if root.exists() and not root.is_dir():
        raise DataError(root, "exists and is not a folder")
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = root.with_name(f".{root.name}.partial-{uuid.uuid4().hex[:8]}")
    try:
        for spec in specs:
            seq = generate_sequence(int(seed), spec)
            paths = sequence_paths(tmp, spec.id)
            write_motion_npz(paths.motion, seq.motion)
            write_wav(paths.audio, seq.audio)
            write_textgrid_words(paths.textgrid, seq.plan.words, seq.plan.duration)
            write_sem(paths.sem, seq.plan.sem)
        pd.DataFrame({"id": [s.id for s in specs], "type": [s.split for s in specs]}).to_csv(
            tmp / SPLIT_FILE, index=False)
        (tmp / MARKER).write_text(json.dumps(marker))
        _install(tmp, root, marker)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return root


def ensure_mini_beat2(root: str | Path, seed: int = 0, size: str = "default") -> Path:
    """The mini-BEAT2 folder at `root`, generated first if it is missing or from another seed, size
    or version."""
    return generate_mini_beat2(root, seed, size)
