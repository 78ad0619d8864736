"""The length and frame-rate policy applied to every generated motion (docs/design.md,
"Lengths")."""

from __future__ import annotations

from typing import Literal

from gesturebench.data.records import FPS, Motion
from gesturebench.runtime.errors import LengthMismatchError

#: `length_policy`: truncate (both motions cut to the shorter); checked when the config is composed
LengthPolicy = Literal["truncate"]
#: Frame rates that motion files commonly have besides 30 fps, for the hint on a length gap.
OTHER_RATES = (60, 120, 25, 24, 20, 15)


def rate_hint(n_frames: int, seconds: float) -> str:
    """Why a generated motion of `n_frames` may be far longer or shorter than `seconds` of speech:
    its length fits another common frame rate (within 3 %), i.e. a file written at that rate
    without ``mocap_frame_rate``; "" when none fits."""
    for rate in OTHER_RATES:
        if seconds > 0 and abs(n_frames / (rate * seconds) - 1) <= 0.03:
            return (
                f"; its length fits {rate} fps for the {seconds:.1f} s of speech: a {rate} fps "
                f"file without mocap_frame_rate? Resample it to {FPS} fps"
            )
    return ""


def align_lengths(
    generated: Motion,
    reference: Motion,
    sequence_id: str,
    policy: str = "truncate",
    max_gap: float = 1.0,
    speech_seconds: float | None = None,
) -> tuple[Motion, Motion, int]:
    """Cut both motions to the shorter; return them and the number of frames dropped from the longer
    one.

    A frame-rate other than 30 fps or a gap above `max_gap` seconds is an error naming the sequence
    (with `rate_hint` against `speech_seconds`, the audio's length, else the reference's).
    """
    for what, m in (("generated", generated), ("reference", reference)):
        if m.fps != FPS:
            raise LengthMismatchError(
                f"sequence {sequence_id}: {what} motion is {m.fps} fps; "
                f"gesturebench needs {FPS} fps"
            )
    gap = abs(generated.n_frames - reference.n_frames)
    if gap / FPS > max_gap:
        raise LengthMismatchError(
            f"sequence {sequence_id}: generated motion has {generated.n_frames} frames, "
            f"reference {reference.n_frames} "
            f"({gap / FPS:.2f} s apart, more than max_length_gap={max_gap} s)"
            + rate_hint(generated.n_frames, speech_seconds or reference.duration)
        )
    n = min(generated.n_frames, reference.n_frames)
    return generated.frames(0, n), reference.frames(0, n), gap
