"""A procedural SMPL-X model file: a simple humanoid surface in SMPL-X's own `.npz` layout.

Why: the real SMPL-X model is licensed and cannot ship with the project, yet every metric needs a
body model. This module writes a stand-in with exactly the keys and shapes that `smplx.SMPLX` reads
with ``ext='npz'``, so the same code path runs on it and the real ``SMPLX_NEUTRAL_2020.npz`` is a
drop-in replacement (``body_model.model_path=...``).

What the file holds:

* Surface: one capsule per bone of SMPL-X's 55-joint tree (a tube with elliptic cross-section and
  ellipsoidal end caps, overlapping its neighbours), plus nose and ears, in SMPL-X's rest-pose
  geometry: y up, metres, facing +z, the subject's left at +x, pelvis at y≈-0.35, soles at y≈-1.295,
  head top at y≈+0.50, so BEAT2's ``trans`` (y≈1.3) stands the body on the floor y≈0. Exactly 10,475
  vertices; the `smplx` package's landmark vertex ids (heels, toes, fingertips, nose, eyes, ears)
  sit at those body parts.
* ``J_regressor``: each joint is the mean of one ring of vertices centred on it, so regressed joints
  land exactly on the rest joints and follow shape changes.
* ``weights``: each vertex is skinned to its bone's joint, blended with the parent joint over the
  first quarter of the bone (half-and-half at the joint itself).
* ``shapedirs`` (300 shape + 100 expression): beta 0 scales height (+3 % per unit, about y=0), beta
  1 scales girth (+10 % of the distance to the bone axis per unit, joints unchanged); all other
  shape and all expression directions are zero.
* ``posedirs``: zero (no pose-corrective blend shapes). ``hands_mean{l,r}``: zero (the rest hand is
  flat), ``hands_components{l,r}``: identity. Facial landmarks: faces on the front of the head.

Deterministic (no randomness, byte-identical files); generated in about a second, written
atomically.
"""

from __future__ import annotations

import functools
import io
import itertools
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from smplx.vertex_ids import vertex_ids as SMPLX_VERTEX_IDS

from gesturebench.body.joints import N_VERTICES, PARENTS
from gesturebench.data.records import N_JOINTS
from gesturebench.runtime.caches import CacheEntry, Schema, file_state
from gesturebench.runtime.errors import CheckpointError

N_SHAPE, N_EXPRESSION = 300, 100
N_POSE_BASIS = 9 * (N_JOINTS - 1)
N_FACE_LANDMARKS, N_CONTOUR_LANDMARKS, N_CONTOUR_ANGLES = 51, 17, 79
HEIGHT_PER_BETA, GIRTH_PER_BETA = 0.03, 0.10
MODEL_FILE_NAME = "SMPLX_NEUTRAL_2020.npz"

# Each left-side joint and its right-side twin (the right body is the left mirrored at x=0).
_LEFT = (1, 4, 7, 10, 13, 16, 18, 20, 23, *range(25, 40))
_RIGHT = (2, 5, 8, 11, 14, 17, 19, 21, 24, *range(40, 55))
MIRROR = np.arange(N_JOINTS)
MIRROR[list(_LEFT)], MIRROR[list(_RIGHT)] = _RIGHT, _LEFT


def _rest_joints() -> np.ndarray:
    """Rest-pose joints (55,3): the centre line and the left side, the right side mirrored."""
    j = np.zeros((N_JOINTS, 3))
    j[0] = (0.0, -0.350, 0.010)  # pelvis
    j[1] = (0.060, -0.445, -0.005)  # left hip
    j[3] = (0.0, -0.235, -0.015)  # spine1
    j[4] = (0.105, -0.820, 0.000)  # left knee
    j[6] = (0.0, -0.100, 0.000)  # spine2
    j[7] = (0.085, -1.215, -0.040)  # left ankle
    j[9] = (0.0, -0.045, 0.010)  # spine3
    j[10] = (0.115, -1.260, 0.085)  # left foot (ball of the foot)
    j[12] = (0.0, 0.165, -0.020)  # neck
    j[13] = (0.050, 0.085, -0.010)  # left collar
    j[15] = (0.0, 0.275, 0.005)  # head
    j[16] = (0.170, 0.110, -0.020)  # left shoulder
    j[18] = (0.425, 0.060, -0.035)  # left elbow
    j[20] = (0.680, 0.045, -0.030)  # left wrist
    j[22] = (0.0, 0.285, 0.030)  # jaw
    j[23] = (0.031, 0.355, 0.090)  # left eye
    # Left hand, palm down, fingers along +x, thumb towards +z: (first joint offset from the wrist,
    # then each further joint's offset from the previous one) for index, middle, pinky, ring, thumb.
    for first, chain in zip((25, 28, 31, 34, 37), _FINGERS, strict=True):
        j[first] = j[20] + chain[0]
        j[first + 1] = j[first] + chain[1]
        j[first + 2] = j[first + 1] + chain[2]
    j[list(_RIGHT)] = j[list(_LEFT)] * (-1.0, 1.0, 1.0)
    return j


# Per finger: wrist→joint1, joint1→joint2, joint2→joint3, joint3→fingertip (metres).
_FINGERS = np.array(
    [
        [
            (0.088, -0.006, 0.024),
            (0.036, -0.002, 0.002),
            (0.022, -0.002, 0.000),
            (0.022, -0.002, 0.000),
        ],
        [
            (0.092, -0.004, 0.002),
            (0.040, -0.002, 0.000),
            (0.025, -0.002, 0.000),
            (0.024, -0.002, 0.000),
        ],
        [
            (0.072, -0.010, -0.038),
            (0.026, -0.002, -0.004),
            (0.018, -0.002, -0.002),
            (0.019, -0.002, -0.002),
        ],
        [
            (0.084, -0.007, -0.019),
            (0.036, -0.002, -0.002),
            (0.024, -0.002, -0.001),
            (0.022, -0.002, -0.001),
        ],
        [
            (0.028, -0.018, 0.030),
            (0.026, -0.006, 0.026),
            (0.022, -0.004, 0.016),
            (0.018, -0.002, 0.010),
        ],
    ]
)
REST_JOINTS = _rest_joints()


@dataclass(frozen=True)
class Capsule:
    """A tube from `start` to `end` skinned to `joint`; radii (start, end) along `side` (width) and
    across it.

    `caps` are the lengths of the ellipsoidal end caps beyond start and end; `regresses` the joints
    (on the axis) whose J_regressor row is the vertex ring through them; `blend` mixes in the parent
    joint's skinning near the start. `axis` is only needed when start == end (a sphere).
    """

    name: str
    joint: int
    start: tuple
    end: tuple
    width: tuple
    depth: tuple
    side: tuple
    caps: tuple
    n_lon: int
    n_rings: int
    regresses: tuple = ()
    blend: bool = True
    axis: tuple = (0.0, 0.0, 1.0)


def _bone(name, joint, end, width, depth, side, caps, n_lon, n_rings, regresses=None, blend=True):
    """A capsule starting at `joint`'s rest position; `end` is a joint index or a point."""
    end = REST_JOINTS[end] if isinstance(end, int) else np.asarray(end)
    return Capsule(
        name,
        joint,
        tuple(REST_JOINTS[joint]),
        tuple(end),
        width,
        depth,
        side,
        caps,
        n_lon,
        n_rings,
        (joint,) if regresses is None else regresses,
        blend,
    )


def _finger_capsules() -> list[Capsule]:
    parts = []
    for f, (first, label) in enumerate(
        zip((25, 28, 31, 34, 37), ("index", "middle", "pinky", "ring", "thumb"), strict=True)
    ):
        r = 0.0105 if label == "thumb" else 0.009
        for k in range(3):
            joint = first + k
            tip = REST_JOINTS[joint] + _FINGERS[f][3]
            end = tip if k == 2 else joint + 1
            caps = (0.006, 0.008) if k == 2 else (0.006, 0.004)
            parts.append(
                _bone(
                    f"left_{label}{k + 1}",
                    joint,
                    end,
                    (r, 0.9 * r),
                    (0.85 * r, 0.8 * r),
                    (0, 0, 1),
                    caps,
                    8,
                    8 if k == 2 else 6,
                )
            )
    return parts


def capsules() -> tuple[list[Capsule], list[Capsule]]:
    """The centre-line capsules and the left-side capsules (mirrored to make the right side)."""
    x, y, z = (1, 0, 0), (0, 1, 0), (0, 0, 1)
    centre = [
        _bone("pelvis", 0, 3, (0.165, 0.15), (0.11, 0.10), x, (0.14, 0.02), 40, 14, blend=False),
        _bone("spine1", 3, 6, (0.15, 0.155), (0.10, 0.105), x, (0.02, 0.02), 40, 10),
        _bone("spine2", 6, 9, (0.155, 0.165), (0.105, 0.11), x, (0.02, 0.02), 40, 6),
        _bone("spine3", 9, 12, (0.165, 0.12), (0.11, 0.08), x, (0.02, 0.04), 40, 12),
        _bone("neck", 12, 15, (0.055, 0.05), (0.055, 0.05), x, (0.01, 0.01), 23, 9),
        _bone(
            "head", 15, (0.0, 0.43, 0.005), (0.075, 0.08), (0.09, 0.095), x, (0.035, 0.07), 40, 24
        ),
        _bone("jaw", 22, (0.0, 0.245, 0.085), (0.05, 0.03), (0.025, 0.02), x, (0.01, 0.015), 20, 8),
        Capsule(
            "nose",
            15,
            (0.0, 0.325, 0.09),
            (0.0, 0.325, 0.118),
            (0.012, 0.008),
            (0.014, 0.008),
            x,
            (0.005, 0.006),
            12,
            6,
            blend=False,
        ),
    ]
    left = [
        Capsule(
            "left_eye",
            23,
            tuple(REST_JOINTS[23]),
            tuple(REST_JOINTS[23]),
            (0.012, 0.012),
            (0.012, 0.012),
            x,
            (0.012, 0.012),
            12,
            8,
            (23,),
            blend=False,
        ),
        Capsule(
            "left_ear",
            15,
            (0.083, 0.365, 0.0),
            (0.083, 0.335, -0.005),
            (0.018, 0.016),
            (0.008, 0.007),
            z,
            (0.015, 0.015),
            12,
            6,
            blend=False,
        ),
        _bone("left_collar", 13, 16, (0.045, 0.05), (0.05, 0.05), y, (0.02, 0.02), 16, 8),
        _bone("left_upper_arm", 16, 18, (0.05, 0.042), (0.05, 0.042), y, (0.03, 0.02), 24, 16),
        _bone("left_forearm", 18, 20, (0.04, 0.03), (0.04, 0.03), y, (0.02, 0.015), 24, 16),
        _bone("left_palm", 20, 28, (0.03, 0.042), (0.018, 0.014), z, (0.015, 0.012), 20, 12),
        *_finger_capsules(),
        _bone("left_thigh", 1, 4, (0.08, 0.055), (0.085, 0.058), x, (0.05, 0.02), 24, 20),
        _bone(
            "left_shin",
            4,
            7,
            (0.055, 0.035),
            (0.058, 0.038),
            x,
            (0.02, 0.02),
            28,
            20,
            regresses=(4, 7),
        ),
        Capsule(
            "left_foot",
            7,
            (0.088, -1.26, -0.075),
            tuple(REST_JOINTS[10]),
            (0.04, 0.048),
            (0.035, 0.03),
            x,
            (0.025, 0.01),
            24,
            14,
            blend=False,
        ),
        _bone(
            "left_toes",
            10,
            (0.122, -1.26, 0.135),
            (0.045, 0.04),
            (0.03, 0.022),
            x,
            (0.01, 0.02),
            20,
            8,
        ),
    ]
    return centre, left


# The `smplx` package's landmarks (left side; the right side mirrors them) → (capsule, axial
# position as a fraction of the bone, past 1 reaching into the end cap, or "tip" for the end pole;
# outward direction).
_LANDMARKS = {
    "nose": ("nose", "tip", None),
    "leye": ("left_eye", "tip", None),
    "lear": ("left_ear", 0.5, (1, 0, 0)),
    "lthumb": ("left_thumb3", "tip", None),
    "lindex": ("left_index3", "tip", None),
    "lmiddle": ("left_middle3", "tip", None),
    "lring": ("left_ring3", "tip", None),
    "lpinky": ("left_pinky3", "tip", None),
    "LBigToe": ("left_toes", 1.0, (-0.4, -1, 0.3)),
    "LSmallToe": ("left_toes", 0.8, (0.4, -1, 0.1)),
    "LHeel": ("left_foot", 0.0, (0, -1, 0)),
}
_RIGHT_NAMES = {
    "leye": "reye",
    "lear": "rear",
    "lthumb": "rthumb",
    "lindex": "rindex",
    "lmiddle": "rmiddle",
    "lring": "rring",
    "lpinky": "rpinky",
    "LBigToe": "RBigToe",
    "LSmallToe": "RSmallToe",
    "LHeel": "RHeel",
}


@dataclass
class _Mesh:
    """One capsule's surface: vertices, faces (local indices), axial position, ring centre per
    vertex."""

    verts: np.ndarray
    faces: np.ndarray
    s: np.ndarray
    centres: np.ndarray
    rings: list  # local vertex indices of each ring, poles included as one-vertex rings

    def mirrored(self) -> _Mesh:
        flip = np.array([-1.0, 1.0, 1.0])
        return _Mesh(
            self.verts * flip, self.faces[:, ::-1].copy(), self.s, self.centres * flip, self.rings
        )


def _profile(cap: Capsule, length: float) -> tuple[np.ndarray, np.ndarray]:
    """Axial positions of the rings, evenly spaced along the outline, and the cap's radius factor at
    each."""
    c0, c1 = cap.caps
    quarter0, quarter1 = c0 * np.pi / 2, c1 * np.pi / 2
    total = quarter0 + length + quarter1
    t = total * np.arange(1, cap.n_rings + 1) / (cap.n_rings + 1)
    s = np.where(
        t < quarter0,
        -c0 * np.cos(t / c0),
        np.where(
            t <= quarter0 + length, t - quarter0, length + c1 * np.sin((t - quarter0 - length) / c1)
        ),
    )
    for joint in cap.regresses:  # move the nearest ring exactly onto each regressed joint
        s_joint = _axial(cap, REST_JOINTS[joint])
        s[np.argmin(np.abs(s - s_joint))] = s_joint
    over0, over1 = np.clip(-s / c0, 0.0, 1.0), np.clip((s - length) / c1, 0.0, 1.0)
    return s, np.sqrt(1.0 - over0**2) * np.sqrt(1.0 - over1**2)


def _axial(cap: Capsule, point: np.ndarray) -> float:
    """Position of `point` along the capsule's axis, from `start`."""
    return float(np.dot(point - np.asarray(cap.start), _axis(cap)))


def _axis(cap: Capsule) -> np.ndarray:
    d = np.subtract(cap.end, cap.start)
    n = np.linalg.norm(d)
    return d / n if n > 0 else np.asarray(cap.axis, dtype=float)


def _capsule_mesh(cap: Capsule) -> _Mesh:
    start, end = np.asarray(cap.start, float), np.asarray(cap.end, float)
    d = _axis(cap)
    length = float(np.linalg.norm(end - start))
    e1 = np.asarray(cap.side, float) - np.dot(cap.side, d) * d
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(d, e1)
    s, factor = _profile(cap, length)
    frac = np.clip(s / length, 0.0, 1.0) if length > 0 else np.zeros_like(s)
    r1 = factor * np.interp(frac, (0, 1), cap.width)
    r2 = factor * np.interp(frac, (0, 1), cap.depth)
    phi = 2 * np.pi * np.arange(cap.n_lon) / cap.n_lon
    centres = start + s[:, None] * d
    ring_pts = (
        centres[:, None]
        + r1[:, None, None] * np.cos(phi)[None, :, None] * e1
        + r2[:, None, None] * np.sin(phi)[None, :, None] * e2
    )
    back, front = start - cap.caps[0] * d, end + cap.caps[1] * d
    verts = np.concatenate([back[None], ring_pts.reshape(-1, 3), front[None]])
    n, m = cap.n_lon, cap.n_rings
    rings = [1 + k * n + np.arange(n) for k in range(m)]
    faces = [
        np.stack([np.zeros(n, int), np.roll(rings[0], -1), rings[0]], 1)
    ]  # fan around the back pole
    for a, b in itertools.pairwise(rings):
        faces += [
            np.stack([a, np.roll(a, -1), np.roll(b, -1)], 1),
            np.stack([a, np.roll(b, -1), b], 1),
        ]
    faces.append(np.stack([rings[-1], np.roll(rings[-1], -1), np.full(n, 1 + m * n)], 1))
    all_s = np.concatenate([[-cap.caps[0]], np.repeat(s, n), [length + cap.caps[1]]])
    all_centres = np.concatenate([back[None], np.repeat(centres, n, axis=0), front[None]])
    rings = [np.array([0]), *rings, np.array([1 + m * n])]
    return _Mesh(verts, np.concatenate(faces), all_s, all_centres, rings)


def _pick(cap: Capsule, mesh: _Mesh, where, direction, mirrored: bool) -> int:
    """Local index of a landmark: the end pole, or the vertex furthest along `direction` (given for
    the left side, mirrored for the right) on the ring nearest to `where` × the bone length."""
    if where == "tip":
        return int(mesh.rings[-1][0])
    length = float(np.linalg.norm(np.subtract(cap.end, cap.start)))
    ring_s = np.array([mesh.s[r[0]] for r in mesh.rings])
    ring = mesh.rings[int(np.argmin(np.abs(ring_s - where * length)))]
    offsets = mesh.verts[ring] - mesh.centres[ring]
    direction = np.asarray(direction, float) * ((-1.0, 1.0, 1.0) if mirrored else 1.0)
    return int(ring[np.argmax(offsets @ direction)])


def _skinning(cap: Capsule, mesh: _Mesh, joint: int) -> np.ndarray:
    """(V_part, 55) weights: the capsule's joint, blended with its parent over the first quarter of
    the bone."""
    w = np.zeros((len(mesh.verts), N_JOINTS))
    parent = PARENTS[joint]
    length = float(np.linalg.norm(np.subtract(cap.end, cap.start)))
    to_parent = (
        0.5 * np.clip(1.0 - mesh.s / (0.25 * length), 0.0, 1.0)
        if cap.blend and parent >= 0
        else 0.0
    )
    w[:, joint] = 1.0 - to_parent
    if cap.blend and parent >= 0:
        w[:, parent] += to_parent
    return w


def _assemble() -> list[tuple[Capsule, _Mesh, bool]]:
    """All parts in generation order: (capsule, mesh, is the mirrored right-side copy)."""
    centre, left = capsules()
    left_meshes = [(c, _capsule_mesh(c)) for c in left]
    return (
        [(c, _capsule_mesh(c), False) for c in centre]
        + [(c, m, False) for c, m in left_meshes]
        + [(c, m.mirrored(), True) for c, m in left_meshes]
    )


def build_arrays() -> dict[str, np.ndarray]:
    """The model's arrays, keyed as in SMPL-X's `.npz` files (see the module docstring)."""
    verts, faces, weights, radial, regressor_rings, landmarks = [], [], [], [], {}, {}
    offset = n_faces = 0
    for cap, mesh, right in _assemble():
        joint_of = MIRROR if right else np.arange(N_JOINTS)
        verts.append(mesh.verts)
        faces.append(mesh.faces + offset)
        weights.append(_skinning(cap, mesh, int(joint_of[cap.joint])))
        radial.append(mesh.verts - mesh.centres)
        for joint in cap.regresses:
            s_joint = _axial(cap, REST_JOINTS[joint])
            ring = next(r for r in mesh.rings if len(r) > 1 and abs(mesh.s[r[0]] - s_joint) < 1e-12)
            regressor_rings[int(joint_of[joint])] = ring + offset
        for name, (cap_name, where, direction) in _LANDMARKS.items():
            if cap.name == cap_name:
                key = _RIGHT_NAMES[name] if right else name
                landmarks[SMPLX_VERTEX_IDS["smplx"][key]] = (
                    _pick(cap, mesh, where, direction, right) + offset
                )
        if cap.name == "head":
            face_landmarks = _face_front(mesh) + n_faces
        offset += len(mesh.verts)
        n_faces += len(mesh.faces)
    if offset != N_VERTICES:
        raise AssertionError(f"procedural body has {offset} vertices, SMPL-X needs {N_VERTICES}")

    order = _vertex_order(landmarks)  # new index -> generated index
    new_of_old = np.empty_like(order)
    new_of_old[order] = np.arange(N_VERTICES)
    v = np.concatenate(verts)[order]
    regressor = np.zeros((N_JOINTS, N_VERTICES))
    for joint, ring in regressor_rings.items():
        regressor[joint, new_of_old[ring]] = 1.0 / len(ring)
    shapedirs = np.zeros((N_VERTICES, 3, N_SHAPE + N_EXPRESSION), dtype=np.float32)
    shapedirs[:, 1, 0] = HEIGHT_PER_BETA * v[:, 1]
    shapedirs[:, :, 1] = GIRTH_PER_BETA * np.concatenate(radial)[order]
    return {
        "v_template": v,
        "f": new_of_old[np.concatenate(faces)].astype(np.int32),
        "J_regressor": regressor,
        "kintree_table": np.stack([PARENTS, np.arange(N_JOINTS)]).astype(np.int64),
        "weights": np.concatenate(weights)[order],
        "posedirs": np.zeros((N_VERTICES, 3, N_POSE_BASIS), dtype=np.float32),
        "shapedirs": shapedirs,
        "hands_componentsl": np.eye(45),
        "hands_componentsr": np.eye(45),
        "hands_meanl": np.zeros(45),
        "hands_meanr": np.zeros(45),
        "lmk_faces_idx": _evenly(face_landmarks, N_FACE_LANDMARKS),
        "lmk_bary_coords": np.full((N_FACE_LANDMARKS, 3), 1.0 / 3.0),
        "dynamic_lmk_faces_idx": np.tile(
            _evenly(face_landmarks, N_CONTOUR_LANDMARKS), (N_CONTOUR_ANGLES, 1)
        ),
        "dynamic_lmk_bary_coords": np.full((N_CONTOUR_ANGLES, N_CONTOUR_LANDMARKS, 3), 1.0 / 3.0),
    }


def _vertex_order(landmarks: dict[int, int]) -> np.ndarray:
    """A permutation putting each landmark vertex at its `smplx` id and the others in generation
    order."""
    order = np.full(N_VERTICES, -1)
    order[list(landmarks)] = list(landmarks.values())
    order[order < 0] = np.setdiff1d(np.arange(N_VERTICES), list(landmarks.values()))
    return order


def _evenly(items: np.ndarray, n: int) -> np.ndarray:
    return items[np.linspace(0, len(items) - 1, n).round().astype(int)]


def _face_front(mesh: _Mesh) -> np.ndarray:
    """Local indices of the head's faces that face forward between chin and brow, top to bottom."""
    centroid = mesh.verts[mesh.faces].mean(axis=1)
    outward = centroid - mesh.centres[mesh.faces].mean(axis=1)
    front = (
        (outward[:, 2] > 0.8 * np.linalg.norm(outward, axis=1))
        & (centroid[:, 1] > 0.26)
        & (centroid[:, 1] < 0.40)
    )
    idx = np.flatnonzero(front)
    return idx[np.argsort(-centroid[idx, 1], kind="stable")].astype(np.int64)


def procedural_model_bytes() -> bytes:
    """The procedural SMPL-X model file's bytes: `np.savez_compressed`'s layout with fixed
    timestamps, so they are reproducible and the file's SHA-256 can key caches."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for key, value in build_arrays().items():
            entry = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            entry.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(entry, "w", force_zip64=True) as out:
                np.lib.format.write_array(out, value, allow_pickle=False)
    return buffer.getvalue()


def _read_arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as arrays:
        return dict(arrays)


def model_entry(path: Path) -> CacheEntry[dict[str, np.ndarray]]:
    """The procedural model file at `path` as a cache entry: its arrays numbers, the floating
    ones finite."""
    return CacheEntry(
        path,
        "gesturebench.body.procedural v1",
        {"file": path.name},
        Schema(kinds="biuf"),
        decode=_read_arrays,
        arrays=lambda arrays: arrays,
    )


def proven(path: Path) -> bool:
    """Whether the model file at `path` proves its content (`model_entry`; a damaged one is set
    aside), checked once per process for each state of the file and its sidecar (`file_state`):
    decoding and checking its ~120 MB of arrays takes ~0.5 s, which each body model a process
    builds (each job of a sweep, each source of a study) would otherwise pay again."""
    entry = model_entry(path)
    try:
        state = (file_state(path), file_state(entry.meta_path))
    except FileNotFoundError:  # none yet, or no sidecar (set aside by the read)
        return entry.read() is not None
    return _proven_in(path, state)


@functools.lru_cache(maxsize=4)
def _proven_in(path: Path, state: tuple) -> bool:
    """`proven` for the file in `state`."""
    return model_entry(path).read() is not None


def write_procedural_model(path: str | Path) -> Path:
    """Write the procedural SMPL-X model to `path` with its cache sidecar, atomically; returns the
    path."""
    path = Path(path)
    model_entry(path).write(procedural_model_bytes())
    return path


def default_model_path(checkpoints_dir: str | Path = "checkpoints") -> Path:
    """`<checkpoints_dir>/body_models/smplx/SMPLX_NEUTRAL_2020.npz`, where the procedural model is
    cached (`checkpoints_dir`: `paths.checkpoints`; relative to the working folder by default)."""
    return Path(checkpoints_dir).resolve() / "body_models" / "smplx" / MODEL_FILE_NAME


def ensure_model_file(
    path: str | Path | None = None, checkpoints_dir: str | Path = "checkpoints"
) -> Path:
    """The model file to load: `path` if given (it must exist), else the default of
    `checkpoints_dir`, generated when missing."""
    if path is None:
        default = default_model_path(checkpoints_dir)
        return default if proven(default) else write_procedural_model(default)
    path = Path(path).expanduser()
    if not path.is_file():
        raise CheckpointError(
            f"{path}: SMPL-X model file not found. Put the SMPL-X model there "
            "(SMPLX_NEUTRAL_2020.npz from https://smpl-x.is.tue.mpg.de), or leave "
            "body_model.model_path unset to use the built-in procedural model "
            f"({default_model_path(checkpoints_dir)})."
        )
    return path
