"""Side-by-side layouts: N clips of one window next to each other (reference | generated, or every
study source), each under a label, so viewers compare sources frame by frame."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

#: Label strip height as a share of the panel height (at least 14 px, even).
LABEL_SHARE = 0.08


def label_strip(text: str, width: int, height: int) -> np.ndarray:
    """(height,width,3) uint8: `text` centred in dark grey on white (drawn once per clip, not per
    frame)."""
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=max(8, int(height * 0.7)))
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    xy = ((width - (right - left)) / 2 - left, (height - (bottom - top)) / 2 - top)
    draw.text(xy, text, fill=(40, 40, 40), font=font)
    return np.asarray(image)


def side_by_side(panels: Sequence[np.ndarray], labels: Sequence[str] | None = None) -> np.ndarray:
    """(T_i,H,W,3) uint8 clips → one (T,H[+label],N·W,3) clip, T the shortest length, each panel
    under its label when `labels` are given."""
    n = min(len(p) for p in panels)
    frames = np.concatenate([p[:n] for p in panels], axis=2)
    if not labels:
        return frames
    if len(labels) != len(panels):
        raise ValueError(f"{len(labels)} labels for {len(panels)} panels")
    height, width = panels[0].shape[1:3]
    strip_height = 2 * max(7, int(LABEL_SHARE * height / 2))  # even: H.264 needs even sizes
    strip = np.concatenate([label_strip(t, width, strip_height) for t in labels], axis=1)
    return np.concatenate([np.broadcast_to(strip, (n, *strip.shape)), frames], axis=1)
