"""The motion contract: what every reader of SMPL-X motion accepts (docs/faults.md, "Readers").

One check for every kind of motion the harness reads — a dataset's reference files
(`data.beat2.read_motion_npz`), a model's result files (`models.formats.read_result`), the
generated-motion cache and the motion a model generates in-process (`check_motion`): keys, shapes,
numeric dtypes, finiteness, the frame rate, and values within physically plausible bounds. A value
past a bound is refused as finiteness is, since a finite absurd value breaks the metrics as silently
as NaN does (1e30 cancels to a wrong distance in float32). Every problem is a one-line `DataError`
naming the file (or the model and sequence) and where in it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gesturebench.data.records import FPS, N_EXPRESSIONS, POSE_DIM, Motion
from gesturebench.runtime.errors import DataError

REQUIRED_KEYS = ("poses", "trans", "betas")
#: Array dtypes accepted as numbers (signed, unsigned, float): not bool, complex, dates or objects.
NUMERIC_KINDS = "iuf"
#: Largest axis-angle magnitude |θ| (rad) of a joint rotation. Exporters write |θ| ≤ π (scipy's
#: `as_rotvec`, pytorch3d's `matrix_to_axis_angle`, SMPL-X fits: BEAT2's largest is 2.45); a fit
#: that keeps angles continuous over frames may pass π by a turn. Beyond 4π no exporter goes, and
#: float32 angles lose precision far out (1e-3 rad at 1e4).
MAX_ROTATION = 4 * np.pi
#: Largest |translation| (m) along any axis: capture volumes are metres across (BEAT2's largest
#: offset is 1.3 m), the largest optical ones tens of metres; float32 keeps 8 µm steps at 100 m.
MAX_TRANSLATION = 100.0
#: Largest |coefficient| of `expressions` (FLAME) and `betas` (SMPL-X shape): PCA coefficients in
#: units of their standard deviation, within ±10 in any capture (BEAT2's largest: 6.1 and 2.5).
MAX_COEFFICIENT = 100.0
#: Largest deviation of a result file's 3×3 rotation matrix from a rotation, max |RᵀR − I| (and
#: det R > 0): a network's raw matrices are near-orthonormal, and scipy reads any of them as the
#: nearest rotation, so a matrix far off (1e30·I reads as the identity) would pass for one.
MAX_MATRIX_ERROR = 0.1
#: Array key → (bound, the value as a message words it, the bound as it words it).
BOUNDS = {
    "poses": (MAX_ROTATION, "a rotation of |θ| = {:.3g} rad", "4π rad"),
    "trans": (MAX_TRANSLATION, "a translation of {:.3g} m", "±100 m"),
    "expressions": (MAX_COEFFICIENT, "a coefficient of {:.3g}", "±100"),
    "betas": (MAX_COEFFICIENT, "a coefficient of {:.3g}", "±100"),
}


def not_numeric(key: str, dtype: np.dtype) -> str:
    """The problem of an array `key` that holds no real numbers (bool, complex, strings; pickled
    object arrays are not loaded)."""
    pickled = ", a pickled array that is not loaded" if dtype.kind == "O" else ""
    return f"'{key}' is not numeric (dtype {dtype}{pickled}; expected integers or floats)"


def magnitudes(key: str, values: np.ndarray) -> np.ndarray:
    """(rows, n) magnitudes that `BOUNDS[key]` limits, float64: |θ| of each joint's axis-angle
    (poses (T, 165) → (T, 55)), else each value's absolute value."""
    values = np.abs(np.asarray(values, dtype=np.float64)).reshape(len(values), -1)
    if key != "poses":
        return values
    joints = values.reshape(len(values), -1, 3)
    scale = joints.max(axis=-1)  # scaled, so that |θ| of a huge vector does not overflow
    unit = joints / np.where(scale > 0, scale, 1.0)[..., None]
    return scale * np.sqrt((unit**2).sum(axis=-1))


def value_problem(key: str, values: np.ndarray) -> str | None:
    """Why the (rows, …) array `key` is refused — its first non-finite value, or its first
    magnitude past `BOUNDS[key]` — with the row (frame; index for betas); None when it is valid."""
    where = "index" if key == "betas" else "frame"
    rows = values[:, None] if key == "betas" else values
    finite = np.isfinite(rows).reshape(len(rows), -1).all(axis=1)
    if not finite.all():
        row = int(np.argmin(finite))
        return f"'{key}' has {'NaN' if np.isnan(rows[row]).any() else 'Inf'} at {where} {row}"
    bound, value, limit = BOUNDS[key]
    size = magnitudes(key, rows)
    past = np.argwhere(size > bound)
    if not len(past):
        return None
    row, col = (int(i) for i in past[0])
    joint = f", joint {col}" if key == "poses" else ""
    return (
        f"'{key}' has {value.format(size[row, col])} at {where} {row}{joint}, past the plausible "
        f"bound {limit} (docs/faults.md, Readers)"
    )


def validate_motion_arrays(path: str | Path, arrays: dict, expected_fps: int = FPS) -> Motion:
    """Check BEAT2 motion arrays (keys, shapes, dtypes, finiteness, bounds, fps) and build a
    `Motion`; `DataError` names `path`.

    Required: ``poses`` (T,165) axis-angle, ``trans`` (T,3), ``betas`` 1-D, T ≥ 1. Defaults, chosen
    because many model outputs are body-only or written without metadata: a missing
    ``expressions`` is a neutral face (zeros (T,100)); fewer than 100 expression coefficients are
    zero-padded; a missing ``mocap_frame_rate`` is taken as 30 fps. Any other fps than
    `expected_fps` is refused (gesturebench does not resample motion).
    """
    missing = [k for k in REQUIRED_KEYS if k not in arrays]
    if missing:
        present = ", ".join(sorted(arrays)) or "none"
        raise DataError(path, f"missing key {', '.join(map(repr, missing))} (has: {present})")
    for key in (*REQUIRED_KEYS, "expressions", "mocap_frame_rate"):
        if key in arrays and np.asarray(arrays[key]).dtype.kind not in NUMERIC_KINDS:
            raise DataError(path, not_numeric(key, np.asarray(arrays[key]).dtype))
    poses, trans, betas = (np.asarray(arrays[k]) for k in REQUIRED_KEYS)
    if poses.ndim != 2 or poses.shape[1] != POSE_DIM or len(poses) == 0:
        raise DataError(
            path, f"'poses' has shape {poses.shape}; expected (T, {POSE_DIM}) with T >= 1"
        )
    n = len(poses)
    if trans.shape != (n, 3):
        raise DataError(
            path, f"'trans' has shape {trans.shape}; expected ({n}, 3) to match 'poses'"
        )
    if betas.ndim != 1 or betas.size == 0:
        raise DataError(
            path, f"'betas' has shape {betas.shape}; expected a 1-D vector such as (300,)"
        )
    expressions = np.asarray(arrays.get("expressions", np.zeros((n, N_EXPRESSIONS))))
    if expressions.ndim != 2 or len(expressions) != n or expressions.shape[1] > N_EXPRESSIONS:
        raise DataError(
            path, f"'expressions' has shape {expressions.shape}; expected ({n}, <= {N_EXPRESSIONS})"
        )
    expressions = np.pad(expressions, ((0, 0), (0, N_EXPRESSIONS - expressions.shape[1])))
    check_values(path, poses=poses, trans=trans, betas=betas, expressions=expressions)
    rate = np.asarray(arrays.get("mocap_frame_rate", np.array(FPS)))
    if rate.size != 1:
        raise DataError(
            path, f"'mocap_frame_rate' has shape {rate.shape}; expected a single number"
        )
    fps = float(rate.reshape(()))
    if fps != expected_fps:
        raise DataError(
            path,
            f"motion is {fps:g} fps (mocap_frame_rate); gesturebench needs {expected_fps} fps "
            f"(resample it first)",
        )
    return Motion(poses=poses, trans=trans, betas=betas, expressions=expressions, fps=expected_fps)


def matrix_problem(key: str, matrices: np.ndarray) -> str | None:
    """Why the (T, J, 9) rotation matrices of array `key` are refused — the first frame and joint
    whose matrix is no rotation within `MAX_MATRIX_ERROR`, or not finite — or None."""
    mats = np.asarray(matrices, dtype=np.float64).reshape(*matrices.shape[:2], 3, 3)
    with np.errstate(over="ignore", invalid="ignore"):
        error = np.abs(mats.swapaxes(-1, -2) @ mats - np.eye(3)).max(axis=(-1, -2))
        det = np.linalg.det(np.where(np.isfinite(mats), mats, 0.0))
    bad = np.argwhere(~(error <= MAX_MATRIX_ERROR) | ~(det > 0))
    if not len(bad):
        return None
    frame, joint = (int(i) for i in bad[0])
    return (
        f"'{key}' holds no rotation matrix at frame {frame}, joint {joint} (max |RᵀR − I| = "
        f"{error[frame, joint]:.3g}, det {det[frame, joint]:.3g}; a rotation has 0 and 1, "
        f"docs/faults.md, Readers)"
    )


def check_values(source: str | Path, **arrays: np.ndarray) -> None:
    """`DataError` naming `source` for the first of `arrays` (key → values of `BOUNDS`' keys, in
    their original dtype: a float64 past float32's range is caught before the cast) that
    `value_problem` refuses."""
    for key, values in arrays.items():
        problem = value_problem(key, values)
        if problem is not None:
            raise DataError(source, problem)


def check_motion(source: str, motion: Motion) -> Motion:
    """`motion` (made in-process, e.g. by a model's `generate`) when it keeps the contract's values;
    else a `DataError` naming `source` (e.g. ``model=emage, sequence 2_scott_0_1_1``)."""
    if motion.n_frames == 0:
        raise DataError(source, "motion has no frames")
    check_values(
        source,
        poses=motion.poses,
        trans=motion.trans,
        betas=motion.betas,
        expressions=motion.expressions,
    )
    return motion
