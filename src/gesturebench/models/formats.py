"""Readers for the result files that official gesture-generation code writes, mapped to the
harness's `Motion`.

Supported (one file per sequence, `.npz`, read with ``allow_pickle=False``):

- BEAT2-format SMPL-X npz — ``poses`` (T,165) axis-angle, ``trans``, ``betas``, ``expressions``,
  ``mocap_frame_rate``: BEAT2's own files, EMAGE/SemTalk/GestureLSM test scripts (``res_{id}.npz``)
  and EMAGE's ``test_emage_audio.py`` (``{audio}_output.npz``, written with zero betas).
- Per-sequence result files with other key names (``rec_pose``, ``res_poses``, ``pred_pose``,
  ``rec_trans``, ``rec_exps``, ``exps``, …), a leading batch axis of 1, joint rotations (flat (T,
  J·C) or (T, J, C)) as axis-angle (C=3), 6D (C=6, pytorch3d's `matrix_to_rotation_6d`: the first
  two rows of the matrix) or flattened rotation matrices (C=9), for 55 SMPL-X joints or 52 (SMPL-X
  without jaw and eyes: body 0–21, then the hands).
- SMPL-X forward arguments as the `smplx` package names them (``global_orient``, ``body_pose``,
  ``jaw_pose``, ``leye_pose``, ``reye_pose``, ``left_hand_pose``, ``right_hand_pose``, ``transl``,
  ``expression``).

Files that hold only the reference (``tar_pose``, ``gt_*``) are refused. Body shape is never
generated: betas are always the reference's. Parts a file lacks (expressions, global translation,
jaw and eyes of 52-joint files) are taken from the reference and reported, so that results say which
fields were copied.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from gesturebench.data.beat2 import read_npz
from gesturebench.data.motion import matrix_problem, not_numeric, validate_motion_arrays
from gesturebench.data.records import N_JOINTS, Motion
from gesturebench.runtime.errors import DataError

#: File names tried for a sequence, in order: BEAT2 / precomputed, EMAGE-style test scripts, EMAGE's
#: audio demo.
DEFAULT_PATTERNS = ("{id}.npz", "res_{id}.npz", "{id}_output.npz")

POSE_KEYS = (
    "poses",
    "res_poses",
    "rec_pose",
    "rec_poses",
    "pred_pose",
    "pred_poses",
    "motion_axis_angle",
    "pose",
)
TRANS_KEYS = ("trans", "transl", "rec_trans", "res_trans", "pred_trans")
EXPRESSION_KEYS = (
    "expressions",
    "expression",
    "exps",
    "rec_exps",
    "rec_exp",
    "res_exps",
    "pred_exps",
    "exp",
)
FPS_KEYS = ("mocap_frame_rate", "mocap_framerate", "fps", "frame_rate")
REFERENCE_KEYS = ("tar_pose", "tar_poses", "gt_pose", "gt_poses")

#: SMPL-X forward arguments and the joints they hold (SMPL-X order: 0 root, 1–21 body, 22 jaw, 23–24
#: eyes, hands).
SMPLX_PARTS = {
    "global_orient": range(1),
    "body_pose": range(1, 22),
    "jaw_pose": range(22, 23),
    "leye_pose": range(23, 24),
    "reye_pose": range(24, 25),
    "left_hand_pose": range(25, 40),
    "right_hand_pose": range(40, 55),
}

#: SMPL-X arguments a file may leave out (taken from the reference), and the field each one is part
#: of.
OPTIONAL_PARTS = {"jaw_pose": "jaw", "leye_pose": "eyes", "reye_pose": "eyes"}

#: Joints present in each supported joint count, in file order.
JOINT_LAYOUTS = {55: np.arange(N_JOINTS), 52: np.r_[0:22, 25:55]}
#: Flat pose widths J·C → (joints J, channels per joint C).
WIDTHS = {j * c: (j, c) for j in JOINT_LAYOUTS for c in (3, 6, 9)}

#: Generated fields that can be copied from the reference, and the pose columns of the ones inside
#: `poses`.
FIELD_COLUMNS = {"jaw": np.arange(66, 69), "eyes": np.arange(69, 75)}
FIELDS = ("expressions", "jaw", "eyes", "trans")


def find_result(
    folder: Path, sequence_id: str, patterns: tuple[str, ...] = DEFAULT_PATTERNS
) -> Path | None:
    """The first existing file `pattern.format(id=sequence_id)` in `folder`, else None."""
    for pattern in patterns:
        path = folder / pattern.format(id=sequence_id)
        if path.is_file():
            return path
    return None


def rotation_6d_to_matrix(d6: np.ndarray) -> np.ndarray:
    """pytorch3d's 6D rotation (…, 6) → rotation matrices (…, 3, 3): Gram–Schmidt on the two rows it
    holds."""
    a1, a2 = d6[..., :3], d6[..., 3:]
    b1 = a1 / np.linalg.norm(a1, axis=-1, keepdims=True)
    b2 = a2 - (b1 * a2).sum(-1, keepdims=True) * b1
    b2 = b2 / np.linalg.norm(b2, axis=-1, keepdims=True)
    return np.stack([b1, b2, np.cross(b1, b2)], axis=-2)


def to_axis_angle(rotations: np.ndarray) -> np.ndarray:
    """(T, J, C) joint rotations, C = 3 (axis-angle), 6 (6D) or 9 (matrix) → (T, J, 3)
    axis-angle."""
    t, j, c = rotations.shape
    if c == 3:
        return rotations
    with np.errstate(
        invalid="ignore", divide="ignore"
    ):  # degenerate rotations become NaN: validation refuses them
        mats = (
            rotation_6d_to_matrix(rotations) if c == 6 else rotations.reshape(t, j, 3, 3)
        ).reshape(-1, 3, 3)
    out = np.full((len(mats), 3), np.nan)
    finite = np.isfinite(mats).all(axis=(1, 2))
    if finite.any():
        out[finite] = Rotation.from_matrix(mats[finite]).as_rotvec()
    return out.reshape(t, j, 3)


def _first(arrays: dict, keys: tuple[str, ...]) -> tuple[str, np.ndarray] | tuple[None, None]:
    for key in keys:
        if key in arrays:
            return key, np.asarray(arrays[key])
    return None, None


def _pose_array(path: Path, arrays: dict) -> tuple[np.ndarray, list[str]]:
    """(T, J, C) rotations of the file and the fields its joint layout lacks ([] or ["eyes",
    "jaw"])."""
    key, poses = _first(arrays, POSE_KEYS)
    if poses is None and "body_pose" in arrays:
        return _from_smplx_parts(path, arrays)
    if poses is None:
        present = ", ".join(sorted(arrays)) or "none"
        if any(k in arrays for k in REFERENCE_KEYS) or any(k.startswith("gt_") for k in arrays):
            raise DataError(
                path,
                f"holds the reference motion but no generated pose (one of "
                f"{', '.join(POSE_KEYS)}); keys: {present}",
            )
        raise DataError(
            path,
            f"no pose array: expected one of {', '.join(POSE_KEYS)} or SMPL-X parts "
            f"({', '.join(SMPLX_PARTS)}); keys: {present}",
        )
    if not np.issubdtype(poses.dtype, np.number):
        raise DataError(path, not_numeric(str(key), poses.dtype))
    if poses.shape[:1] == (1,) and (
        poses.ndim == 4 or (poses.ndim == 3 and poses.shape[2] in WIDTHS)
    ):
        poses = poses[0]  # a batch of one: (1, T, J·C) or (1, T, J, C)
    if poses.ndim == 2 and poses.shape[1] in WIDTHS:
        poses = poses.reshape(len(poses), *WIDTHS[poses.shape[1]])
    if (
        poses.ndim != 3
        or poses.shape[1] not in JOINT_LAYOUTS
        or poses.shape[2] not in (3, 6, 9)
        or len(poses) == 0
    ):
        raise DataError(
            path,
            f"'{key}' has shape {np.shape(arrays[key])}; expected (T, J·C) or (T, J, C) with "
            f"J = 55 or 52 joints and C = 3 (axis-angle), 6 (6D) or 9 (rotation matrix)",
        )
    problem = matrix_problem(str(key), poses) if poses.shape[2] == 9 else None
    if problem is not None:
        raise DataError(path, problem)
    return poses.astype(np.float64), ([] if poses.shape[1] == N_JOINTS else ["eyes", "jaw"])


def _from_smplx_parts(path: Path, arrays: dict) -> tuple[np.ndarray, list[str]]:
    """Assemble (T, 55, 3) axis-angle from SMPL-X forward arguments; absent jaw/eye poses are
    reported missing."""
    n = len(np.asarray(arrays["body_pose"]))
    poses = np.zeros((n, N_JOINTS, 3))
    missing = set()
    for part, joints in SMPLX_PARTS.items():
        if part not in arrays:
            if part not in OPTIONAL_PARTS:
                raise DataError(
                    path, f"SMPL-X parameters without '{part}' (has: {', '.join(sorted(arrays))})"
                )
            missing.add(OPTIONAL_PARTS[part])
            continue
        value = np.asarray(arrays[part], dtype=np.float64)
        if n == 0 or value.size != n * len(joints) * 3:
            raise DataError(
                path,
                f"'{part}' has shape {value.shape}; expected ({n}, {len(joints) * 3}) "
                f"to match 'body_pose' (T, 63)",
            )
        poses[:, joints.start : joints.stop] = value.reshape(n, len(joints), 3)
    return poses, sorted(missing)


def fit_frames(values: np.ndarray, n: int) -> np.ndarray:
    """The first `n` rows of `values`, the last row repeated when it is shorter (reference fields
    for a longer generated motion; the length policy cuts both to the shorter afterwards)."""
    values = values[:n]
    return (
        np.concatenate([values, np.repeat(values[-1:], n - len(values), axis=0)])
        if len(values) < n
        else values
    )


def read_result(path: str | Path, reference: Motion) -> tuple[Motion, list[str]]:
    """Read one result file as a `Motion`; return it with the fields taken from `reference` because
    the file lacks them (sorted names out of `FIELDS`). Betas are always the reference's.

    Every problem (unreadable file, unknown layout, NaN, wrong fps) is a `DataError` naming the
    file.
    """
    path = Path(path)
    arrays = read_npz(path, "result")
    rotations, filled = _pose_array(path, arrays)
    n = len(rotations)
    joints = np.zeros((n, N_JOINTS, 3))
    joints[:, JOINT_LAYOUTS[rotations.shape[1]]] = to_axis_angle(rotations)
    poses = joints.reshape(n, -1)
    for field in filled:
        poses[:, FIELD_COLUMNS[field]] = fit_frames(reference.poses, n)[:, FIELD_COLUMNS[field]]
    out = {"poses": poses, "betas": reference.betas}
    for field, keys in (("trans", TRANS_KEYS), ("expressions", EXPRESSION_KEYS)):
        _, value = _first(arrays, keys)
        if value is None:
            value, filled = fit_frames(getattr(reference, field), n), [*filled, field]
        elif value.ndim == 3 and value.shape[0] == 1:
            value = value[0]
        out[field] = value
    _, fps = _first(arrays, FPS_KEYS)
    if fps is not None:
        out["mocap_frame_rate"] = fps
    return validate_motion_arrays(path, out, reference.fps), sorted(filled)


def identical_fields(generated: Motion, reference: Motion, atol: float = 1e-4) -> list[str]:
    """The fields of `FIELDS` in which `generated` equals `reference` on their common frames (within
    `atol`): copied from the reference, or both neutral — either way a metric there compares the
    reference with itself."""
    n = min(generated.n_frames, reference.n_frames)
    pairs = {
        "expressions": (generated.expressions[:n], reference.expressions[:n]),
        "trans": (generated.trans[:n], reference.trans[:n]),
        **{f: (generated.poses[:n, c], reference.poses[:n, c]) for f, c in FIELD_COLUMNS.items()},
    }
    return [f for f in FIELDS if n and np.allclose(*pairs[f], rtol=0.0, atol=atol)]
