"""The procedural SMPL-X model file and `BodyModel`: layout, landmarks, forward kinematics, a real
BEAT2 sample."""

from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.sparse as sp
import smplx
import torch
from hydra.errors import ConfigCompositionException
from scipy.sparse.csgraph import connected_components
from scipy.spatial.transform import Rotation
from smplx.vertex_ids import vertex_ids

from gesturebench.body import joints as J
from gesturebench.body import procedural
from gesturebench.body.model import BodyModel
from gesturebench.body.procedural import (
    MODEL_FILE_NAME,
    REST_JOINTS,
    default_model_path,
    ensure_model_file,
    procedural_model_bytes,
    write_procedural_model,
)
from gesturebench.data.records import Motion
from gesturebench.runtime.caches import CORRUPT
from gesturebench.runtime.errors import CheckpointError
from tests.helpers import REPO, composed

IDS = vertex_ids["smplx"]
SMPLX_KEYS = {
    "v_template",
    "f",
    "J_regressor",
    "kintree_table",
    "weights",
    "posedirs",
    "shapedirs",
    "hands_componentsl",
    "hands_componentsr",
    "hands_meanl",
    "hands_meanr",
    "lmk_faces_idx",
    "lmk_bary_coords",
    "dynamic_lmk_faces_idx",
    "dynamic_lmk_bary_coords",
}


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    return write_procedural_model(tmp_path_factory.mktemp("body") / MODEL_FILE_NAME)


@pytest.fixture(scope="module")
def arrays(model_file):
    with np.load(model_file) as data:
        return {k: data[k] for k in data.files}


@pytest.fixture(scope="module")
def body(model_file):
    return BodyModel(model_file, chunk_size=512)


def random_motion(n: int, seed: int = 0, betas=None) -> Motion:
    rng = np.random.default_rng(seed)
    return Motion(
        poses=rng.normal(0.0, 0.4, (n, 165)),
        trans=rng.normal(0.0, 0.5, (n, 3)),
        betas=np.zeros(300) if betas is None else betas,
        expressions=rng.normal(0.0, 1.0, (n, 100)),
    )


# --- the file
# -------------------------------------------------------------------------------------------------


def test_file_has_smplx_layout_and_loads_through_smplx_create(model_file, arrays):
    assert set(arrays) == SMPLX_KEYS
    expected = {
        "v_template": (10475, 3),
        "J_regressor": (55, 10475),
        "kintree_table": (2, 55),
        "weights": (10475, 55),
        "posedirs": (10475, 3, 486),
        "shapedirs": (10475, 3, 400),
        "hands_componentsl": (45, 45),
        "hands_meanl": (45,),
        "lmk_faces_idx": (51,),
        "lmk_bary_coords": (51, 3),
        "dynamic_lmk_faces_idx": (79, 17),
        "dynamic_lmk_bary_coords": (79, 17, 3),
    }
    for key, shape in expected.items():
        assert arrays[key].shape == shape, key
    layer = smplx.create(
        str(model_file),
        model_type="smplx",
        use_pca=False,
        use_face_contour=True,
        ext="npz",
        num_betas=300,
        num_expression_coeffs=100,
    )
    assert layer.v_template.shape == (J.N_VERTICES, 3)
    assert layer.num_betas == 300 and layer.num_expression_coeffs == 100
    np.testing.assert_array_equal(layer.parents.numpy(), J.PARENTS)
    out = layer(return_verts=True)  # rest pose, with the dynamic face contour switched on
    np.testing.assert_allclose(out.joints[0, :55].detach().numpy(), REST_JOINTS, atol=1e-5)


def test_file_is_byte_identical_on_rewrite(model_file, tmp_path):
    again = write_procedural_model(tmp_path / MODEL_FILE_NAME)
    assert again.read_bytes() == model_file.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        MODEL_FILE_NAME,
        MODEL_FILE_NAME + ".meta.json",  # its cache sidecar; no temporary file left behind
    ]


def test_regressor_skinning_and_surface_are_well_formed(arrays):
    v, f = arrays["v_template"], arrays["f"].astype(np.int64)
    np.testing.assert_allclose(arrays["J_regressor"].sum(1), 1.0, atol=1e-12)
    np.testing.assert_allclose(arrays["weights"].sum(1), 1.0, atol=1e-12)
    assert (arrays["weights"] >= 0).all()
    np.testing.assert_allclose(arrays["J_regressor"] @ v, REST_JOINTS, atol=1e-9)
    assert f.min() == 0 and f.max() == J.N_VERTICES - 1
    # Closed surfaces: every undirected edge is shared by exactly two faces, used once in each
    # direction.
    edges = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    assert len(np.unique(edges, axis=0)) == len(edges)
    assert np.unique(np.sort(edges, 1), axis=0, return_counts=True)[1].tolist() == [2] * (
        len(edges) // 2
    )
    # Each connected piece encloses a positive volume (faces wound outwards).
    adj = sp.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(len(v),) * 2)
    n_parts, label = connected_components(adj, directed=False)
    tri = v[f]
    signed = np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])) / 6
    volumes = np.bincount(label[f[:, 0]], weights=signed, minlength=n_parts)
    assert n_parts > 50 and (volumes > 0).all()
    assert 0.04 < volumes.sum() < 0.12  # m³, about a person's volume (the pieces overlap)


def test_rest_pose_proportions(arrays):
    v = arrays["v_template"]
    assert -1.32 < v[:, 1].min() < -1.27 and 0.47 < v[:, 1].max() < 0.53
    assert -0.40 < REST_JOINTS[0, 1] < -0.30
    # SMPL-X's left is +x.
    assert (REST_JOINTS[(*J.LEFT_HAND, 1, 4, 7, 10, 13, 16, 18, 20, 23), 0] > 0).all()


def test_landmark_vertices_sit_on_their_body_parts(arrays):
    v, rest = arrays["v_template"], REST_JOINTS
    assert (IDS["LHeel"], IDS["LBigToe"], IDS["LSmallToe"]) == J.LEFT_FOOT_VERTICES
    assert (IDS["RHeel"], IDS["RBigToe"], IDS["RSmallToe"]) == J.RIGHT_FOOT_VERTICES
    for side, sign, ankle in (("L", 1, 7), ("R", -1, 8)):
        heel, big, small = v[IDS[f"{side}Heel"]], v[IDS[f"{side}BigToe"]], v[IDS[f"{side}SmallToe"]]
        assert heel[1] <= v[:, 1].min() + 0.005  # the heels are the lowest points
        assert heel[1] < rest[ankle, 1] - 0.05
        assert heel[2] < rest[ankle, 2] and heel[2] < big[2] - 0.15 and heel[2] < small[2] - 0.15
        assert big[1] < rest[ankle, 1] - 0.03 and sign * heel[0] > 0
        assert sign * (small[0] - big[0]) > 0.03  # the small toe is on the outside
        # toes on the sole, within foot contact's 3 cm of the heel, so a flat standing foot is "in
        # contact"
        assert max(big[1], small[1]) - heel[1] < 0.02
    for side, sign, wrist, shoulder in (("l", 1, 20, 16), ("r", -1, 21, 17)):
        for finger in ("thumb", "index", "middle", "ring", "pinky"):
            tip = v[IDS[side + finger]]
            assert sign * (tip[0] - rest[wrist, 0]) > 0.08
            assert (
                np.linalg.norm(tip - rest[shoulder])
                > np.linalg.norm(rest[wrist] - rest[shoulder]) + 0.08
            )
        eye, ear = v[IDS[side + "eye"]], v[IDS[side + "ear"]]
        assert sign * eye[0] > 0.02 and eye[2] > rest[15, 2] + 0.07 and eye[1] > v[IDS["nose"], 1]
        assert sign * ear[0] > 0.07 and abs(ear[2] - rest[15, 2]) < 0.05
    nose, head = v[IDS["nose"]], v[v[:, 1] > rest[12, 1]]
    assert nose[2] > rest[15, 2] + 0.08 and nose[2] >= head[:, 2].max() - 1e-9
    assert rest[15, 1] < nose[1] < v[:, 1].max()


def test_default_path_and_missing_files(tmp_path):
    assert (
        default_model_path()
        == REPO / "checkpoints" / "body_models" / "smplx" / "SMPLX_NEUTRAL_2020.npz"
    )
    assert ensure_model_file() == default_model_path() and default_model_path().is_file()
    missing = tmp_path / "SMPLX_NEUTRAL_2020.npz"
    with pytest.raises(CheckpointError, match="not found") as err:
        ensure_model_file(missing)
    assert str(missing) in str(err.value)
    assert not missing.exists()  # a user-given path is never filled in with the procedural model


def test_bad_model_files_raise_checkpoint_error(tmp_path, arrays):
    garbage = tmp_path / "SMPLX_NEUTRAL_2020.npz"
    garbage.write_bytes(b"not a zip file at all")
    incomplete = tmp_path / "incomplete" / "SMPLX_NEUTRAL.npz"
    incomplete.parent.mkdir()
    np.savez(incomplete, **{k: a for k, a in arrays.items() if k != "weights"})
    wrong = tmp_path / "wrong" / "SMPLX_NEUTRAL.npz"
    wrong.parent.mkdir()
    np.savez(wrong, **{**arrays, "J_regressor": arrays["J_regressor"][:, :100]})
    misnamed = tmp_path / "body.npz"
    misnamed.write_bytes(b"")
    for path, problem in (
        (garbage, "not a usable"),
        (incomplete, "weights"),
        (wrong, "J_regressor"),
        (misnamed, "SMPLX_"),
    ):
        with pytest.raises(CheckpointError, match=problem) as err:
            BodyModel(path)
        assert str(path) in str(err.value)


def test_body_models_of_one_file_share_a_built_layer_and_a_rewritten_file_is_rebuilt(tmp_path):
    """A second body model of the same file is a copy of the first's layer (same vertices, its own
    tensors); a file rewritten in place is read again."""
    path = write_procedural_model(tmp_path / MODEL_FILE_NAME)
    motion = random_motion(9, seed=2, betas=np.random.default_rng(2).normal(size=300))
    first, second = BodyModel(path), BodyModel(path)
    assert first.smplx_model.v_template.data_ptr() != second.smplx_model.v_template.data_ptr()
    expected = first(motion)
    assert torch.equal(second(motion).vertices, expected.vertices)
    second.smplx_model.v_template.add_(1.0)  # one body model's layer is its own
    assert torch.equal(BodyModel(path)(motion).vertices, expected.vertices)
    with np.load(path) as data:
        moved = {k: data[k] for k in data.files}
    moved["v_template"] = moved["v_template"] + 0.5
    np.savez(path, **moved)  # rewritten in place: another size and modification time
    shifted = BodyModel(path)(motion).vertices
    torch.testing.assert_close(shifted, expected.vertices + 0.5, rtol=0, atol=1e-5)


def test_the_default_model_file_is_proven_once_per_state_and_again_after_any_write(
    tmp_path, monkeypatch
):
    """The procedural model file is decoded and checked once while it is unchanged (each body
    model a process builds would pay ~0.5 s again); bytes damaged in place with the size and the
    modification time kept are still found, and the file set aside and rewritten."""
    path = ensure_model_file(None, tmp_path)
    decoded = []
    read = procedural._read_arrays
    monkeypatch.setattr(procedural, "_read_arrays", lambda p: decoded.append(p) or read(p))
    assert [ensure_model_file(None, tmp_path) for _ in range(3)] == [path] * 3
    assert decoded == [path]
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(data)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    assert ensure_model_file(None, tmp_path) == path
    assert path.with_name(path.name + CORRUPT).is_file()
    assert path.read_bytes() == procedural_model_bytes()
    assert ensure_model_file(None, tmp_path) == path and len(decoded) == 2


# --- the forward
# ----------------------------------------------------------------------------------------------


def forward_kinematics(motion: Motion, rest: np.ndarray) -> tuple[list[Rotation], np.ndarray]:
    """Independent FK: global rotation and position of each joint per frame (scipy rotations)."""
    n = motion.n_frames
    glob, pos = [], np.zeros((n, 55, 3))
    for j, parent in enumerate(J.PARENTS):
        rot = Rotation.from_rotvec(motion.poses[:, 3 * j : 3 * j + 3].astype(np.float64))
        if parent < 0:
            glob.append(rot)
            pos[:, j] = rest[j] + motion.trans
        else:
            glob.append(glob[parent] * rot)
            pos[:, j] = pos[:, parent] + glob[parent].apply(rest[j] - rest[parent])
    return glob, pos


def test_forward_matches_independent_kinematics(body, arrays):
    motion = random_motion(6, seed=1)
    out = body(motion)
    assert out.joints.dtype == torch.float32 and out.joints.shape == (6, 55, 3)
    assert out.vertices.shape == (6, J.N_VERTICES, 3)
    glob, pos = forward_kinematics(motion, REST_JOINTS)
    np.testing.assert_allclose(out.joints.numpy(), pos, atol=2e-5)
    # Rigidly skinned vertices follow their joint exactly: v = p_j + R_j (v_rest - rest_j).
    w = arrays["weights"]
    for k in np.flatnonzero(w.max(1) == 1.0)[::37]:
        j = int(w[k].argmax())
        expected = pos[:, j] + glob[j].apply(arrays["v_template"][k] - REST_JOINTS[j])
        np.testing.assert_allclose(out.vertices[:, k].numpy(), expected, atol=2e-5)


def test_forward_equals_the_full_smplx_layer(model_file, body):
    """Dropping the all-zero shape, expression and pose blend shapes and chunking change nothing
    against a plain `smplx` call."""
    rng = np.random.default_rng(4)
    motion = random_motion(5, seed=4, betas=rng.normal(size=300))
    layer = smplx.create(
        str(model_file),
        model_type="smplx",
        use_pca=False,
        ext="npz",
        num_betas=300,
        num_expression_coeffs=100,
    )
    p = torch.tensor(motion.poses)
    with torch.no_grad():
        ref = layer(
            betas=torch.tensor(motion.betas)[None],
            expression=torch.tensor(motion.expressions),
            transl=torch.tensor(motion.trans),
            global_orient=p[:, :3],
            body_pose=p[:, 3:66],
            jaw_pose=p[:, 66:69],
            leye_pose=p[:, 69:72],
            reye_pose=p[:, 72:75],
            left_hand_pose=p[:, 75:120],
            right_hand_pose=p[:, 120:],
        )
    assert body.smplx_model.num_betas == 2 and body.smplx_model.num_expression_coeffs == 0
    assert not layer.posedirs.any() and body.smplx_model.posedirs.shape == (486, 3)
    out = body(motion)
    torch.testing.assert_close(out.joints, ref.joints[:, :55], atol=1e-5, rtol=0)
    torch.testing.assert_close(out.vertices, ref.vertices, atol=1e-5, rtol=0)
    multiplied = BodyModel(model_file)
    multiplied.smplx_model.posedirs = (
        layer.posedirs
    )  # the zero pose blend shapes, multiplied as smplx does
    assert torch.equal(multiplied(motion).vertices, out.vertices)


def test_float64_forward_matches_scipy_kinematics_to_float64_precision(model_file, body):
    motion = random_motion(6, seed=5)
    double = BodyModel(model_file, dtype="float64")
    out, single = double(motion), body(motion)
    assert out.joints.dtype == out.vertices.dtype == torch.float64
    _, pos = forward_kinematics(motion, REST_JOINTS)
    np.testing.assert_allclose(
        out.joints.numpy(), pos, atol=1e-7
    )  # the file stores float32; a float32 forward: ~1e-6
    torch.testing.assert_close(out.vertices.float(), single.vertices, atol=2e-5, rtol=0)
    torch.testing.assert_close(
        double(motion, vertices=False).joints, out.joints, atol=1e-12, rtol=0
    )
    with pytest.raises(ConfigCompositionException, match=r"body_model\.dtype=float16"):
        composed("body_model.dtype=float16")


def test_betas_and_expressions(body, arrays):
    rest_pose = Motion(
        poses=np.zeros((1, 165)),
        trans=np.zeros((1, 3)),
        betas=np.zeros(16),
        expressions=np.zeros((1, 50)),
    )  # short betas/expressions are zero-padded
    base = body(rest_pose)
    np.testing.assert_allclose(base.vertices[0].numpy(), arrays["v_template"], atol=1e-6)
    taller = body(
        Motion(rest_pose.poses, rest_pose.trans, np.eye(400)[0], np.ones((1, 120)))
    )  # long ones truncated
    np.testing.assert_allclose(taller.joints[0].numpy(), REST_JOINTS * (1, 1.03, 1), atol=1e-5)
    wider = body(Motion(rest_pose.poses, rest_pose.trans, np.eye(300)[1], rest_pose.expressions))
    np.testing.assert_allclose(
        wider.joints.numpy(), base.joints.numpy(), atol=1e-6
    )  # girth keeps the joints
    grown = (wider.vertices - base.vertices).norm(dim=-1)
    assert grown.max() > 0.005


@pytest.mark.parametrize("threads", [1, 2])
def test_forward_is_bit_identical_whatever_the_chunk_size(model_file, threads):
    """69 frames = 2 × 32 + 5 = 4 × 16 + 5: without merging the 5-frame remainder, the CPU
    multiplies it on another path and its vertices differ in the last bit (seen on 2 threads here,
    on 1 on another machine)."""
    motion = random_motion(69, seed=4, betas=np.random.default_rng(5).normal(size=300))
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        whole = BodyModel(model_file, chunk_size=1024)(motion)
        for size in (32, 16):
            out = BodyModel(model_file, chunk_size=size)(motion)
            assert torch.equal(out.vertices, whole.vertices), size
            assert torch.equal(out.joints, whole.joints), size
    finally:
        torch.set_num_threads(before)


def test_chunked_forward_equals_one_big_forward(model_file, body):
    motion = random_motion(23, seed=2, betas=np.random.default_rng(3).normal(size=300))
    whole = body(motion)
    chunked = BodyModel(model_file, chunk_size=7)(motion)
    torch.testing.assert_close(chunked.joints, whole.joints, atol=1e-6, rtol=0)
    torch.testing.assert_close(chunked.vertices, whole.vertices, atol=1e-6, rtol=0)
    joints_only = body(motion, vertices=False)
    assert joints_only.vertices is None
    torch.testing.assert_close(joints_only.joints, whole.joints, atol=1e-6, rtol=0)
    empty = body(motion.frames(0, 0))
    assert empty.joints.shape == (0, 55, 3) and empty.vertices.shape == (0, J.N_VERTICES, 3)


def test_real_beat2_sample_stands_on_the_floor(beat2_sample, body, arrays):
    with np.load(beat2_sample / "2_scott_0_1_1.npz", allow_pickle=False) as d:
        motion = Motion(
            d["poses"], d["trans"], d["betas"], d["expressions"], int(d["mocap_frame_rate"])
        )
    out = body(motion)
    joints, verts = out.joints.numpy(), out.vertices.numpy()
    assert joints.shape == (1906, 55, 3) and np.isfinite(verts).all()
    height = joints[..., 1]
    assert set(np.unique(height[:, :22].argmin(1))) <= {J.LEFT_FOOT, J.RIGHT_FOOT}  # feet lowest
    assert (
        height[:, J.HEAD] > np.delete(height[:, :20], J.HEAD, axis=1).max(1)
    ).all()  # head above the trunk
    for wrist, shoulder in ((J.LEFT_WRIST, J.LEFT_SHOULDER), (J.RIGHT_WRIST, J.RIGHT_SHOULDER)):
        assert (np.linalg.norm(joints[:, wrist] - joints[:, shoulder], axis=-1) < 0.75).all()
    feet = verts[:, list(J.LEFT_FOOT_VERTICES + J.RIGHT_FOOT_VERTICES), 1].min(1)
    assert (np.abs(feet) < 0.15).all()  # on the floor in every frame
    lowest = verts[..., 1].argmin(1)
    assert (feet - verts[np.arange(len(verts)), lowest, 1] < 0.05).all()
    assert set(np.unique(arrays["weights"][lowest].argmax(1))) <= {
        7,
        8,
        10,
        11,
    }  # the lowest point is a foot
    assert (joints[:, J.PELVIS, 1] > 0.6).all() and (joints[:, J.PELVIS, 1] < 1.1).all()
    bones = np.linalg.norm(joints[:, 1:22] - joints[:, J.PARENTS[1:22]], axis=-1)
    assert bones.std(0).max() < 1e-4  # rigid skeleton


@pytest.mark.parametrize("flat_hand_mean", [False, True])
def test_joints_only_forward_equals_the_mesh_forward(beat2_sample, flat_hand_mean):
    """`vertices=False` skips the mesh but must give the joints of the full `smplx` forward."""
    from gesturebench.data.beat2 import read_motion_npz

    motion = read_motion_npz(beat2_sample / "2_scott_0_1_1.npz").frames(0, 400)
    body = BodyModel(flat_hand_mean=flat_hand_mean, chunk_size=128)
    full, fast = body(motion, vertices=True), body(motion, vertices=False)
    assert fast.vertices is None
    torch.testing.assert_close(fast.joints, full.joints, rtol=0, atol=2e-6)
