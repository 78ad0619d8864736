"""`EventClip`: what an annotator is shown for one event of one motion source."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gesturebench.annotation.events import CONTEXT_SECONDS, Event, collect_events
from gesturebench.annotation.prompt import Prompt, render_prompt
from gesturebench.data.records import SAMPLE_RATE, Motion, SequenceRecord
from gesturebench.render.clips import Camera, clip_frames, write_clip

log = logging.getLogger(__name__)

_RENDER_LOCK = threading.Lock()


@dataclass
class EventClip:
    """The frames [f0, f1) around `event` in one source's motion, with their audio and a hash of the
    motion.

    The joints (T,55,3) come from `joints_fn` on first use, and frames and video are rendered on
    first use, so a clip whose event is already annotated costs only its motion hash. Videos are
    cached under `clip_dir` by event, motion hash and camera, since rendering is deterministic.
    """

    event: Event
    source: str
    f0: int
    f1: int
    fps: int
    motion_sha256: str
    joints_fn: Callable[[], np.ndarray] = field(repr=False)
    audio: np.ndarray | None = field(default=None, repr=False)
    sample_rate: int = SAMPLE_RATE
    camera: Camera = field(default_factory=Camera)
    clip_dir: Path | None = None
    #: the window's (T,V,3) vertices and (F,3) faces, for `camera.style=mesh`
    surface_fn: Callable[[], tuple] | None = field(default=None, repr=False)
    _joints: np.ndarray | None = field(default=None, repr=False)
    _frames: np.ndarray | None = field(default=None, repr=False)

    @property
    def joints(self) -> np.ndarray:
        if self._joints is None:
            self._joints = np.asarray(self.joints_fn())
        return self._joints

    @property
    def start_seconds(self) -> float:
        return self.f0 / self.fps

    @property
    def seconds(self) -> float:
        return (self.f1 - self.f0) / self.fps

    def prompt(self, version: Prompt) -> str:
        """The text of prompt template `version` for this clip."""
        return render_prompt(self.event, self.start_seconds, self.seconds, version)

    def frames(self, indices: np.ndarray | None = None) -> np.ndarray:
        """The clip's frames, all or only `indices`; a backend that samples a few frames gets only
        those rendered (the view is fixed by the clip's first frame, which is rendered with them),
        unless the whole clip was rendered already."""
        joints = self.joints
        # matplotlib is not thread-safe: the runner's workers draw skeletons one at a time (the
        # mesh renderer is torch, which is)
        with _RENDER_LOCK if self.camera.style == "skeleton" else nullcontext():
            if self._frames is None and indices is not None:
                picked = np.r_[0, indices]
                surface = None
                if self.surface_fn is not None:
                    surface = partial(_picked_surface, self.surface_fn, picked)
                return clip_frames(joints[picked], self.camera, surface)[1:]
            if self._frames is None:
                self._frames = clip_frames(joints, self.camera, self.surface_fn)
        return self._frames if indices is None else self._frames[indices]

    def video(self, with_audio: bool = True, folder: Path | None = None) -> Path:
        """The clip as MP4 (with the audio track when asked and available), rendered on first
        use."""
        audio = self.audio if with_audio else None
        view = self.camera.tag
        suffix = "-audio" if audio is not None else ""
        name = f"{self.event.id}-{self.motion_sha256[:12]}-{view}{suffix}.mp4"
        path = Path(folder or self.clip_dir or ".") / name
        if not path.exists():
            write_clip(path, self.frames(), self.fps, audio, self.sample_rate)
        return path


def _picked_surface(surface: Callable[[], tuple], picked: np.ndarray) -> tuple:
    """The (vertices, faces) of `surface` at frames `picked` only."""
    vertices, faces = surface()
    return vertices[picked], faces


def window_audio(
    audio: np.ndarray | None, f0: int, f1: int, fps: int, sample_rate: int = SAMPLE_RATE
):
    """The samples of frames [f0, f1) of a sequence's audio (None stays None)."""
    if audio is None:
        return None
    return audio[f0 * sample_rate // fps : f1 * sample_rate // fps]


def surface_of(
    forward: Callable[[Motion], Any],
    faces: torch.Tensor,
    motion: Motion,
    vertices: torch.Tensor | None = None,
) -> Callable[[int, int], tuple]:
    """Frames [f0, f1) → (vertices, faces) of `motion` for mesh clips: a slice of `vertices`, the
    whole motion's, where a body forward already computed them (the evaluator's, when a metric
    needed vertices), else the body model `forward` of the window alone."""

    def window(f0: int, f1: int) -> tuple:
        verts = forward(motion.frames(f0, f1)).vertices if vertices is None else vertices[f0:f1]
        return verts, faces

    return window


def make_clip(
    event: Event,
    source: str,
    motion: Motion,
    joints_of: Callable[[int, int], np.ndarray],
    audio: np.ndarray | None = None,
    *,
    context: float = CONTEXT_SECONDS,
    camera: Camera | None = None,
    clip_dir: Path | None = None,
    surface_of: Callable[[int, int], tuple] | None = None,
) -> EventClip | None:
    """The clip of `event` in `motion`, `joints_of(f0, f1)` giving the window's joints and
    `surface_of(f0, f1)` its vertices and faces (mesh clips) when first needed; None when the
    event lies beyond the motion."""
    f0, f1 = event.window(motion.n_frames, motion.fps, context)
    if f1 - f0 < 2:
        return None
    return EventClip(
        event,
        source,
        f0,
        f1,
        motion.fps,
        motion.frames(f0, f1).content_hash(),
        lambda: joints_of(f0, f1),
        window_audio(audio, f0, f1, motion.fps),
        camera=camera or Camera(),
        clip_dir=clip_dir,
        surface_fn=None if surface_of is None else lambda: surface_of(f0, f1),
    )


def event_clips(
    source: str,
    motion_of: Callable[[SequenceRecord], Motion],
    body_model: Any,
    clip_dir: Path,
    *,
    context: float = CONTEXT_SECONDS,
    camera: Camera | None = None,
) -> Callable[[Iterable[SequenceRecord]], Iterator[EventClip]]:
    """Records → the clips of their events in `source`'s motion (`motion_of` each record), the
    joints and mesh surfaces by `body_model`'s forward, videos cached under `clip_dir`; an event
    beyond the motion is skipped with a warning."""

    def clips(records: Iterable[SequenceRecord]) -> Iterator[EventClip]:
        for record in records:
            motion = motion_of(record)
            joints_of = _joints_of(body_model, motion)
            surfaces = surface_of(body_model, body_model.faces, motion)
            for event in collect_events(record.id, record.sem, record.words):
                clip = make_clip(
                    event,
                    source,
                    motion,
                    joints_of,
                    record.audio,
                    context=context,
                    camera=camera,
                    clip_dir=clip_dir,
                    surface_of=surfaces,
                )
                if clip is None:
                    log.warning(
                        "%s: event %s (%.2f–%.2f s) lies beyond the motion; skipped",
                        record.id,
                        event.id,
                        event.start,
                        event.end,
                    )
                else:
                    yield clip

    return clips


def _joints_of(body_model: Any, motion: Motion) -> Callable[[int, int], np.ndarray]:
    return lambda f0, f1: body_model(motion.frames(f0, f1), vertices=False).joints.cpu().numpy()
