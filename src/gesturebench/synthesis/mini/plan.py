"""Mini-BEAT2 speech plan: the timeline of a sequence — words, syllables, semantic intervals (`sem`)
and beat strokes — from which its audio, TextGrid, sem file and motion follow.

* Speech: phrases of 2–8 words separated by 0.25–0.7 s pauses; a word has 1–3 syllables (30–50 ms
  closures inside, 60–140 ms gaps between words); content words are stressed on their first
  syllable. Words come from a small filler vocabulary; the TextGrid holds every word with its
  syllables' span. Syllables start on librosa's onset grid (`onset_grid`).
* Semantic intervals, one every 4–6 s, classes cycling through a shuffled deictic / iconic /
  metaphoric / beat order: the phrase carries a class keyword (deictic: there, you, this…; iconic:
  big, round, box…; metaphoric: idea, whole, offer…; beat: really, never…) that starts 0.1 s after
  the interval, which lasts 0.6–1.5 s (beat: 1.0–1.5 s) and lies inside the phrase's words. Names
  follow BEAT's codes (``01_beat_align``, ``02..04_deictic_{l,m,h}``, ``05..07_iconic_*``,
  ``08..10_metaphoric_*``), so the class is the name's first word (`gesture_classes.sem_label`);
  score ∈ [0.3, 1.0] by quality level (beat: 0.3, the lowest — real BEAT gives beats 0.1); keywords
  = the class keyword.
* Beat strokes: inside beat intervals at every stressed word, elsewhere at some stressed words,
  never near a semantic gesture.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import cycle

import numpy as np

from gesturebench.data.gesture_classes import SEMANTIC_CLASSES
from gesturebench.data.records import FPS, SAMPLE_RATE, SemInterval, Word
from gesturebench.synthesis.gestures import Stroke
from gesturebench.synthesis.mini.speakers import SpeakerStyle

#: The gesture forms generated, in the order drawn from (alphabetical semantic classes, then beat).
CLASSES = (*sorted(SEMANTIC_CLASSES), "beat")
# Keyword vocabularies per class, with syllable counts.
KEYWORDS = {
    "deictic": {"there": 1, "you": 1, "this": 1, "here": 1, "them": 1},
    "iconic": {"big": 1, "round": 1, "box": 1, "tall": 1, "wide": 1},
    "metaphoric": {"idea": 3, "whole": 1, "offer": 2, "concept": 2, "future": 2},
    "beat": {"really": 2, "never": 2, "always": 2, "very": 2, "must": 1},
}
FILLERS = {
    1: (
        "the",
        "and",
        "we",
        "to",
        "it",
        "is",
        "of",
        "a",
        "in",
        "what",
        "when",
        "I",
        "was",
        "for",
        "but",
        "all",
        "know",
        "think",
        "just",
        "so",
    ),
    2: (
        "about",
        "people",
        "maybe",
        "going",
        "little",
        "something",
        "into",
        "other",
        "thinking",
        "moment",
        "doing",
        "started",
    ),
    3: ("everything", "remember", "probably", "family", "together", "beautiful", "important"),
}
# BEAT's gesture-type codes: 1 beat, 2–4 deictic, 5–7 iconic, 8–10 metaphoric (low / middle / high
# quality).
_SEM_CODE = {"deictic": 2, "iconic": 5, "metaphoric": 8}
_LEVELS = {"l": (0.3, 0.55), "m": (0.55, 0.8), "h": (0.8, 1.0)}
BEAT_SEM_NAME, BEAT_SCORE = "01_beat_align", 0.3
# Syllables start ONSET_LEAD before a multiple of 32 ms (librosa's default 512-sample hop at 16
# kHz): its onset detector (128 ms frames, envelope shifted by n_fft / 2) then reports each syllable
# exactly once, 44 ms late.
ONSET_HOP_S = 512 / SAMPLE_RATE
ONSET_LEAD = 0.012


@dataclass(frozen=True)
class Syllable:
    """One voiced syllable (seconds); a stressed one is louder, higher and may carry a beat
    stroke."""

    start: float
    end: float
    stressed: bool


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


def onset_grid(t: float) -> float:
    """The first time ≥ `t` that lies `ONSET_LEAD` s before a multiple of librosa's 512-sample hop
    at 16 kHz."""
    return round(np.ceil((t + ONSET_LEAD) / ONSET_HOP_S - 1e-9) * ONSET_HOP_S - ONSET_LEAD, 4)


class _Transcript:
    """Accumulates words and syllables left to right, drawing their timing from the speaker's
    style."""

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
        return self.say(
            t, str(self.rng.choice(FILLERS[n])), n, bool(self.rng.random() < stress_probability)
        )

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


def _plan_strokes(
    rng: np.random.Generator, style: SpeakerStyle, stressed: list[float], sem: list[SemInterval]
) -> tuple[Stroke, ...]:
    """Beat strokes: every stressed word in a beat interval, some elsewhere, none near a semantic
    gesture."""
    strokes: list[Stroke] = []
    both_in = {iv.start: bool(rng.random() < 0.35) for iv in sem if iv.label == "beat"}
    for onset in stressed:
        beat = next(
            (iv for iv in sem if iv.label == "beat" and iv.start <= onset <= iv.end - 0.05), None
        )
        near_semantic = any(
            iv.label != "beat" and iv.start - 0.8 <= onset <= iv.end + 0.6 for iv in sem
        )
        near_beat_edge = beat is None and any(
            iv.label == "beat" and iv.start - 0.8 <= onset <= iv.end + 0.6 for iv in sem
        )
        if (
            near_semantic
            or near_beat_edge
            or onset < 0.6
            or (strokes and onset - strokes[-1].time < 0.5)
        ):
            continue
        if beat is not None:
            arms = (0, 1) if both_in[beat.start] else (style.dominant,)
            strokes.append(Stroke(onset, arms, style.amplitude * float(rng.uniform(0.8, 1.0))))
        elif rng.random() < style.beat_rate:
            strokes.append(
                Stroke(onset, (style.dominant,), style.amplitude * float(rng.uniform(0.35, 0.6)))
            )
    return tuple(strokes)
