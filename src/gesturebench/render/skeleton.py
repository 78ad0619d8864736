"""Frontal skeleton rendering with matplotlib, encoded to MP4 by imageio-ffmpeg.

Every clip uses the same camera: an orthographic frontal (x–y) view of a fixed 2 m × 2 m box centred
on the first frame's pelvis (or on a given `centre`), so clips of different sources of one sequence
are comparable.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import imageio.v2 as imageio
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg

from gesturebench.body.joints import PARENTS
from gesturebench.runtime.atomic import atomic_path

# Bones drawn: every joint but the eyes to its parent.
_BONES = [(j, int(PARENTS[j])) for j in range(1, 55) if j not in (23, 24)]


def render_frames(
    joints: np.ndarray, size: int = 256, centre: np.ndarray | None = None
) -> np.ndarray:
    """(T,55,3) joints → (T,size,size,3) uint8 RGB frames of the box x ∈ centre ± 1 m, y ∈ centre −
    1.1 … + 0.9 m.

    `centre` (x, y[, z]): where the box is anchored; None: the first frame's pelvis.
    """
    fig = plt.figure(figsize=(size / 100, size / 100), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    centre = joints[0, 0] if centre is None else np.asarray(centre)
    ax.set_xlim(centre[0] - 1.0, centre[0] + 1.0)
    ax.set_ylim(centre[1] - 1.1, centre[1] + 0.9)
    ax.set_aspect("equal")
    ax.axis("off")
    lines = [
        ax.plot([], [], color="tab:blue" if b < 25 else "tab:orange", lw=2 if b < 25 else 1)[0]
        for b, _ in _BONES
    ]
    canvas = cast(FigureCanvasAgg, fig.canvas)  # the Agg backend, chosen at import
    frames = np.empty((len(joints), size, size, 3), dtype=np.uint8)
    for t, pose in enumerate(joints):
        for line, (b, p) in zip(lines, _BONES):
            line.set_data([pose[b, 0], pose[p, 0]], [pose[b, 1], pose[p, 1]])
        canvas.draw()
        frames[t] = np.asarray(canvas.buffer_rgba())[..., :3]
    plt.close(fig)
    return frames


def write_video(path: str | Path, frames: np.ndarray, fps: int = 30) -> Path:
    """Encode frames as H.264 MP4 (atomically: temp file + rename)."""
    with atomic_path(path) as tmp:
        imageio.mimwrite(
            tmp, list(frames), fps=fps, codec="libx264", macro_block_size=1, format="FFMPEG"
        )
    return Path(path)
