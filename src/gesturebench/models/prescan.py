"""The pre-scan: a model's existing outputs checked for every sequence (existence, keys, shapes,
NaN, fps, length gap) before anything is scored, with all problems reported together."""

from __future__ import annotations

from collections.abc import Sequence

from gesturebench.data.lengths import align_lengths
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.base import GestureModel
from gesturebench.runtime.errors import CheckpointError

#: Problems listed in the message; the rest are counted.
SHOWN = 20


class OutputsError(CheckpointError):
    """Some of a model's existing outputs are missing or unusable: nothing was scored."""


def prescan(
    model: GestureModel, dataset: Sequence[SequenceRecord], length_policy: str, max_gap: float
) -> None:
    """Raise `OutputsError` listing the first `SHOWN` problems of `model`'s outputs (and how many
    more) when any sequence's output would fail while scored."""

    def check(motion: Motion, record: SequenceRecord) -> None:
        align_lengths(
            motion, record.motion, record.id, length_policy, max_gap, record.speech_seconds
        )

    problems = model.output_problems(dataset, check)
    if len(problems) == 1:
        raise OutputsError(f"{problems[0]} (model={model.name}: nothing was scored)")
    if not problems:
        return
    more = [f"  ... and {len(problems) - SHOWN} more"] if len(problems) > SHOWN else []
    raise OutputsError(
        "\n".join(
            [
                f"model={model.name}: {len(problems)} problem(s) in its outputs for "
                f"{len(dataset)} sequences; nothing was scored:",
                *(f"  {problem}" for problem in problems[:SHOWN]),
                *more,
            ]
        )
    )
