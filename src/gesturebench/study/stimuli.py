"""The study's stimuli: every source on every study window, rendered once per condition (muted, or
with the window's speech) into <folder>/<condition>/<stimulus_id>.mp4, with `manifest.csv` for a
rating tool and `windows.csv`, the windows rendered (`study.windows.file` of the analysis of their
ratings).

Stimulus ids are blind: the first 12 hex digits of the SHA-256 of "source/sequence/start/end/
condition", so a file name does not tell a rater which source it shows; the manifest maps them
back.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gesturebench.annotation.clip import window_audio
from gesturebench.models.base import GestureModel
from gesturebench.models.cache import MotionCache
from gesturebench.render.clips import Camera, motion_frames, write_clip
from gesturebench.runtime.atomic import write_atomic
from gesturebench.runtime.errors import DataError
from gesturebench.runtime.stages import track
from gesturebench.runtime.weights import sha256_file
from gesturebench.study.schema import MANIFEST_COLUMNS, Condition
from gesturebench.study.window_records import StudyWindows
from gesturebench.study.windows import Window

log = logging.getLogger(__name__)


def stimulus_id(source: str, sequence_id: str, start: float, end: float, condition: str) -> str:
    key = f"{source}/{sequence_id}/{start:g}/{end:g}/{condition}"
    return hashlib.sha256(key.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class StimulusRenderer:
    """How each stimulus is made and where it goes: posed by `body_model`, the sources' motion
    through `cache`, seen by `camera` in each of `conditions`, into `folder`; `root` (the
    dataset's) is named where a record has no audio."""

    body_model: Any
    cache: MotionCache
    camera: Camera
    conditions: Sequence[Condition]
    folder: Path
    root: str

    def source(
        self, model: GestureModel, name: str, windows: list[Window], records: StudyWindows
    ) -> list[dict]:
        """The stimuli of source `name` (`model`, prepared) on every window; returns their
        manifest rows."""
        rows = []
        frames_in = sum(r.motion.n_frames for r in records)  # the bar in frames/s
        for window, record in track(
            zip(windows, records), name, frames_in, "frames", lambda item: item[1].motion.n_frames
        ):
            motion = self.cache.get(model, record)
            if "audio" in self.conditions and record.audio is None:
                raise DataError(self.root, f"{record.id} has no audio")
            audio = window_audio(record.audio, 0, motion.n_frames, motion.fps)
            frames = motion_frames(self.body_model, motion, self.camera)
            for condition in self.conditions:
                sid = stimulus_id(name, record.id, window.start, window.end, condition)
                path = write_clip(
                    self.folder / condition / f"{sid}.mp4",
                    frames,
                    motion.fps,
                    audio if condition == "audio" else None,
                )
                rows.append(
                    {
                        "stimulus_id": sid,
                        "source": name,
                        "sequence_id": record.id,
                        "start": window.start,
                        "end": window.end,
                        "condition": condition,
                        "file": path.relative_to(self.folder).as_posix(),
                        "sha256": sha256_file(path),
                    }
                )
        return rows


def write_stimuli(
    models: Iterable[tuple[str, GestureModel]],
    windows: list[Window],
    windows_table: str,
    records: StudyWindows,
    renderer: StimulusRenderer,
) -> dict:
    """Every source of `models` ((name, prepared model) pairs, taken one at a time) on every window
    (`records`: cut to them) made by `renderer`, then its manifest.csv and windows.csv
    (`windows_table`: `study.windows.windows_csv`) in the renderer's folder; returns a summary."""
    rows = []
    for name, model in models:
        rows += renderer.source(model, name, windows, records)
        log.info("source %s: %d window(s) rendered", name, len(windows))
    manifest = renderer.folder / "manifest.csv"
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=MANIFEST_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(manifest, text.getvalue())
    write_atomic(renderer.folder / "windows.csv", windows_table)
    log.info("%d stimuli, %s and its windows.csv written", len(rows), manifest)
    return {
        "manifest": str(manifest),
        "windows": str(renderer.folder / "windows.csv"),
        "stimuli": len(rows),
    }
