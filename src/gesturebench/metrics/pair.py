"""`MotionPair`: what every metric's `update` receives for one sequence."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion, SemInterval, Word


@dataclass
class MotionPair:
    """Generated and reference motion of one sequence (same length, 30 fps) with their body-model output.

    `index` is the sequence's position in the evaluated split: metrics store it (not the string id) so that
    per-sequence values survive a DDP gather. Optional inputs are `None` when the dataset lacks them.
    """

    index: int
    sequence_id: str
    generated: Motion
    reference: Motion
    gen_body: BodyOutput
    ref_body: BodyOutput
    audio: np.ndarray | None = None
    sample_rate: int = 16000
    words: list[Word] | None = None
    sem: list[SemInterval] | None = None
    annotations: list | None = None
    model_name: str = ""

    @property
    def n_frames(self) -> int:
        return self.generated.n_frames

    @property
    def fps(self) -> int:
        return self.generated.fps
