"""What a `source=module` model exchanges with gesturebench: the batch it is given for a sequence
and its output as the arrays of a result file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from gesturebench.data.records import SAMPLE_RATE, Motion, SequenceRecord


def record_batch(record: SequenceRecord) -> dict[str, Any]:
    """The dict a `source=module` callable receives (``input=dict``): inputs as numpy arrays and
    plain values.

    ``poses``/``trans``/``expressions``/``betas`` are the reference motion, for seed frames, body
    shape and the fields a model copies; ``audio`` is 16 kHz mono float32 (or None); ``words`` a
    list of (word, start, end).
    """
    m = record.motion
    return {
        "id": record.id,
        "speaker": record.speaker,
        "audio": record.audio,
        "sample_rate": SAMPLE_RATE,
        "words": None if record.words is None else [(w.word, w.start, w.end) for w in record.words],
        "n_frames": m.n_frames,
        "fps": m.fps,
        "poses": m.poses,
        "trans": m.trans,
        "expressions": m.expressions,
        "betas": m.betas,
    }


def result_arrays(output: Any) -> dict[str, np.ndarray]:
    """A module's output (a `Motion` or a mapping of arrays/tensors) as numeric numpy arrays for an
    npz file."""
    if isinstance(output, Motion):
        return output.to_npz_dict()
    if not isinstance(output, Mapping):
        raise TypeError(
            f"returned {type(output).__name__}; expected a Motion or a dict of SMPL-X arrays"
        )
    arrays = {}
    for key, value in output.items():
        value = (
            value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
        )
        if np.issubdtype(value.dtype, np.number):
            arrays[str(key)] = value
    return arrays
