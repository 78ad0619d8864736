"""Diversity, Chamfer, Hausdorff, Dice, foot contact and LDLJ_rel against independent computations
(docs/metrics.md)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from scipy.signal import savgol_filter
from scipy.spatial.distance import cdist

from gesturebench.body.joints import (
    BODY_HANDS,
    LEFT_FOOT_VERTICES,
    N_VERTICES,
    RIGHT_FOOT_VERTICES,
    UPPER,
)
from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion
from gesturebench.errors import ConfigError
from gesturebench.metrics import surface as surface_metrics
from gesturebench.metrics.dice import Dice
from gesturebench.metrics.diversity import Diversity
from gesturebench.metrics.foot_contact import FootContact
from gesturebench.metrics.functional import nearest_kernel
from gesturebench.metrics.functional import surface as surface_metrics_functional
from gesturebench.metrics.functional.dice import bone_raster, dice, rasterise_segments
from gesturebench.metrics.functional.diversity import l1_diversity
from gesturebench.metrics.functional.foot_contact import contact_frames, contact_rate
from gesturebench.metrics.functional.smoothness import ldlj, windowed_ldlj
from gesturebench.metrics.functional.surface import chamfer_hausdorff, nearest_distances
from gesturebench.metrics.pair import MotionPair
from gesturebench.metrics.smoothness import LDLJRel
from gesturebench.metrics.surface import Chamfer, Hausdorff
from tests.distributed import run_distributed

pytestmark = pytest.mark.usefixtures("one_thread")

FPS = 30
FEET = list(LEFT_FOOT_VERTICES) + list(RIGHT_FOOT_VERTICES)


# ---------------------------------------------------------------- synthetic data


def synthetic_body(t: int, seed: int) -> BodyOutput:
    """A skeleton (shared rest pose and skin) moving smoothly, with feet that step on and off a
    floor at y=0."""
    skel = np.random.default_rng(0)
    rest = skel.normal(scale=0.3, size=(55, 3))
    owner = skel.integers(0, 55, N_VERTICES)
    skin = skel.normal(scale=0.03, size=(N_VERTICES, 3))
    rng = np.random.default_rng(seed)
    time = np.arange(t)[:, None, None] / FPS
    wave = rng.uniform(0.02, 0.1, (55, 3)) * np.sin(
        2 * np.pi * rng.uniform(0.3, 1.5, (55, 3)) * time + rng.uniform(0, 2 * np.pi, (55, 3))
    )
    joints = (
        rest + wave + np.array([0.0, 0.9, 0.0]) + 0.2 * time * rng.normal(size=3)
    )  # slow root drift
    vertices = joints[:, owner] + skin
    step = 0.08 * np.sin(
        2 * np.pi * rng.uniform(1.5, 2.5) * time[:, :, 0] + rng.uniform(0, 2 * np.pi)
    )
    vertices[:, FEET, 1] = np.clip(step, 0.0, None)
    vertices[:, FEET, 0] = vertices[:1, FEET, 0]
    vertices[:, FEET, 2] = vertices[:1, FEET, 2]
    return BodyOutput(
        torch.tensor(joints, dtype=torch.float32), torch.tensor(vertices, dtype=torch.float32)
    )


def make_pair(index: int, gen: BodyOutput, ref: BodyOutput) -> MotionPair:
    t = gen.joints.shape[0]
    motion = Motion(
        np.zeros((t, 165)), np.zeros((t, 3)), np.zeros(300), np.zeros((t, 100)), fps=FPS
    )
    return MotionPair(index, f"seq{index}", motion, motion, gen, ref)


def synthetic_pair(index: int, t: int = 40) -> MotionPair:
    return make_pair(index, synthetic_body(t, 100 + index), synthetic_body(t, 200 + index))


def all_metrics(num_points: int | None = None):
    surface = {"num_points": num_points}
    return [Diversity(), Chamfer(**surface), Hausdorff(**surface), Dice(), FootContact(), LDLJRel()]


# ---------------------------------------------------------------- Chamfer / Hausdorff


def brute_force_surface(ref: np.ndarray, gen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-frame Chamfer and Hausdorff from full float64 distance matrices (scipy cdist, row
    blocks)."""
    chamfer, hausdorff = [], []
    for a, g in zip(ref.astype(np.float64), gen.astype(np.float64)):
        d_ag = np.concatenate(
            [cdist(a[i : i + 1000], g).min(axis=1) for i in range(0, len(a), 1000)]
        )
        d_ga = np.concatenate(
            [cdist(g[i : i + 1000], a).min(axis=1) for i in range(0, len(g), 1000)]
        )
        chamfer.append((d_ag**2).mean() + (d_ga**2).mean())
        hausdorff.append(max(d_ag.max(), d_ga.max()))
    return np.array(chamfer), np.array(hausdorff)


@pytest.mark.parametrize("method,rtol", [("kdtree", 1e-12), ("cdist", 1e-6)])
def test_surface_random_clouds_match_brute_force(method, rtol):
    g = torch.Generator().manual_seed(0)
    ref = torch.randn(4, 300, 3, generator=g)
    gen = (
        torch.randn(4, 170, 3, generator=g) * 0.8 + 0.1
    )  # different sizes: the two directions differ
    expected = brute_force_surface(ref.numpy(), gen.numpy())
    chamfer, hausdorff = chamfer_hausdorff(
        ref, gen, method, block=5000
    )  # small blocks: several row chunks
    np.testing.assert_allclose(chamfer.numpy(), expected[0], rtol=rtol)
    np.testing.assert_allclose(hausdorff.numpy(), expected[1], rtol=rtol)


def test_surface_body_sized_clouds_both_paths():
    body = synthetic_body(3, 1).root_aligned_vertices()[1:2]
    gen = synthetic_body(3, 2).root_aligned_vertices()[1:2]
    expected = brute_force_surface(body.numpy(), gen.numpy())
    kd = chamfer_hausdorff(body, gen, "kdtree")
    cd = chamfer_hausdorff(body, gen, "cdist")
    for got in (kd, cd):
        np.testing.assert_allclose(got[0].numpy(), expected[0], rtol=1e-6)
        np.testing.assert_allclose(got[1].numpy(), expected[1], rtol=1e-6)
    np.testing.assert_allclose(cd[0].numpy(), kd[0].numpy(), rtol=1e-6)


@pytest.mark.skipif(not nearest_kernel.available(), reason="Triton is not installed")
def test_triton_kernel_matches_the_kdtree_and_brute_force():
    # Without CUDA the kernel runs in Triton's interpreter (set in tests/conftest.py).
    device = "cuda" if torch.cuda.is_available() else "cpu"
    rng = np.random.default_rng(11)
    idx = np.sort(
        rng.choice(N_VERTICES, 333, replace=False)
    )  # not a multiple of the 64-point tiles
    body = synthetic_body(3, 1).vertices[:, idx]
    gen = synthetic_body(3, 2).vertices[:, idx[:-130]] + 2.5  # far from the origin, 203 points
    kd = nearest_distances(body, gen, "kdtree")
    tr = nearest_distances(body.to(device), gen.to(device), "triton")
    assert tr[0].shape == (3, 333) and tr[1].shape == (3, 203) and tr[0].dtype == torch.float64
    np.testing.assert_allclose(tr[0].cpu().numpy(), kd[0].numpy(), rtol=1e-9)
    np.testing.assert_allclose(tr[1].cpu().numpy(), kd[1].numpy(), rtol=1e-9)
    brute = cdist(body[1].double().numpy(), gen[1].double().numpy())
    np.testing.assert_allclose(tr[0][1].cpu().numpy(), brute.min(axis=1), rtol=1e-12)
    np.testing.assert_allclose(tr[1][1].cpu().numpy(), brute.min(axis=0), rtol=1e-12)
    one = nearest_distances(
        torch.zeros(2, 1, 3).to(device), torch.ones(2, 5, 3).to(device), "triton"
    )
    assert torch.allclose(one[0].cpu(), torch.full((2, 1), math.sqrt(3), dtype=torch.float64))


def test_nearest_distances_auto_is_kdtree_on_cpu_and_validates():
    a, b = torch.randn(2, 50, 3), torch.randn(2, 60, 3)
    auto, kd = nearest_distances(a, b), nearest_distances(a, b, "kdtree")
    assert torch.equal(auto[0], kd[0]) and torch.equal(auto[1], kd[1])
    assert auto[0].shape == (2, 50) and auto[1].shape == (2, 60) and auto[0].dtype == torch.float64
    with pytest.raises(ConfigError, match="method"):
        nearest_distances(a, b, "faiss")
    with pytest.raises(ConfigError, match="num_points"):
        Chamfer(num_points=0)


def test_surface_is_zero_for_identical_and_known_for_a_shift():
    ref = synthetic_body(5, 3)
    vertices = ref.root_aligned_vertices()
    chamfer, hausdorff = chamfer_hausdorff(vertices, vertices.clone())
    assert float(chamfer.abs().max()) == 0.0 and float(hausdorff.abs().max()) == 0.0
    # Two single points 0.3 m apart: Chamfer = 2·0.09, Hausdorff = 0.3.
    a, b = torch.zeros(1, 1, 3), torch.tensor([[[0.0, 0.3, 0.0]]])
    c, h = chamfer_hausdorff(a, b)
    assert float(c) == pytest.approx(0.18, rel=1e-6) and float(h) == pytest.approx(0.3, rel=1e-6)


def test_surface_searches_only_frames_that_differ(monkeypatch):
    ref = synthetic_body(6, 4).root_aligned_vertices()
    gen = ref.clone()
    gen[[1, 4]] = synthetic_body(6, 5).root_aligned_vertices()[
        [1, 4]
    ]  # frames 1 and 4 differ, the rest are equal
    searched = []
    real = surface_metrics_functional.nearest_distances
    monkeypatch.setattr(
        surface_metrics_functional,
        "nearest_distances",
        lambda a, b, *rest: searched.append(a.shape[0]) or real(a, b, *rest),
    )
    chamfer, hausdorff = chamfer_hausdorff(ref, gen)
    assert searched == [2]
    expected = brute_force_surface(ref.numpy(), gen.numpy())
    np.testing.assert_allclose(chamfer.numpy(), expected[0], rtol=1e-12)
    np.testing.assert_allclose(hausdorff.numpy(), expected[1], rtol=1e-12)
    assert chamfer[[0, 2, 3, 5]].eq(0).all() and chamfer[[1, 4]].gt(0).all()


def test_surface_metrics_subsample_with_seed_and_share_one_pass(monkeypatch):
    pair = synthetic_pair(0, t=6)
    m = Chamfer(num_points=500, seed=7)
    m.update(pair)
    assert m.options() == {"method": "auto", "num_points": 500, "seed": 7}
    idx = np.sort(np.random.default_rng(7).choice(N_VERTICES, 500, replace=False))
    ref = pair.ref_body.root_aligned_vertices()[:, idx].numpy()
    gen = pair.gen_body.root_aligned_vertices()[:, idx].numpy()
    assert m.compute()["chamfer"] == pytest.approx(
        brute_force_surface(ref, gen)[0].mean(), rel=1e-9
    )

    calls = []
    monkeypatch.setattr(
        surface_metrics, "chamfer_hausdorff", lambda *a: calls.append(1) or chamfer_hausdorff(*a)
    )
    other = synthetic_pair(1, t=6)
    c, h = Chamfer(), Hausdorff()
    c.update(other)
    h.update(other)
    assert len(calls) == 1  # one chunk, one nearest-neighbour pass for both metrics
    h2 = Hausdorff(num_points=100)
    h2.update(other)
    assert len(calls) == 2  # other options: its own pass
    h.update(synthetic_pair(2, t=6))
    assert len(calls) == 3  # another pair: its own pass
    assert h.per_sequence()[1]["hausdorff"] == pytest.approx(
        float(
            chamfer_hausdorff(
                other.ref_body.root_aligned_vertices(), other.gen_body.root_aligned_vertices()
            )[1].mean()
        )
    )


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_all_metrics_agree_between_cpu_and_cuda():
    pair = synthetic_pair(3, t=300)
    cuda_pair = make_pair(
        3, *(BodyOutput(b.joints.cuda(), b.vertices.cuda()) for b in (pair.gen_body, pair.ref_body))
    )
    for metric in all_metrics():
        cpu_value = metric.__class__()
        cpu_value.update(pair)
        metric.to("cuda").update(cuda_pair)
        for name, value in cpu_value.compute().items():
            assert metric.compute()[name] == pytest.approx(value, rel=1e-6, abs=1e-12), name


# ---------------------------------------------------------------- Dice


def liang_barsky_raster(starts: np.ndarray, ends: np.ndarray, g: int, cell: float) -> np.ndarray:
    """Cells whose open interior a segment passes through, plus its end cells: a brute-force check
    over all cells."""
    raster = np.zeros((g, g), dtype=bool)
    i, j = np.meshgrid(np.arange(g), np.arange(g), indexing="ij")
    for p0, p1 in zip(starts / cell + g / 2, ends / cell + g / 2):
        lo, hi = np.zeros((g, g)), np.ones((g, g))
        inside = np.ones((g, g), dtype=bool)
        for axis, k in ((0, i), (1, j)):
            d = p1[axis] - p0[axis]
            if d == 0:
                inside &= (k < p0[axis]) & (p0[axis] < k + 1)
                continue
            t1, t2 = (k - p0[axis]) / d, (k + 1 - p0[axis]) / d
            lo, hi = np.maximum(lo, np.minimum(t1, t2)), np.minimum(hi, np.maximum(t1, t2))
        raster |= inside & (lo < hi)
        for p in (p0, p1):
            c = np.floor(p).astype(int)
            if (c >= 0).all() and (c < g).all():
                raster[c[0], c[1]] = True
    return raster


def test_rasterise_segments_matches_brute_force():
    rng = np.random.default_rng(4)
    starts = rng.uniform(-1.3, 1.3, (60, 2))  # some leave the 2 m square: clipped
    ends = starts + rng.normal(scale=0.4, size=(60, 2))
    ends[:5, 1] = starts[:5, 1]  # horizontal and vertical segments too
    ends[5:10, 0] = starts[5:10, 0]
    ends[10], ends[11] = (
        (5000.0, 0.33),
        (-0.7, -3000.0),
    )  # far outside: only the in-grid part is drawn
    got = rasterise_segments(torch.tensor(starts), torch.tensor(ends), cell=0.1, extent=2.0).numpy()
    expected = liang_barsky_raster(starts, ends, 20, 0.1)
    assert got.shape == (20, 20)
    np.testing.assert_array_equal(got, expected)


def square(g: int, x0: int, y0: int, size: int) -> torch.Tensor:
    r = torch.zeros(g, g, dtype=torch.bool)
    r[x0 : x0 + size, y0 : y0 + size] = True
    return r


def test_dice_of_overlapping_squares():
    a, b = square(40, 0, 0, 10), square(40, 5, 4, 10)  # overlap 5 × 6 = 30 cells of 100 each
    assert dice(a, b) == pytest.approx(2 * 30 / 200)
    assert dice(a, a) == 1.0 and dice(a, square(40, 20, 20, 10)) == 0.0
    # The same squares drawn as stacks of horizontal segments through cell centres (cell 0.05, 2 m:
    # 40 × 40).
    rows = np.arange(10) * 0.05 + 0.025 - 1.0
    starts = np.stack([np.full(10, -1.0 + 0.025), rows], 1)
    ends = np.stack([np.full(10, -1.0 + 0.475), rows], 1)
    drawn = rasterise_segments(torch.tensor(starts), torch.tensor(ends), cell=0.05)
    assert torch.equal(drawn, a)


def test_bone_raster_by_hand():
    """All joints at the pelvis's cell except the left wrist, 0.1 m to the right: 21 cells of one
    row."""
    pelvis = np.array([1.0, 1.0, 1.0])
    offset = np.array([0.0025, 0.0025, 0.0])
    joints = np.tile(pelvis + offset, (1, 55, 1))
    joints[0, 0] = pelvis
    far = joints.copy()
    joints[0, 20] = pelvis + np.array(
        [0.1025, 0.0025, 0.3]
    )  # depth (z) is ignored by the frontal projection
    far[0, 20] = pelvis + np.array([0.0525, 0.0025, -0.2])
    raster = bone_raster(torch.tensor(joints))
    expected = torch.zeros(400, 400, dtype=torch.bool)
    expected[200:221, 200] = True
    assert torch.equal(raster, expected)
    near = bone_raster(torch.tensor(far))
    assert int(near.sum()) == 11
    assert dice(raster, near) == pytest.approx(2 * 11 / (21 + 11))
    # leaves the 2 m square at x = 1 m: clipped at the border
    joints[0, 20] = pelvis + np.array([1.5, 0.0025, 0.0])
    assert int(bone_raster(torch.tensor(joints)).sum()) == 200


# ---------------------------------------------------------------- foot contact


def feet_vertices(heights: np.ndarray, x: np.ndarray | None = None) -> torch.Tensor:
    """(T,V,3) vertices: the six foot points at `heights` (T,) or (T,6) and x positions `x` (T,)."""
    t = heights.shape[0]
    v = np.zeros((t, N_VERTICES, 3))
    v[:, FEET, 1] = heights if heights.ndim == 2 else heights[:, None]
    v[:, FEET, 0] = 0.0 if x is None else x[:, None]
    v[:, FEET, 2] = np.arange(6) * 0.05
    return torch.tensor(v, dtype=torch.float32)


def test_foot_contact_rules():
    t = 60
    assert (
        contact_rate(feet_vertices(np.full(t, 0.8)), FPS) == 1.0
    )  # standing still on a floor at 0.8 m
    lifted = np.where(
        np.arange(t) < t // 2, 0.0, 0.10
    )  # first half standing, then both feet 10 cm up
    frames = contact_frames(feet_vertices(lifted), FPS)
    assert frames.tolist() == [True] * (t // 2) + [False] * (t // 2)
    assert contact_rate(feet_vertices(lifted), FPS) == 0.5
    assert (
        contact_rate(feet_vertices(np.where(np.arange(t) < t // 2, 0.0, 0.025)), FPS) == 1.0
    )  # within 3 cm
    assert (
        contact_rate(feet_vertices(np.zeros(t), x=0.3 * np.arange(t) / FPS), FPS) == 0.0
    )  # sliding 0.3 m/s
    assert (
        contact_rate(feet_vertices(np.zeros(t), x=0.05 * np.arange(t) / FPS), FPS) == 1.0
    )  # creeping 0.05 m/s
    h = np.zeros((t, 6))
    h[t // 2 :, :3] = 0.1  # the left foot lifted: the right one still holds
    assert contact_rate(feet_vertices(h), FPS) == 1.0
    h[t // 2 :, 3] = 0.1  # and one right point: two of three remain
    assert contact_rate(feet_vertices(h), FPS) == 1.0
    h[t // 2 :, 4] = 0.1  # two right points up: no foot in contact
    assert contact_rate(feet_vertices(h), FPS) == 0.5


# ---------------------------------------------------------------- LDLJ


def minimum_jerk(n: int, direction=(0.3, 0.2, -0.1)) -> torch.Tensor:
    tau = torch.linspace(0, 1, n, dtype=torch.float64)[:, None]
    return (10 * tau**3 - 15 * tau**4 + 6 * tau**5) * torch.tensor(direction, dtype=torch.float64)


def test_ldlj_of_minimum_jerk_is_minus_ln_720():
    p = minimum_jerk(91)  # 3 s at 30 fps: one window
    value = windowed_ldlj(p[:, None], FPS, savgol_window=None)
    assert value == pytest.approx(-math.log(720), rel=0.01)
    assert float(ldlj(minimum_jerk(121), FPS)[0]) == pytest.approx(-math.log(720), rel=0.001)
    assert float(ldlj(2.5 * minimum_jerk(121), FPS)[0]) == pytest.approx(
        float(ldlj(minimum_jerk(121), FPS)[0])
    )
    noisy = (
        p
        + torch.randn(p.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        * 0.002
    )
    assert windowed_ldlj(noisy[:, None], FPS, savgol_window=None) < value - 1.0
    assert windowed_ldlj(noisy[:, None], FPS) < windowed_ldlj(p[:, None], FPS)


def test_windowed_ldlj_averages_smoothed_windows():
    joints = synthetic_body(300, 5).joints  # 10 s: windows start at 0, 2, 4 and 6 s
    upper = (joints[:, list(UPPER)] - joints[:, :1]).double()
    smoothed = torch.from_numpy(savgol_filter(upper.numpy(), 9, 3, axis=0))
    expected = np.mean([ldlj(smoothed[s : s + 120], FPS)[0].numpy() for s in (0, 60, 120, 180)])
    assert windowed_ldlj(upper, FPS) == pytest.approx(expected, rel=1e-9)


def test_ldlj_leaves_out_still_joints():
    p = torch.stack(
        [minimum_jerk(91), torch.zeros(91, 3, dtype=torch.float64)], dim=1
    )  # second joint still
    assert windowed_ldlj(p, FPS, savgol_window=None) == pytest.approx(
        float(windowed_ldlj(p[:, :1], FPS, savgol_window=None))
    )
    assert math.isnan(windowed_ldlj(p[:, 1:], FPS))
    still = BodyOutput(torch.zeros(40, 55, 3), None)
    m = LDLJRel()
    m.update(make_pair(0, still, synthetic_body(40, 1)))
    assert m.compute()["ldlj_rel"] is None and "does not move" in m.skip_reason()


# ---------------------------------------------------------------- metric classes


def test_identical_motion_scores_perfectly():
    body = synthetic_body(20, 9)
    copy = BodyOutput(body.joints.clone(), body.vertices.clone())
    values = {}
    for m in all_metrics():
        m.update(make_pair(0, copy, body))
        values.update(m.compute())
    assert values["chamfer"] == 0.0 and values["hausdorff"] == 0.0
    assert values["dice"] == 1.0 and values["foot_contact"] == 0.0 and values["ldlj_rel"] == 0.0
    assert values["diversity"] == values["diversity_ref"] > 0
    assert 0 < values["contact_rate_gen"] < 1  # the synthetic feet step on and off the floor


def diversity_loop(joints: np.ndarray) -> float:
    p = joints[:, list(BODY_HANDS)] - joints[:, :1]
    mean = p.mean(axis=0)
    return float(np.mean([np.abs(p[t] - mean).sum() for t in range(p.shape[0])]))


def functional_values(pair: MotionPair) -> dict[str, float]:
    """Each metric's value for one pair, from the functional layer (checked above) and independent
    loops."""
    gen, ref = pair.gen_body, pair.ref_body
    chamfer, hausdorff = chamfer_hausdorff(
        ref.root_aligned_vertices(), gen.root_aligned_vertices(), "kdtree"
    )
    r_gen, r_ref = (float(contact_rate(body.vertices, FPS)) for body in (gen, ref))

    def upper(j):
        return j[:, list(UPPER)] - j[:, :1]

    l_gen, l_ref = (float(windowed_ldlj(upper(body.joints), FPS)) for body in (gen, ref))
    return {
        "diversity": diversity_loop(gen.joints.double().numpy()),
        "diversity_ref": diversity_loop(ref.joints.double().numpy()),
        "chamfer": float(chamfer.mean()),
        "hausdorff": float(hausdorff.mean()),
        "dice": float(dice(bone_raster(ref.joints), bone_raster(gen.joints))),
        "foot_contact": abs(r_ref - r_gen),
        "contact_rate_gen": r_gen,
        "contact_rate_ref": r_ref,
        "ldlj_rel": l_ref - l_gen,
        "ldlj_gen": l_gen,
        "ldlj_ref": l_ref,
    }


def test_metric_classes_mean_over_sequences():
    pairs = [synthetic_pair(i, t=8 + i) for i in (4, 1, 7)]
    metrics = all_metrics()
    for pair in pairs:
        for m in metrics:
            m.update(pair)
    expected = [functional_values(p) for p in pairs]
    for m in metrics:
        result = m.compute()
        assert set(result) == set(m.value_names)
        per_seq = m.per_sequence()
        assert sorted(per_seq) == [1, 4, 7]
        for name in m.value_names:
            assert result[name] == pytest.approx(
                np.mean([e[name] for e in expected]), rel=1e-6, abs=1e-12
            )
            assert per_seq[7][name] == pytest.approx(expected[2][name], rel=1e-6, abs=1e-12)
    assert l1_diversity(pairs[0].gen_body.joints) == pytest.approx(
        expected[0]["diversity"], rel=1e-9
    )
    assert len({e["dice"] for e in expected}) == 3 and all(0 < e["dice"] < 1 for e in expected)
    directions = {m.name: m.direction for m in metrics}
    assert directions == {
        "diversity": "higher",
        "chamfer": "lower",
        "hausdorff": "lower",
        "dice": "higher",
        "foot_contact": "lower",
        "ldlj_rel": "zero",
    }
    assert metrics[5].options() == {
        "window_s": 4.0,
        "hop_s": 2.0,
        "savgol_window": 9,
        "savgol_order": 3,
        "min_path": 1e-3,
    }
    assert metrics[4].options() == {
        "height": 0.03,
        "speed": 0.10,
        "percentile": 1.0,
        "min_points": 2,
    }
    assert metrics[3].options() == {"cell": 0.005, "extent": 2.0}


def _ddp_worker(rank: int, world: int, n: int):
    torch.set_num_threads(1)
    metrics = all_metrics(num_points=1000)  # a subsample keeps two processes on two cores quick
    for i in range(rank, n, world):
        pair = synthetic_pair(i, t=12)
        for m in metrics:
            m.update(pair)
    out = {}
    for m in metrics:
        out.update(m.compute())
        with m.sync_context():
            out[m.name + "/per_sequence"] = m.per_sequence()
    return out


def test_distributed_equals_one_process():
    n = 5
    single = _ddp_worker(0, 1, n)
    ddp = run_distributed(_ddp_worker, n)
    assert set(ddp) == set(single)
    for key, value in single.items():
        if key.endswith("/per_sequence"):
            assert sorted(ddp[key]) == list(range(n))
            for i in range(n):
                assert ddp[key][i] == pytest.approx(value[i], rel=1e-12)
        else:
            assert ddp[key] == pytest.approx(value, rel=1e-12)


# ---------------------------------------------------------------- the real BEAT2 sample


@pytest.fixture(scope="module")
def beat2_body(beat2_sample):
    model = pytest.importorskip(
        "gesturebench.body.model", reason="the body model is not in the tree yet"
    )
    from gesturebench.data.beat2 import read_motion_npz

    return model.BodyModel(), read_motion_npz(beat2_sample / "2_scott_0_1_1.npz").frames(0, 300)


def perturbed(motion: Motion, level: float) -> Motion:
    poses = motion.poses.copy()
    noise = np.random.default_rng(0).normal(size=poses[:, 3:66].shape)
    poses[:, 3:66] += level * noise  # body joints only
    return Motion(poses, motion.trans, motion.betas, motion.expressions, motion.fps)


def test_real_sample_gives_finite_values(beat2_body):
    model, motion = beat2_body
    pair = make_pair(0, model(perturbed(motion, 0.05)), model(motion))
    metrics = [
        Diversity(),
        Chamfer(num_points=2000),
        Hausdorff(num_points=2000),
        Dice(),
        FootContact(),
        LDLJRel(),
    ]
    values = {}
    for m in metrics:
        m.update(pair)
        values.update(m.compute())
    assert all(v is not None and math.isfinite(v) for v in values.values()), values
    assert values["chamfer"] > 0 and 0 < values["dice"] < 1
    assert (
        values["ldlj_rel"] > 0
    )  # frame-wise noise makes the generated motion jerkier than the capture


def test_real_sample_worse_with_more_noise(beat2_body):
    model, motion = beat2_body
    strided = Motion(
        motion.poses[::10], motion.trans[::10], motion.betas, motion.expressions[::10], motion.fps
    )
    ref = model(strided)
    scores = []
    for level in (0.02, 0.08, 0.3):
        pair = make_pair(0, model(perturbed(strided, level)), ref)
        row = {}
        for m in (Chamfer(), Hausdorff(), Dice()):
            m.update(pair)
            row.update(m.compute())
        scores.append(row)
    for a, b in itertools.pairwise(scores):
        assert (
            b["chamfer"] > a["chamfer"]
            and b["hausdorff"] > a["hausdorff"]
            and b["dice"] < a["dice"]
        ), scores


def test_vertex_metrics_ask_for_vertices():
    from gesturebench.metrics.foot_contact import FootContact
    from gesturebench.metrics.surface import Chamfer, Hausdorff

    assert Chamfer.needs_vertices and Hausdorff.needs_vertices and FootContact.needs_vertices
