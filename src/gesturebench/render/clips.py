"""Event clips: a motion window rendered as a skeleton MP4 with the same camera rule for every
source.

The camera (`Camera`) is fixed by configuration, never by the motion source: an orthographic view of
the speaker's front turned `yaw_deg` about the vertical (so pointing toward the viewer stays
visible), anchored on the clip's first-frame pelvis with the body's facing taken from that frame's
shoulders. The view is centred `height` m above that pelvis and zoomed by `zoom`: it shows 2/zoom m
across, from `height` − 1.1/zoom m to `height` + 0.9/zoom m (defaults: the upper body from mid-thigh
to above the head). Reference and generated motion of an event are therefore framed the same way.
The audio track, when given, is muxed in with the ffmpeg binary of imageio-ffmpeg.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gesturebench.atomic import atomic_path
from gesturebench.body.joints import LEFT_SHOULDER, PELVIS, RIGHT_SHOULDER
from gesturebench.data.records import SAMPLE_RATE
from gesturebench.errors import GestureBenchError
from gesturebench.render.skeleton import render_frames, write_video

_UP = np.array([0.0, 1.0, 0.0])


@dataclass(frozen=True)
class Camera:
    """Frame size (pixels), view angle from the front (degrees, toward the speaker's left), zoom and
    the height (m above the first-frame pelvis) of the view's centre."""

    size: int = 384
    yaw_deg: float = 30.0
    zoom: float = 1.6
    height: float = 0.25


def camera_view(joints: np.ndarray, camera: Camera) -> np.ndarray:
    """(T,55,3) world joints → (T,55,3) view coordinates (x right, y up, z toward the viewer),
    zoomed, with the first frame's pelvis at the origin."""
    left = joints[0, LEFT_SHOULDER] - joints[0, RIGHT_SHOULDER]
    left = left - (left @ _UP) * _UP
    left /= max(float(np.linalg.norm(left)), 1e-9)
    forward = np.cross(left, _UP)
    yaw = np.deg2rad(camera.yaw_deg)
    right_axis = (
        np.cos(yaw) * left - np.sin(yaw) * forward
    )  # the viewer's right is the speaker's left
    toward_viewer = np.sin(yaw) * left + np.cos(yaw) * forward
    basis = np.stack([right_axis, _UP, toward_viewer], axis=1)
    return camera.zoom * (joints - joints[0, PELVIS]) @ basis


def clip_frames(joints: np.ndarray, camera: Camera = Camera()) -> np.ndarray:
    """(T,55,3) joints → (T,size,size,3) uint8 RGB skeleton frames seen by `camera`, the render box
    centred the camera's `height` above the first frame's pelvis (the origin of the view)."""
    view = camera_view(np.asarray(joints, dtype=np.float64), camera)
    return render_frames(
        view, size=camera.size, centre=np.array([0.0, camera.zoom * camera.height])
    )


def write_clip(
    path: str | Path,
    frames: np.ndarray,
    fps: int,
    audio: np.ndarray | None = None,
    sample_rate: int = SAMPLE_RATE,
) -> Path:
    """Encode `frames` as H.264 MP4 at `path` (atomically), with `audio` (mono float) as an AAC
    track if given."""
    path = Path(path)
    if audio is None:
        return write_video(path, frames, fps)
    # here, not at import: scoring never needs ffmpeg (and GPU images may lack it)
    import imageio_ffmpeg

    with tempfile.TemporaryDirectory() as folder, atomic_path(path) as tmp:
        silent = write_video(Path(folder) / "silent.mp4", frames, fps)
        cmd = [
            imageio_ffmpeg.get_ffmpeg_exe(),
            "-y",
            "-loglevel",
            "error",
            "-i",
            str(silent),
            "-f",
            "f32le",
            "-ar",
            str(sample_rate),
            "-ac",
            "1",
            "-i",
            "pipe:0",
            "-map",
            "0:v",
            "-map",
            "1:a",
            "-c:v",
            "copy",
            "-c:a",
            "aac",
            "-shortest",
            "-f",
            "mp4",
            str(tmp),
        ]
        proc = subprocess.run(
            cmd, input=np.asarray(audio, dtype="<f4").tobytes(), capture_output=True, check=False
        )
        if proc.returncode != 0:
            raise GestureBenchError(
                f"{path}: ffmpeg could not add the audio track "
                f"({proc.stderr.decode(errors='replace').strip()[-300:]})"
            )
    return path
