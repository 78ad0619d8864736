"""`BodyModel`: SMPL-X parameters in BEAT2's format → global joints and vertices, through the
`smplx` package.

One code path for every model file: the `smplx` package's own `SMPLX` class, so the procedural
default (`body/procedural.py`) and the real ``SMPLX_NEUTRAL_2020.npz`` are interchangeable.
"""

from __future__ import annotations

import copy
import functools
import itertools
from pathlib import Path
from typing import Any, Literal

import numpy as np
import smplx
import torch
from smplx.lbs import batch_rigid_transform, batch_rodrigues

from gesturebench.body.output import BodyOutput
from gesturebench.body.procedural import ensure_model_file
from gesturebench.data.records import N_JOINTS, POSE_DIM, Motion
from gesturebench.runtime.caches import file_state
from gesturebench.runtime.errors import CheckpointError, ConfigError, GestureBenchError

#: `body_model.dtype`: float32 (default, fastest on CPU) or float64 (joints and vertices equal
#: across devices to ~1e-15, so no threshold-based metric can flip between a CPU and a GPU run).
Dtype = Literal["float32", "float64"]
DTYPES: dict[Dtype, torch.dtype] = {"float32": torch.float32, "float64": torch.float64}

#: No chunk of a forward holds fewer frames than this unless the whole motion does: the CPU's
#: matrix products take another path for a few rows (2-5 frames on one thread here), which rounds
#: differently, so a short last chunk would make a frame's vertices depend on its sequence's length.
MIN_CHUNK = 8
# Columns of BEAT2's (T,165) axis-angle `poses` for each pose argument of `smplx.SMPLX.forward`
# (SMPL-X's joint order: 0 root, 1–21 body, 22 jaw, 23–24 eyes, 25–39 left hand, 40–54 right hand).
POSE_SLICES = {
    "global_orient": slice(0, 3),
    "body_pose": slice(3, 66),
    "jaw_pose": slice(66, 69),
    "leye_pose": slice(69, 72),
    "reye_pose": slice(72, 75),
    "left_hand_pose": slice(75, 120),
    "right_hand_pose": slice(120, 165),
}


def frame_chunks(n: int, size: int) -> list[slice]:
    """Consecutive runs of `size` frames covering `n`, a last run under `MIN_CHUNK` frames merged
    into the one before."""
    starts = list(range(0, n, size))
    if len(starts) > 1 and n - starts[-1] < MIN_CHUNK:
        starts.pop()
    return [slice(a, b) for a, b in itertools.pairwise([*starts, n])]


def fit_width(x: np.ndarray, width: int) -> np.ndarray:
    """`x` with its last axis truncated or zero-padded to `width` columns."""
    x = x[..., :width]
    return np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, width - x.shape[-1])])


def load_smplx(path: Path, **kwargs) -> smplx.SMPLX:
    """A neutral SMPL-X layer from an `.npz` model file, with full axis-angle hands and no face
    contour."""
    if path.suffix != ".npz" or not path.name.lower().startswith("smplx_"):
        raise CheckpointError(
            f"{path}: expected an SMPL-X .npz model file named SMPLX_<GENDER>....npz "
            "(e.g. SMPLX_NEUTRAL_2020.npz); the smplx package reads the model type from the file "
            "name and .pkl files are not supported"
        )
    try:
        model = smplx.create(
            str(path),
            model_type="smplx",
            gender="neutral",
            use_pca=False,
            use_face_contour=False,
            ext="npz",
            **kwargs,
        )
    # any failure here comes from the file's content: missing keys, bad arrays, not a zip
    except Exception as err:
        raise CheckpointError(
            f"{path}: not a usable SMPL-X model file ({type(err).__name__}: {err})"
        ) from err
    _check_layout(path, model)
    return model


def smplx_layer(
    path: Path,
    num_betas: int,
    num_expression_coeffs: int,
    flat_hand_mean: bool,
    dtype: torch.dtype,
) -> smplx.SMPLX:
    """A copy of the SMPL-X layer that `BodyModel` runs for the model file at `path`, built once
    per process for each state of that file (`file_state`): building reads and
    decompresses the whole file twice (~0.7 s for the procedural model), which every body model of
    a process would otherwise pay again (API calls in one session, in-process runs)."""
    built = _built_layer(
        path.resolve(), file_state(path), num_betas, num_expression_coeffs, flat_hand_mean, dtype
    )
    return copy.deepcopy(built)


@functools.lru_cache(maxsize=2)
def _built_layer(
    path: Path,
    state: tuple[int, ...],
    num_betas: int,
    num_expression_coeffs: int,
    flat_hand_mean: bool,
    dtype: torch.dtype,
) -> smplx.SMPLX:
    """`smplx_layer`'s layer: all-zero trailing directions not loaded, all-zero pose blend shapes
    not multiplied (`state`, the file's `file_state`, keys what was read)."""
    layer = load_smplx(
        path,
        num_betas=num_betas,
        num_expression_coeffs=num_expression_coeffs,
        flat_hand_mean=flat_hand_mean,
        dtype=dtype,
    )
    used = (_leading_nonzero(layer.shapedirs), _leading_nonzero(layer.expr_dirs))
    if used != (
        layer.num_betas,
        layer.num_expression_coeffs,
    ):  # zero directions cannot change the result
        layer = load_smplx(
            path,
            num_betas=used[0],
            num_expression_coeffs=used[1],
            flat_hand_mean=flat_hand_mean,
            dtype=dtype,
        )
    if not bool(layer.posedirs.any()):
        # No pose-corrective shapes (the procedural model): a (P,3) zero stand-in for the
        # (P,V·3) zeros makes `smplx.lbs` add (B,1,3) zero offsets by broadcasting instead of
        # multiplying zeros (a quarter of the mesh forward); the vertices are the same bit for
        # bit.
        layer.posedirs = layer.posedirs.new_zeros(layer.posedirs.shape[0], 3)
    return layer.requires_grad_(False)


def _check_layout(path: Path, model: smplx.SMPLX) -> None:
    """Shapes that `smplx` does not check itself but the forward relies on."""
    n = model.v_template.shape[0]
    expected = {
        "v_template": (tuple(model.v_template.shape), (n, 3)),
        "J_regressor": (tuple(model.J_regressor.shape), (N_JOINTS, n)),
        "weights": (tuple(model.lbs_weights.shape), (n, N_JOINTS)),
        "kintree_table": (tuple(model.parents.shape), (N_JOINTS,)),
        "shapedirs": (tuple(model.shapedirs.shape[:2]), (n, 3)),
        "posedirs": (tuple(model.posedirs.shape), (9 * (N_JOINTS - 1), 3 * n)),
    }
    for key, (got, want) in expected.items():
        if got != want:
            raise CheckpointError(f"{path}: '{key}' has shape {got}, SMPL-X needs {want}")
    if model.faces_tensor.numel() and int(model.faces_tensor.max()) >= n:
        raise CheckpointError(f"{path}: faces 'f' index vertices beyond the {n} of 'v_template'")


def _leading_nonzero(dirs: torch.Tensor) -> int:
    """How many leading blend-shape directions (last axis) remain once the trailing all-zero ones
    are dropped."""
    nonzero = torch.flatten(dirs, 0, -2).abs().amax(dim=0) > 0
    return int(torch.nonzero(nonzero).max()) + 1 if bool(nonzero.any()) else 0


class BodyModel(torch.nn.Module):
    """SMPL-X forward for whole sequences, in chunks, on the module's device (see docs/design.md,
    "Body model").

    `model_path=None` uses the procedural model file in `checkpoints_dir` (generated on first use);
    a given path must exist. Betas are padded/truncated to the model's shape space, expressions to
    its expression space. Trailing shape/expression directions that are all zero in the file (most
    of them in the procedural model) are not loaded, and all-zero pose blend shapes are not
    multiplied: they cannot change the result and cost much of the forward time.
    """

    #: Rest joints (55,3) and their change per shape/expression coefficient (55,3,L): buffers.
    rest_joints: torch.Tensor
    joint_dirs: torch.Tensor

    def __init__(
        self,
        model_path: str | Path | None = None,
        num_betas: int = 300,
        num_expression_coeffs: int = 100,
        flat_hand_mean: bool = False,
        chunk_size: int = 16,
        device: str | torch.device = "cpu",
        dtype: Dtype = "float32",
        checkpoints_dir: str | Path = "checkpoints",
    ):
        super().__init__()
        if chunk_size < 1:
            raise ConfigError(f"body_model.chunk_size must be at least 1, got {chunk_size}")
        self.chunk_size = int(chunk_size)
        self.float_dtype = DTYPES[dtype]
        self.model_path = ensure_model_file(model_path, checkpoints_dir)
        layer = smplx_layer(
            self.model_path, num_betas, num_expression_coeffs, flat_hand_mean, self.float_dtype
        )
        self.smplx_model = layer
        # Rest joints as a linear function of the shape and expression coefficients (the joint
        # regressor applied to the template and to every blend direction), for the joints-only
        # forward.
        dirs = torch.cat([layer.shapedirs, layer.expr_dirs], dim=-1)
        self.register_buffer("rest_joints", layer.J_regressor @ layer.v_template, persistent=False)
        self.register_buffer(
            "joint_dirs", torch.einsum("jv,vkl->jkl", layer.J_regressor, dirs), persistent=False
        )
        self.to(device)

    @property
    def device(self) -> torch.device:
        return self.smplx_model.v_template.device

    @property
    def n_vertices(self) -> int:
        return int(self.smplx_model.v_template.shape[0])

    @property
    def faces(self) -> torch.Tensor:
        """Triangle vertex indices (F,3), for rendering."""
        return self.smplx_model.faces_tensor

    def forward(self, motion: Motion, vertices: bool = True) -> BodyOutput:
        """Global joints (T,55,3) and, if `vertices`, vertices (T,V,3): metres in the module's dtype
        and device."""
        n = motion.n_frames
        _check_motion(motion)
        layer = self.smplx_model
        like: dict[str, Any] = {"dtype": self.float_dtype, "device": self.device}
        poses = torch.tensor(motion.poses, **like)
        trans = torch.tensor(motion.trans, **like)
        expression = torch.tensor(
            fit_width(motion.expressions, layer.num_expression_coeffs), **like
        )
        betas = torch.tensor(fit_width(motion.betas.reshape(1, -1), layer.num_betas), **like)
        joints = torch.empty((n, N_JOINTS, 3), **like)
        verts = torch.empty((n, self.n_vertices, 3), **like) if vertices else None
        with torch.inference_mode():
            for rows in frame_chunks(n, self.chunk_size):
                pose = poses[rows]
                if verts is None:
                    joints[rows] = self._posed_joints(betas, expression[rows], pose, trans[rows])
                    continue
                out = layer(
                    betas=betas,
                    expression=expression[rows],
                    transl=trans[rows],
                    return_verts=True,
                    return_shaped=False,
                    **{name: pose[:, cols] for name, cols in POSE_SLICES.items()},
                )
                joints[rows] = out.joints[:, :N_JOINTS]
                verts[rows] = out.vertices
        return BodyOutput(joints, verts)

    def _posed_joints(self, betas, expression, pose, transl) -> torch.Tensor:
        """The first 55 joints `smplx.SMPLX.forward` returns, without building the mesh.

        The same maths as `smplx.lbs.lbs` restricted to the joints, with the package's own
        `batch_rodrigues` and `batch_rigid_transform`: rest joints of the shaped template, then the
        kinematic chain, plus translation.
        """
        layer = self.smplx_model
        coeffs = torch.cat([betas.expand(len(pose), -1), expression], dim=-1)
        rest = self.rest_joints + torch.einsum("bl,jkl->bjk", coeffs, self.joint_dirs)
        full_pose = pose + layer.pose_mean
        rot_mats = batch_rodrigues(full_pose.reshape(-1, 3)).reshape(len(pose), -1, 3, 3)
        posed, _ = batch_rigid_transform(rot_mats, rest, layer.parents, dtype=rest.dtype)
        return posed + transl.unsqueeze(1)


def _check_motion(motion: Motion) -> None:
    n = motion.n_frames
    shapes = {"poses": (motion.poses.shape, (n, POSE_DIM)), "trans": (motion.trans.shape, (n, 3))}
    for name, (got, want) in shapes.items():
        if tuple(got) != want:
            raise GestureBenchError(
                f"motion '{name}' has shape {tuple(got)}, the body model needs {want}"
            )
    if motion.expressions.ndim != 2 or motion.expressions.shape[0] != n:
        raise GestureBenchError(
            f"motion 'expressions' has shape {motion.expressions.shape}, expected ({n}, E)"
        )
