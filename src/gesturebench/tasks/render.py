"""`task=render`: the study's stimuli. Every source of `study.sources` on every study window
(`study.windows`: selected, or `study.windows.file` for a given list of sequences and windows),
rendered with `task.camera` once muted and once with the window's speech, into
<run>/<task.folder>/<condition>/<stimulus_id>.mp4, plus `manifest.csv` for a rating tool and
`windows.csv`, the windows rendered (`study.windows.file` of the analysis of their ratings).

Stimulus ids are blind: the first 12 hex digits of the SHA-256 of "source/sequence/start/end/
condition", so a file name does not tell a rater which source it shows; the manifest maps them
back.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import DictConfig

from gesturebench.annotation.clip import window_audio
from gesturebench.body.model import BodyModel
from gesturebench.models.cache import MotionCache
from gesturebench.render.clips import Camera, motion_frames, write_clip
from gesturebench.run.config import build_model
from gesturebench.runtime.atomic import write_atomic
from gesturebench.runtime.errors import ConfigError, DataError
from gesturebench.runtime.stages import track
from gesturebench.runtime.weights import sha256_file
from gesturebench.study.schema import CONDITIONS, MANIFEST_COLUMNS, Condition
from gesturebench.study.sources import source_model
from gesturebench.study.windows import (
    StudyWindows,
    Window,
    study_windows,
    windows_spec,
    write_windows,
)
from gesturebench.tasks.job import Job
from gesturebench.tasks.run import Run

log = logging.getLogger(__name__)


@dataclass
class RenderTask:
    """`task=render` (conf/task/render.yaml): `sources` (names in `study.sources`; empty: all),
    `conditions` (muted and/or audio), `camera`, and the stimuli `folder` in the run folder."""

    name: str = "render"
    sources: list[str] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=lambda: list(CONDITIONS))
    camera: Camera = field(default_factory=lambda: Camera(size=512, style="mesh"))
    folder: str = "stimuli"

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        return render_stimuli(Run.of(cfg, job, model=False), self, job.run_dir)


def stimulus_id(source: str, sequence_id: str, start: float, end: float, condition: str) -> str:
    key = f"{source}/{sequence_id}/{start:g}/{end:g}/{condition}"
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def chosen_sources(known: list[str], names: list[str]) -> list[str]:
    """`names` checked against `known` (`study.sources`; empty `names`: every source, in the study's
    order)."""
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(
            f"task.sources: {', '.join(unknown)} not in study.sources ({', '.join(known)})"
        )
    return list(names) or known


def render_stimuli(run: Run, task: RenderTask, out: Path) -> dict:
    """The task: its objects built from `run` (the study: `run.study`), then every (source, window,
    condition) rendered and the manifest written into `out`; returns a summary."""
    if not task.conditions:
        raise ConfigError(f"task.conditions is empty: name one or more of {list(CONDITIONS)}")
    study = run.study
    sources = chosen_sources(list(study["sources"]), list(task.sources))
    source = run.dataset
    windows, records = study_windows(windows_spec(study["windows"]), source)
    context = run.context
    body_model = context.body_model
    cache = MotionCache(context.cache_dir / "generated")
    models = {name: source_model(name, study["sources"][name]) for name in sources}
    folder = out / task.folder
    rows = []
    log.info(
        "rendering %d source(s) × %d window(s) × %s at %d px (%s) into %s",
        len(sources),
        len(windows),
        "/".join(task.conditions),
        task.camera.size,
        task.camera.style,
        folder,
    )
    for name, node in models.items():
        model = build_model(node)
        model.prepare(context)
        rows += render_source(
            model, name, windows, records, body_model, cache, task, folder, source.root
        )
        log.info("source %s: %d window(s) rendered", name, len(windows))
    manifest = folder / "manifest.csv"
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=MANIFEST_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(manifest, text.getvalue())
    write_windows(folder / "windows.csv", windows)
    log.info("%d stimuli, %s and its windows.csv written", len(rows), manifest)
    return {"manifest": str(manifest), "windows": str(folder / "windows.csv"), "stimuli": len(rows)}


def render_source(
    model,
    name: str,
    windows: list[Window],
    records: StudyWindows,
    body_model: BodyModel,
    cache: MotionCache,
    task: RenderTask,
    folder: Path,
    root: str,
) -> list[dict]:
    """The stimuli of source `name` (`model`, prepared) on every window, each condition of `task`
    into `folder` (`root`: the dataset's, named where a record has no audio); returns their
    manifest rows."""
    rows = []
    frames_in = sum(r.motion.n_frames for r in records)  # the bar in frames/s
    for window, record in track(
        zip(windows, records), name, frames_in, "frames", lambda item: item[1].motion.n_frames
    ):
        motion = cache.get(model, record)
        frames = motion_frames(body_model, motion, task.camera)
        for condition in task.conditions:
            audio = None
            if condition == "audio":
                if record.audio is None:
                    raise DataError(root, f"{record.id} has no audio")
                audio = window_audio(record.audio, 0, len(frames), motion.fps)
            sid = stimulus_id(name, record.id, window.start, window.end, condition)
            path = write_clip(folder / condition / f"{sid}.mp4", frames, motion.fps, audio)
            rows.append(
                {
                    "stimulus_id": sid,
                    "source": name,
                    "sequence_id": record.id,
                    "start": window.start,
                    "end": window.end,
                    "condition": condition,
                    "file": path.relative_to(folder).as_posix(),
                    "sha256": sha256_file(path),
                }
            )
    return rows
