"""The mesh renderer (render/mesh.py, render/clips.py): the silhouette against an independent
point-in-triangle fill of the projected vertices, a golden image of a fixed pose, the framing shared
with the skeleton, and layouts."""

from __future__ import annotations

import os

import imageio.v2 as imageio
import numpy as np
import pytest
import torch
from hydra.errors import ConfigCompositionException
from matplotlib.path import Path as Polygon

from gesturebench.annotation.clip import EventClip
from gesturebench.annotation.events import Event
from gesturebench.body.model import BodyModel
from gesturebench.data.records import Motion
from gesturebench.render.clips import Camera, clip_frames, view_basis
from gesturebench.render.layout import side_by_side
from gesturebench.runtime.errors import ConfigError
from tests.helpers import REPO, composed

GOLDEN = REPO / "tests" / "fixtures" / "render_mesh_golden.png"


def posed(body: BodyModel, n: int = 1):
    """(n,55,3) joints and (n,V,3) vertices of a fixed pose: right arm raised, head turned, left
    elbow bent, standing on the floor."""
    poses = np.zeros((n, 165))
    poses[:, 16 * 3 : 16 * 3 + 3] = [0.0, 0.0, -1.1]  # right shoulder (SMPL-X joint 17 → column 16)
    poses[:, 18 * 3 : 18 * 3 + 3] = [0.0, -1.2, 0.0]  # left elbow
    poses[:, 14 * 3 : 14 * 3 + 3] = [0.0, 0.5, 0.0]  # head
    motion = Motion(poses, np.tile([0.0, 1.3, 0.0], (n, 1)), np.zeros(300), np.zeros((n, 100)))
    out = body(motion)
    assert out.vertices is not None
    return out.joints.numpy(), out.vertices


@pytest.fixture(scope="module")
def body(sandbox) -> BodyModel:
    return BodyModel(checkpoints_dir=sandbox.checkpoints)


def projected_fill(joints, vertices, faces, camera: Camera) -> np.ndarray:
    """The pixels (size,size) whose centres lie in the projection of any triangle, front or back:
    matplotlib's point-in-polygon test triangle by triangle, from the camera's definition."""
    origin, basis = view_basis(joints, camera)
    view = (vertices[0] - origin) @ basis
    size = camera.size
    x = (view[:, 0] + 1) / 2 * size
    y = (camera.zoom * camera.height + 0.9 - view[:, 1]) / 2 * size
    mask = np.zeros((size, size), bool)
    for tri in np.stack([x, y], axis=1)[faces]:
        lo = np.clip(np.floor(tri.min(0)).astype(int), 0, size)
        hi = np.clip(np.ceil(tri.max(0)).astype(int) + 1, 0, size)
        if (hi <= lo).any():
            continue
        ys, xs = np.mgrid[lo[1] : hi[1], lo[0] : hi[0]]
        centres = np.stack([xs.ravel(), ys.ravel()], axis=1) + 0.5
        inside = Polygon(tri).contains_points(centres, radius=1e-9) | Polygon(
            tri[::-1]
        ).contains_points(centres, radius=1e-9)
        mask[ys.ravel()[inside], xs.ravel()[inside]] = True
    return mask


def test_mesh_silhouette_matches_the_projected_triangles(body):
    joints, vertices = posed(body)
    faces = body.faces.numpy()
    camera = Camera(size=96, style="mesh")
    frame = clip_frames(joints, camera, lambda: (vertices, faces))[0]
    drawn = (frame != 255).any(axis=-1)
    expected = projected_fill(joints, vertices.numpy(), faces, camera)
    assert expected.sum() > 0.1 * expected.size  # the body fills a good part of the frame
    # only pixel centres lying on a triangle edge may differ (float rounding of the edge test)
    assert (drawn != expected).sum() <= 0.002 * expected.sum()


def test_mesh_clip_matches_the_golden_image(body):
    """A fixed pose at 128 px with 2×2 supersampling; tolerant to antialiasing and rounding at the
    edges, not to a change of shape, shading or framing. The golden image is committed; after an
    intended change of the renderer, rewrite it with `GESTUREBENCH_WRITE_GOLDEN=1 python -m pytest
    -n 0 tests/test_render.py -k golden`, look at it, and commit it."""
    joints, vertices = posed(body)
    camera = Camera(size=128, style="mesh", supersample=2)
    frame = clip_frames(joints, camera, lambda: (vertices, body.faces))[0]
    if os.environ.get("GESTUREBENCH_WRITE_GOLDEN") == "1":
        imageio.imwrite(GOLDEN, frame)
    assert GOLDEN.is_file(), f"{GOLDEN} is missing: it is committed with the tests"
    golden = imageio.imread(GOLDEN).astype(int)
    diff = np.abs(frame.astype(int) - golden)
    assert diff.mean() < 1.0
    assert (diff.max(axis=-1) > 48).mean() < 0.005


def test_mesh_is_framed_like_the_skeleton(body):
    """The skeleton and the mesh share the camera: the drawn head joint lies on the mesh."""
    joints, vertices = posed(body)
    camera = Camera(size=96, style="mesh")
    frame = clip_frames(joints, camera, lambda: (vertices, body.faces))[0]
    origin, basis = view_basis(joints, camera)
    for joint in (12, 15, 16, 17, 18):  # neck, head, shoulders, left elbow
        x, y = ((joints[0, joint] - origin) @ basis)[:2]
        px, py = int((x + 1) / 2 * 96), int((camera.zoom * camera.height + 0.9 - y) / 2 * 96)
        assert (frame[py, px] != 255).any(), joint


def test_mesh_frames_are_batched_and_device_independent(body):
    joints, vertices = posed(body, n=3)
    camera = Camera(size=64, style="mesh")
    together = clip_frames(joints, camera, lambda: (vertices, body.faces))
    alone = clip_frames(joints[1:2], camera, lambda: (vertices[1:2], body.faces))
    np.testing.assert_array_equal(together[1], alone[0])
    if torch.cuda.is_available():
        on_gpu = clip_frames(joints, camera, lambda: (vertices.cuda(), body.faces.cuda()))
        assert np.abs(on_gpu.astype(int) - together.astype(int)).max(axis=-1).mean() < 0.01


def test_mesh_style_needs_a_surface_and_camera_options_are_checked():
    joints = np.zeros((1, 55, 3))
    with pytest.raises(ConfigError, match="no body surface"):
        clip_frames(joints, Camera(style="mesh"))
    with pytest.raises(ConfigCompositionException, match=r"task\.camera\.style=wireframe"):
        composed("task=render", "task.camera.style=wireframe")
    with pytest.raises(ConfigError, match="supersample"):
        Camera(supersample=0)
    assert Camera().tag != Camera(style="mesh").tag


def test_annotation_clip_renders_the_mesh_when_its_camera_asks(body, tmp_path):
    """The annotation call site: `EventClip.frames()` draws the surface for `style=mesh` and the
    skeleton otherwise (sampled frames alone or the whole clip), and the two are cached under
    different names."""
    joints, vertices = posed(body, n=4)
    event = Event("s", 0, 0.0, 0.1, "big", "05_iconic_l", 0.4, "iconic")

    def clip(style: str) -> EventClip:
        return EventClip(
            event,
            "reference",
            0,
            4,
            30,
            "ab" * 32,
            lambda: joints,
            camera=Camera(size=32, style=style),
            clip_dir=tmp_path,
            surface_fn=lambda: (vertices, body.faces),
        )

    mesh, skeleton = clip("mesh"), clip("skeleton")
    expected = clip_frames(joints, mesh.camera, lambda: (vertices, body.faces))
    np.testing.assert_array_equal(mesh.frames(), expected)
    assert not np.array_equal(mesh.frames(), skeleton.frames())
    # a backend that samples frames gets only those rendered, the same as in the whole clip
    np.testing.assert_array_equal(clip("mesh").frames(np.array([1, 3])), expected[[1, 3]])
    assert mesh.video(with_audio=False).name != skeleton.video(with_audio=False).name


def test_side_by_side_puts_labelled_panels_next_to_each_other():
    sizes = ((5, 10), (3, 120), (4, 250))  # (frames, grey level)
    panels = [np.full((n, 40, 40, 3), value, np.uint8) for n, value in sizes]
    clip = side_by_side(panels, ["reference", "a", "b"])
    assert clip.shape == (3, 54, 120, 3)  # shortest length; 14 px label strip (even) above
    for i, value in enumerate((10, 120, 250)):
        assert (clip[:, 14:, 40 * i : 40 * (i + 1)] == value).all()
    strip = clip[0, :14]
    assert (strip < 128).any() and (strip == 255).mean() > 0.5  # dark text on white
    np.testing.assert_array_equal(side_by_side(panels), clip[:, 14:])
    with pytest.raises(ValueError, match="2 labels for 3 panels"):
        side_by_side(panels, ["a", "b"])


def stimulus_frames(body: BodyModel, motion: Motion, camera: Camera) -> np.ndarray:
    """A study stimulus's frames, as `task=render` renders them with `camera`."""
    from gesturebench.render.clips import motion_frames

    return motion_frames(body, motion, camera)


def assert_framed(frames: np.ndarray, margin: float) -> None:
    """No body pixel (any not white) on the frame's border in any frame; the body's box over the
    clip centred within 2 px and its longer side filling the frame but for the margins (± 3 px)."""
    size = frames.shape[1]
    body = (frames < 250).any(axis=-1)  # (T, size, size)
    border = body[:, 0, :] | body[:, -1, :] | body[:, :, 0] | body[:, :, -1]
    assert not border.any(), f"body pixels on the border in {int(border.any(-1).sum())} frame(s)"
    rows, cols = np.nonzero(body.any(axis=0))
    for lo, hi in ((rows.min(), rows.max()), (cols.min(), cols.max())):
        assert abs((lo + hi) / 2 - (size - 1) / 2) <= 2, (lo, hi)
    longest = max(rows.max() - rows.min(), cols.max() - cols.min()) + 1
    assert abs(longest - (1 - 2 * margin) * size) <= 3, longest


@pytest.fixture(scope="module")
def stimulus_camera(config) -> Camera:
    """`task=render`'s camera (conf/task/render.yaml) at 96 px."""
    from gesturebench.run.config import build

    return build(config("task=render", "task.camera.size=96").task.camera)


def test_stimuli_frame_the_whole_body_centred_on_the_real_beat2_sample(
    body, beat2_sample, stimulus_camera
):
    from gesturebench.data.beat2 import read_motion_npz

    motion = read_motion_npz(beat2_sample / "2_scott_0_1_1.npz").frames(300, 360)
    assert stimulus_camera.framing == "body" and stimulus_camera.style == "mesh"
    assert_framed(stimulus_frames(body, motion, stimulus_camera), stimulus_camera.margin)


def test_stimuli_frame_the_whole_body_centred_on_mini_beat2(body, mini_records, stimulus_camera):
    motion = mini_records["test"][0].motion.frames(0, 60)
    assert_framed(stimulus_frames(body, motion, stimulus_camera), stimulus_camera.margin)
    skeleton = Camera(size=96, framing="body", margin=0.1)
    assert_framed(stimulus_frames(body, motion, skeleton), 0.1)
