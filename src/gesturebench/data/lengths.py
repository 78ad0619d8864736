"""The length and frame-rate policy applied to every generated motion (docs/design.md,
"Lengths")."""

from __future__ import annotations

from gesturebench.data.records import FPS, Motion
from gesturebench.errors import ConfigError, LengthMismatchError

POLICIES = ("truncate",)


def align_lengths(
    generated: Motion,
    reference: Motion,
    sequence_id: str,
    policy: str = "truncate",
    max_gap: float = 1.0,
) -> tuple[Motion, Motion, int]:
    """Cut both motions to the shorter; return them and the number of frames dropped from the longer
    one.

    A frame-rate other than 30 fps or a gap above `max_gap` seconds is an error naming the sequence.
    """
    if policy not in POLICIES:
        raise ConfigError(f"length_policy={policy!r} is not one of {POLICIES}")
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
        )
    n = min(generated.n_frames, reference.n_frames)
    return generated.frames(0, n), reference.frames(0, n), gap
