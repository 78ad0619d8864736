"""`MotionPair`: what every metric's `update` receives for one sequence."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from gesturebench.body.output import BodyOutput
from gesturebench.data.records import SAMPLE_RATE, Motion, SemInterval, Word

T = TypeVar("T")


@dataclass
class MotionPair:
    """Generated and reference motion of one sequence (same length, 30 fps) with their body-model
    output.

    `index` is the sequence's position in the evaluated split: metrics store it (not the string id)
    so that per-sequence values survive a DDP gather. Optional inputs are `None` when the dataset
    lacks them; `left_out` names those the dataset left out, with why (`SequenceRecord.left_out`).
    `annotations` holds what the annotation stage made for the metrics that annotate, by metric
    name (`metrics.base.annotated`).
    """

    index: int
    sequence_id: str
    generated: Motion
    reference: Motion
    gen_body: BodyOutput
    ref_body: BodyOutput
    audio: np.ndarray | None = None
    sample_rate: int = SAMPLE_RATE
    words: list[Word] | None = None
    sem: list[SemInterval] | None = None
    model_name: str = ""
    left_out: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, Any] = field(default_factory=dict)
    _shared: dict = field(default_factory=dict, repr=False, compare=False)

    def shared(self, key: Hashable, compute: Callable[[], T]) -> T:
        """`compute()` once per pair and `key`: work several metrics need (the nearest-neighbour
        pass of Chamfer and Hausdorff, the encoder features of FGD, Density and Coverage). Freed
        with the pair."""
        if key not in self._shared:
            self._shared[key] = compute()
        return self._shared[key]

    @property
    def n_frames(self) -> int:
        return self.generated.n_frames

    @property
    def fps(self) -> int:
        return self.generated.fps
