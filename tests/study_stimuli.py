"""Tiny study stimuli for the study server's tests and load benchmark: a few-frame MP4 per (source,
window, condition) and a manifest.csv in `task=render`'s format."""

from __future__ import annotations

import csv
from pathlib import Path

import imageio.v2 as imageio
import numpy as np

from gesturebench.study.server.manifest import MANIFEST_COLUMNS, file_sha256


def make_stimuli(
    folder: Path,
    sources: list[str],
    sequences: list[str],
    conditions: tuple[str, ...] = ("muted", "audio"),
    frames: int = 3,
    fps: int = 10,
) -> Path:
    """Write one `frames`-frame clip (a flat colour of its own) per stimulus and the manifest;
    returns the manifest's path."""
    clips = folder / "clips"
    clips.mkdir(parents=True, exist_ok=True)
    rows = []
    for c, condition in enumerate(conditions):
        for s, source in enumerate(sources):
            for q, sequence in enumerate(sequences):
                sid = f"{condition}-{source}-{sequence}"
                colour = np.array([40 * s % 256, 60 * q % 256, 120 * c % 256], np.uint8)
                video = np.broadcast_to(colour, (frames, 32, 32, 3))
                path = clips / f"{sid}.mp4"
                imageio.mimwrite(path, list(video), fps=fps, codec="libx264", macro_block_size=16)
                rows.append(
                    [sid, source, sequence, 0.0, frames / fps, condition, f"clips/{sid}.mp4",
                     file_sha256(path)]
                )
    manifest = folder / "manifest.csv"
    with open(manifest, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(MANIFEST_COLUMNS)
        writer.writerows(rows)
    return manifest
