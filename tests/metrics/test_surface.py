"""Chamfer and Hausdorff (chamfer.py, hausdorff.py, their shared pass in surface.py,
functional/surface.py, functional/nearest_kernel.py) against brute force."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cdist

from gesturebench.body.joints import N_VERTICES
from gesturebench.metrics import surface as surface_metrics
from gesturebench.metrics.chamfer import Chamfer
from gesturebench.metrics.functional import nearest_kernel
from gesturebench.metrics.functional import surface as surface_metrics_functional
from gesturebench.metrics.functional.surface import chamfer_hausdorff, nearest_distances
from gesturebench.metrics.hausdorff import Hausdorff
from gesturebench.runtime.errors import ConfigError
from tests.metrics.bodies import synthetic_body, synthetic_pair

pytestmark = pytest.mark.usefixtures("one_thread")


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


def test_nearest_distances_auto_is_the_bvh_on_cpu_and_validates(monkeypatch):
    a, b = torch.randn(2, 50, 3), torch.randn(2, 60, 3)
    calls = []
    real = surface_metrics_functional.nearest_bvh.nearest_frames
    monkeypatch.setattr(
        surface_metrics_functional.nearest_bvh,
        "nearest_frames",
        lambda *arrays: calls.append(1) or real(*arrays),
    )
    auto, kd = nearest_distances(a, b), nearest_distances(a, b, "kdtree")
    assert calls and torch.equal(auto[0], kd[0]) and torch.equal(auto[1], kd[1])
    assert auto[0].shape == (2, 50) and auto[1].shape == (2, 60) and auto[0].dtype == torch.float64
    with pytest.raises(ValueError, match="method"):
        nearest_distances(a, b, "faiss")
    with pytest.raises(ConfigError, match=r"^metric chamfer: num_points"):
        Chamfer(num_points=0)


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((2, 50), (2, 60, 3)),
        ((2, 50, 2), (2, 60, 2)),
        ((2, 50, 3), (3, 60, 3)),
        ((2, 0, 3), (2, 6, 3)),
    ],
)
def test_clouds_of_the_wrong_shape_are_a_value_error_naming_the_shapes(a_shape, b_shape):
    """Pure maths: a ValueError with both shapes, never the run's ConfigError."""
    a, b = torch.zeros(a_shape), torch.zeros(b_shape)
    shapes = re.escape(f"{tuple(a_shape)} and {tuple(b_shape)}")
    for compute in (nearest_distances, chamfer_hausdorff):
        with pytest.raises(ValueError, match=shapes) as err:
            compute(a, b)
        assert not isinstance(err.value, ConfigError)


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
    differ = [1, 4]  # the equal frames' distances are 0 without any measuring
    expected = brute_force_surface(ref[differ].numpy(), gen[differ].numpy())
    np.testing.assert_allclose(chamfer[differ].numpy(), expected[0], rtol=1e-12)
    np.testing.assert_allclose(hausdorff[differ].numpy(), expected[1], rtol=1e-12)
    assert chamfer[[0, 2, 3, 5]].eq(0).all() and hausdorff[[0, 2, 3, 5]].eq(0).all()
    assert chamfer[differ].gt(0).all()


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


# ------------------------------------------------------------ the hierarchy's search, bit for bit


def brute_nearest(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per frame, each point of `a` to its nearest of `b`: every pair measured as the KD-tree does,
    sqrt((dx² + dy²) + dz²) in float64."""
    out = np.empty(a.shape[:2])
    for t, (p, q) in enumerate(zip(a.astype(np.float64), b.astype(np.float64), strict=True)):
        for i in range(0, len(p), 500):  # row blocks: 500 × 10,475 pairs at a time
            d = p[i : i + 500, None, :] - q[None, :, :]
            out[t, i : i + 500] = np.sqrt((d[..., 0] ** 2 + d[..., 1] ** 2 + d[..., 2] ** 2).min(1))
    return out


def assert_bvh_exact(a: torch.Tensor, b: torch.Tensor, brute: int = 1) -> None:
    """The hierarchy's distances both ways equal the KD-tree's and brute force's (for every
    `brute`-th point, each against every point of the other cloud; 0: none), bit for bit."""
    bvh, kd = nearest_distances(a, b, "bvh"), nearest_distances(a, b, "kdtree")
    for got, want in zip(bvh, kd, strict=True):
        assert got.dtype == torch.float64 and torch.equal(got, want)
    if brute:
        rows = slice(None, None, brute)
        for got, p, q in ((bvh[0], a, b), (bvh[1], b, a)):
            np.testing.assert_array_equal(
                got[:, rows].numpy(), brute_nearest(p[:, rows].numpy(), q.numpy())
            )


def lattice(n: int, seed: int) -> torch.Tensor:
    """Points on a 5 cm lattice with repeats: many equal distances and duplicate points."""
    rng = np.random.default_rng(seed)
    return torch.tensor(rng.integers(0, 6, size=(3, n, 3)) * 0.05, dtype=torch.float32)


@pytest.mark.parametrize(
    "a,b",
    [
        # unequal sizes; frames are independent, so frame 0's hierarchy is stale for frames 1-2
        (torch.randn(3, 300, 3), torch.randn(3, 170, 3) * 0.8 + 0.1),
        (torch.randn(3, 200, 3), torch.randn(3, 200, 3) + 1000.0),  # far apart, far from 0
        (lattice(250, 0), lattice(250, 1)),  # ties and duplicates
        (lattice(120, 2), lattice(120, 2)[:, torch.randperm(120)]),  # same points, reordered
        (torch.randn(2, 90, 3) * torch.tensor([1.0, 1.0, 0.0]), torch.randn(2, 40, 3)),  # flat
        (torch.randn(2, 64, 3), torch.zeros(2, 1, 3)),  # a single target point
    ],
    ids=["random", "far", "ties", "permuted", "flat", "single"],
)
def test_bvh_equals_kdtree_and_brute_force_on_clouds(a, b):
    torch.manual_seed(0)
    assert_bvh_exact(a, b)


def test_bvh_equals_kdtree_on_identical_meshes_and_on_synthetic_bodies():
    body = synthetic_body(4, 1).root_aligned_vertices()
    bvh = nearest_distances(body, body.clone(), "bvh")
    assert float(bvh[0].abs().max()) == 0.0 and float(bvh[1].abs().max()) == 0.0
    assert_bvh_exact(body, synthetic_body(4, 2).root_aligned_vertices(), brute=0)


@pytest.fixture(scope="module")
def sample_meshes(beat2_sample):
    """Root-aligned vertices of the real BEAT2 sample through the project's body model: frames
    0-3, 900-903, and 0-3 with 0.1 rad of smooth rotation noise (the `perturbed` model)."""
    from gesturebench.body.model import BodyModel
    from gesturebench.data.beat2 import read_motion_npz
    from gesturebench.models.perturbed import rotation_noise

    motion = read_motion_npz(beat2_sample / "2_scott_0_1_1.npz")
    body = BodyModel()

    class Record:
        motion = None

    Record.motion = motion.frames(0, 4)
    noisy = rotation_noise(Record, 0.1, np.random.default_rng(0))  # type: ignore[arg-type]
    return {
        name: body(m).root_aligned_vertices()
        for name, m in {
            "start": motion.frames(0, 4),
            "later": motion.frames(900, 904),
            "noisy": noisy,
        }.items()
    }


@pytest.mark.parametrize("other", ["noisy", "later", "reversed"])
def test_bvh_is_exact_on_real_sample_meshes(sample_meshes, other):
    """A perturbed copy (tight bounds), another pose 30 s later and the same frames in reverse
    order (unrelated poses: loose bounds, and each frame's neighbours from the previous frame are
    a poor guess)."""
    ref = sample_meshes["start"]
    gen = sample_meshes["start"].flip(0) if other == "reversed" else sample_meshes[other]
    assert_bvh_exact(ref, gen, brute=0)
    assert_bvh_exact(ref[1:2], gen[1:2], brute=7)  # one frame: every 7th vertex by brute force
