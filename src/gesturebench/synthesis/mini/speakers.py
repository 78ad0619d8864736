"""Mini-BEAT2 speakers: the per-speaker style that makes each synthetic speaker recognisable.

Drawn once per (seed, speaker): voice pitch f0 ∈ [100, 220] Hz, syllable-duration range inside
[0.12, 0.25] s (tempo), gesture amplitude, handedness, beat rate, idle-sway scale, breathing rate,
rest-arm variation and 300 betas.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gesturebench.synthesis.gestures import N_ARM, REST_ARM

SPEAKER_NAMES = {
    1: "wayne",
    2: "scott",
    3: "solomon",
    4: "lawrence",
    5: "stewart",
    6: "carla",
    7: "sophie",
    8: "catherine",
    9: "miranda",
    10: "kieks",
    11: "nidal",
    12: "zhao",
    13: "lu",
    14: "zhang",
    15: "carlos",
    16: "jorge",
    17: "itoi",
    18: "daiki",
    19: "jaime",
    20: "li",
    21: "ayana",
    22: "luqi",
    23: "hailing",
    24: "kexin",
    25: "goto",
}
DEFAULT_SPEAKERS = (2, 4, 6, 8)


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


def speaker_style(seed: int, speaker: int) -> SpeakerStyle:
    """The style of `speaker` under `seed`."""
    rng = np.random.default_rng([seed, 0, speaker])
    fast = rng.uniform(0.0, 0.04)
    betas = rng.standard_normal(300) * np.where(
        np.arange(300) < 10, 0.7, np.where(np.arange(300) < 50, 0.4, 0.08)
    )
    rest = REST_ARM + rng.uniform(-1, 1, N_ARM) * np.array(
        [0.04, 0.06, 0.05, 0.04, 0.08, 0.12, 0.15, 0.08, 0.04]
    )
    asym = rng.uniform(-1, 1, (2, N_ARM)) * np.array(
        [0.02, 0.03, 0.03, 0.02, 0.03, 0.05, 0.05, 0.03, 0.02]
    )
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
