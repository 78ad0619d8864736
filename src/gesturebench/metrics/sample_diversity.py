"""`SampleDiversity` (`div_sample`): the GENEA Leaderboard's Div_sample, the diversity of a
stochastic model's samples of the same input (docs/statistics.md, "Several samples per input").

A metric of the K samples together (`across_samples`, metrics/base.py): configured like any other
(`div_sample` in the metric presets), built once, and fed every sequence's K samples when
``model.samples`` is K > 1; with one sample it is skipped, with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gesturebench.metrics.base import SequenceValues
from gesturebench.metrics.functional.sample_diversity import sample_diversity


class SampleDiversity(SequenceValues):
    """Per sequence, the mean over frames and the 165 axis-angle pose values of their variance
    across the K samples (`functional.sample_diversity`); the model's value is the unweighted mean
    over sequences, as the Leaderboard averages over inputs. Higher: samples differ more."""

    direction = "higher"
    default_name = "div_sample"
    #: the jaw and eye rotations are pose values: a model that copies them adds no diversity there
    reads = ("jaw", "eyes")
    across_samples = True

    def update(self, index: int, samples: Sequence[np.ndarray]) -> None:
        """The K samples' poses (each (T_k, 165)) of the sequence with split index `index`."""
        self.record(index, [float(sample_diversity(samples))], 1.0)

    def unscored_reason(self) -> str:
        return "computed only with model.samples > 1 (diversity across samples of the same input)"
