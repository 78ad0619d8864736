"""Caveats of values that a degenerate motion scores well on (docs/metrics.md, "Degenerate
motion"): the condition is detected from the generated motion itself, never from the model's name,
and the tables print the note next to the value, as the paper's own caveats do."""

from __future__ import annotations

import numpy as np

from gesturebench.data.records import Motion

#: Largest change of any pose or translation value over a sequence that still counts as motionless.
STILL_TOLERANCE = 1e-6
#: Metric → why a motionless model scores well on it.
MOTIONLESS_REWARDS = {
    "sgp": "motionless output: its events read `none`, never `beat`, so SGP is 1",
}


def is_motionless(motion: Motion) -> bool:
    """Whether no pose or translation value of `motion` changes over its frames."""
    moves = [np.ptp(np.asarray(a), axis=0).max(initial=0.0) for a in (motion.poses, motion.trans)]
    return max(moves) <= STILL_TOLERANCE


def degenerate_caveats(motionless: list[bool], values: dict[str, float | None]) -> dict[str, str]:
    """Value name → caveat, for the values a motionless output is known to score well on, when
    every scored sequence's generated motion (`motionless`, one flag each) is motionless."""
    if not motionless or not all(motionless):
        return {}
    return {m: note for m, note in MOTIONLESS_REWARDS.items() if values.get(m) is not None}
