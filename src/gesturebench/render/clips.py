"""Clips: a motion window rendered as a skeleton or as the shaded SMPL-X surface, with the same
camera rule for every source.

The camera (`Camera`) is fixed by configuration, never by the motion source: an orthographic view of
the speaker's front turned `yaw_deg` about the vertical (so pointing toward the viewer stays
visible), anchored on the clip's first-frame pelvis with the body's facing taken from that frame's
shoulders. What the square frame shows is its `framing`:

- "fixed": centred `height` m above that pelvis and zoomed by `zoom`: it shows 2/zoom m across, from
  `height` − 1.1/zoom m to `height` + 0.9/zoom m (defaults: the upper body from mid-thigh to above
  the head). Reference and generated motion of an event are therefore framed the same way.
- "body": the bounding box of the body (the mesh's vertices, or the skeleton's joints) over the
  whole clip, centred, its longer side filling the frame but for `margin` (a fraction of the frame)
  on each side: the whole body is in view, however it moves (the study's stimuli).

`Camera.style` chooses what is drawn: "skeleton" (bones, matplotlib) or "mesh" (the body model's
surface, `render/mesh.py`). The audio track, when given, is muxed in with the ffmpeg binary of
imageio-ffmpeg.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from gesturebench.body.joints import LEFT_SHOULDER, PELVIS, RIGHT_SHOULDER
from gesturebench.data.records import SAMPLE_RATE, Motion
from gesturebench.render.mesh import render_mesh
from gesturebench.render.skeleton import render_frames, write_video
from gesturebench.runtime.atomic import atomic_path
from gesturebench.runtime.errors import ConfigError, GestureBenchError

_UP = np.array([0.0, 1.0, 0.0])
#: Frames rasterised per batch (bounds the memory of the mesh renderer).
MESH_BATCH = 8


@dataclass(frozen=True)
class Camera:
    """Frame size (pixels), view angle from the front (degrees, toward the speaker's left), what the
    frame shows (`framing`: fixed, with its `zoom` and the `height` (m above the first-frame
    pelvis) of its centre, or body, with its `margin`), what is drawn (`style`: skeleton | mesh)
    and the mesh's antialiasing (`supersample`: s×s samples per pixel)."""

    size: int = 384
    yaw_deg: float = 30.0
    zoom: float = 1.6
    height: float = 0.25
    style: Literal["skeleton", "mesh"] = "skeleton"
    supersample: int = 1
    framing: Literal["fixed", "body"] = "fixed"
    margin: float = 0.05

    def __post_init__(self) -> None:
        if self.supersample < 1:
            raise ConfigError(f"camera.supersample must be at least 1, got {self.supersample}")
        if not 0.0 <= self.margin < 0.5:
            raise ConfigError(f"camera.margin must be in [0, 0.5), got {self.margin}")

    @property
    def tag(self) -> str:
        """The view in a file name (clips rendered with different cameras never share a file)."""
        style = "" if self.style == "skeleton" else f"-{self.style}{self.supersample}"
        view = (
            f"{self.zoom:g}x-{self.height:g}m"
            if self.framing == "fixed"
            else f"body{self.margin:g}"
        )
        return f"{self.size}px-{self.yaw_deg:g}deg-{view}{style}"


def view_basis(joints: np.ndarray, camera: Camera) -> tuple[np.ndarray, np.ndarray]:
    """The first frame's pelvis (3,) and the (3,3) zoomed basis whose columns are the view's x
    (right), y (up) and z (toward the viewer), from the first frame's shoulders."""
    left = joints[0, LEFT_SHOULDER] - joints[0, RIGHT_SHOULDER]
    left = left - (left @ _UP) * _UP
    left /= max(float(np.linalg.norm(left)), 1e-9)
    forward = np.cross(left, _UP)
    yaw = np.deg2rad(camera.yaw_deg)
    right_axis = (
        np.cos(yaw) * left - np.sin(yaw) * forward
    )  # the viewer's right is the speaker's left
    toward_viewer = np.sin(yaw) * left + np.cos(yaw) * forward
    return joints[0, PELVIS], camera.zoom * np.stack([right_axis, _UP, toward_viewer], axis=1)


def camera_view(joints: np.ndarray, camera: Camera) -> np.ndarray:
    """(T,55,3) world joints → (T,55,3) view coordinates (x right, y up, z toward the viewer),
    zoomed, with the first frame's pelvis at the origin."""
    origin, basis = view_basis(joints, camera)
    return (joints - origin) @ basis


def view_box(view: np.ndarray | torch.Tensor, camera: Camera) -> tuple[float, float, float]:
    """The square the frame shows, in view coordinates (`view`: (..., 3) points of the whole
    clip): its centre x, y and half side (see the module docstring's framings)."""
    if camera.framing == "fixed":
        return 0.0, camera.zoom * camera.height - 0.1, 1.0
    xy = torch.as_tensor(view)[..., :2].reshape(-1, 2)
    lo, hi = xy.min(0).values.tolist(), xy.max(0).values.tolist()
    half = max(hi[0] - lo[0], hi[1] - lo[1], 1e-6) / 2 / (1 - 2 * camera.margin)
    return (lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, half


def mesh_view_frames(
    joints: np.ndarray, vertices: np.ndarray | torch.Tensor, faces, camera: Camera
) -> np.ndarray:
    """(T,V,3) world vertices of a body whose joints are (T,55,3), (F,3) faces → (T,size,size,3)
    uint8 RGB frames of the shaded surface, framed exactly as `clip_frames` frames the skeleton
    (the "body" framing on the vertices).

    Runs on the device of `vertices` when it is a tensor."""
    verts = torch.as_tensor(vertices)
    origin, basis = view_basis(np.asarray(joints, dtype=np.float64), camera)
    like: dict[str, Any] = {"dtype": torch.float32, "device": verts.device}
    rotate = torch.as_tensor(basis, **like)
    start = torch.as_tensor(origin, **like)
    cx, cy, half = view_box((verts.to(**like) - start) @ rotate, camera)
    # the box → [0, 1]², y downward; z in the same unit (depth order and shading only)
    to_unit = torch.tensor([[1.0, 0, 0], [0, -1.0, 0], [0, 0, 1.0]], **like) / (2 * half)
    shift = torch.tensor([0.5 - cx / (2 * half), 0.5 + cy / (2 * half), 0.0], **like)
    transform = rotate @ to_unit
    tri = torch.as_tensor(faces, device=verts.device).long()
    frames = []
    for first in range(0, len(verts), MESH_BATCH):
        chunk = verts[first : first + MESH_BATCH].to(**like) - start
        frames.append(render_mesh(chunk @ transform + shift, tri, camera.size, camera.supersample))
    return torch.cat(frames).cpu().numpy()


def clip_frames(
    joints: np.ndarray, camera: Camera = Camera(), surface: Callable[[], tuple] | None = None
) -> np.ndarray:
    """(T,55,3) joints → (T,size,size,3) uint8 RGB frames seen by `camera` (`view_box`).

    The one entry point of the annotation clips: `camera.style` picks the skeleton or the mesh;
    the mesh needs `surface`, a callable giving the window's (T,V,3) vertices and (F,3) faces
    (called only then, so a skeleton clip never computes vertices)."""
    joints = np.asarray(joints, dtype=np.float64)
    if camera.style == "mesh":
        if surface is None:
            raise ConfigError("camera.style=mesh: this clip has no body surface to render")
        vertices, faces = surface()
        return mesh_view_frames(joints, vertices, faces, camera)
    view = camera_view(joints, camera)
    cx, cy, half = view_box(view, camera)
    # the skeleton renderer's box is x ∈ ±1, y ∈ −1.1 … 0.9 about its centre: scale the square there
    view = (view - np.array([cx, cy + 0.1 * half, 0.0])) / half
    return render_frames(view, size=camera.size, centre=np.zeros(2))


def motion_frames(body_model: Any, motion: Motion, camera: Camera) -> np.ndarray:
    """(T,size,size,3) frames of `motion` posed by `body_model` (a `BodyModel`) and seen by
    `camera`; vertices are computed only for the mesh."""
    out = body_model(motion, vertices=camera.style == "mesh")
    return clip_frames(out.joints.cpu().numpy(), camera, lambda: (out.vertices, body_model.faces))


def write_clip(
    path: str | Path,
    frames: np.ndarray,
    fps: int,
    audio: np.ndarray | None = None,
    sample_rate: int = SAMPLE_RATE,
) -> Path:
    """Encode `frames` as H.264 MP4 at `path` (atomically), with `audio` (mono float) as an AAC
    track if given, cut or padded with silence to the frames' duration (ffmpeg's `-shortest`
    drops a varying number of final frames, depending on how fast the audio pipe is read)."""
    path = Path(path)
    if audio is None:
        return write_video(path, frames, fps)
    samples = round(len(frames) * sample_rate / fps)
    audio = np.pad(np.asarray(audio, dtype="<f4")[:samples], (0, max(0, samples - len(audio))))
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
            "-f",
            "mp4",
            str(tmp),
        ]
        proc = subprocess.run(cmd, input=audio.tobytes(), capture_output=True, check=False)
        if proc.returncode != 0:
            raise GestureBenchError(
                f"{path}: ffmpeg could not add the audio track "
                f"({proc.stderr.decode(errors='replace').strip()[-300:]})"
            )
    return path
