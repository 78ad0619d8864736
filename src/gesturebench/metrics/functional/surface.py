"""Chamfer and Hausdorff distances between two point clouds per frame, exact nearest neighbours
(docs/metrics.md, Chamfer and Hausdorff).

Four interchangeable exact paths. On CPU a bounded search over a bounding-volume hierarchy
refitted every frame (`nearest_bvh.py`, numba, float64; the default) or a KD-tree
(`scipy.spatial.cKDTree`, float64), both with frames in parallel threads and bit-identical
distances; on the GPU a fused Triton kernel (`nearest_kernel.py`, when Triton is installed) or
chunked `torch.cdist` with the non-matrix-multiply kernel. Both GPU paths choose each neighbour in
float32 and then measure its distance in float64, so that all paths agree to float32 rounding of
the neighbour choice.

Pure maths: bad input raises `ValueError` with the shapes or values it got (the metric classes turn
a bad option into the run's configuration error).
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from typing import Literal, get_args

import numpy as np
import torch
from scipy.spatial import cKDTree

from gesturebench.metrics.functional import nearest_bvh, nearest_kernel

#: the nearest-neighbour methods (`SurfaceMetric`'s `method`)
NearestMethod = Literal["auto", "bvh", "kdtree", "cdist", "triton"]
METHODS = get_args(NearestMethod)
#: KD-tree build options: unbalanced, uncompacted trees with 32-point leaves build and query fastest
#: on body meshes.
KDTREE = {"balanced_tree": False, "compact_nodes": False, "leafsize": 32}
#: Elements of one float32 distance block of the cdist path (64 Mi elements = 256 MiB; CUDA's cdist
#: fails at 2³¹ output elements, pytorch/pytorch#128791).
CDIST_BLOCK = 1 << 26


def check_options(method: str, num_points: int | None = None) -> None:
    """Raise `ValueError` for an unknown method or a non-positive `num_points`."""
    if method not in METHODS:
        raise ValueError(f"nearest-neighbour method must be one of {METHODS}, got {method!r}")
    if num_points is not None and num_points < 1:
        raise ValueError(
            f"num_points must be a positive number of vertices or null, got {num_points}"
        )


def check_clouds(a: torch.Tensor, b: torch.Tensor) -> None:
    """Raise `ValueError` unless `a` (T,N,3) and `b` (T,M,3) are two clouds of at least one point
    in each of the same T frames."""
    if not (
        a.ndim == b.ndim == 3
        and a.shape[2] == b.shape[2] == 3
        and a.shape[0] == b.shape[0]
        and a.shape[1] > 0
        and b.shape[1] > 0
    ):
        raise ValueError(
            "expected two point clouds per frame, (T,N,3) and (T,M,3) with N, M >= 1, got "
            f"{tuple(a.shape)} and {tuple(b.shape)}"
        )


def subsample_indices(n_points: int, num_points: int | None, seed: int) -> np.ndarray | None:
    """Sorted indices of `num_points` of `n_points` points drawn without replacement with `seed`;
    None keeps all."""
    check_options("auto", num_points)
    if num_points is None or num_points >= n_points:
        return None
    return np.sort(np.random.default_rng(seed).choice(n_points, size=num_points, replace=False))


def _frame_nearest(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return cKDTree(b, **KDTREE).query(a)[0], cKDTree(a, **KDTREE).query(b)[0]


def _kdtree_nearest(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    a64, b64 = a.double().cpu().numpy(), b.double().cpu().numpy()
    # Frames in parallel on torch's thread budget (cKDTree releases the GIL); splitting each
    # 10k-point query over threads instead (`workers=-1`) costs more in thread start-up than it
    # gains.
    with ThreadPoolExecutor(max(1, torch.get_num_threads())) as pool:
        d_ab, d_ba = zip(*pool.map(_frame_nearest, a64, b64), strict=True)
    return torch.from_numpy(np.stack(d_ab)).to(a.device), torch.from_numpy(np.stack(d_ba)).to(
        a.device
    )


def _bvh_nearest(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    a64 = np.ascontiguousarray(a.double().cpu().numpy())
    b64 = np.ascontiguousarray(b.double().cpu().numpy())
    d_ab, d_ba = np.empty(a64.shape[:2]), np.empty(b64.shape[:2])
    # One run of consecutive frames per thread (the kernel releases the GIL), so that each frame
    # starts from its predecessor's neighbours.
    edges = np.linspace(0, len(a64), max(1, torch.get_num_threads()) + 1).astype(int)
    runs = [slice(lo, hi) for lo, hi in itertools.pairwise(edges) if hi > lo]
    with ThreadPoolExecutor(len(runs)) as pool:
        for job in [
            pool.submit(nearest_bvh.nearest_frames, a64[r], b64[r], d_ab[r], d_ba[r]) for r in runs
        ]:
            job.result()
    return torch.from_numpy(d_ab).to(a.device), torch.from_numpy(d_ba).to(a.device)


def _cdist_indices(
    a: torch.Tensor, b: torch.Tensor, block: int
) -> tuple[torch.Tensor, torch.Tensor]:
    T, N, M = a.shape[0], a.shape[1], b.shape[1]
    a32, b32 = a.float(), b.float()
    row_idx = torch.empty((T, N), dtype=torch.int64, device=a.device)
    col_idx = torch.empty((T, M), dtype=torch.int64, device=a.device)
    frames = max(1, block // (N * M))
    rows = max(1, min(N, block // M))
    for f0 in range(0, T, frames):
        f1 = min(T, f0 + frames)
        col_min = torch.full((f1 - f0, M), torch.inf, device=a.device)
        for r0 in range(0, N, rows):
            r1 = min(N, r0 + rows)
            d = torch.cdist(
                a32[f0:f1, r0:r1], b32[f0:f1], compute_mode="donot_use_mm_for_euclid_dist"
            )
            row_idx[f0:f1, r0:r1] = d.argmin(dim=2)
            v, i = d.min(dim=1)
            better = v < col_min
            col_min = torch.where(better, v, col_min)
            col_idx[f0:f1] = torch.where(better, i + r0, col_idx[f0:f1])
    return row_idx, col_idx


def _measured(
    a: torch.Tensor, b: torch.Tensor, row_idx: torch.Tensor, col_idx: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Float64 distances from each point to the neighbour a GPU path chose for it."""
    a64, b64 = a.double(), b.double()
    d_ab = torch.linalg.vector_norm(
        a64 - torch.gather(b64, 1, row_idx[..., None].expand(-1, -1, 3)), dim=-1
    )
    d_ba = torch.linalg.vector_norm(
        b64 - torch.gather(a64, 1, col_idx[..., None].expand(-1, -1, 3)), dim=-1
    )
    return d_ab, d_ba


def nearest_distances(
    a: torch.Tensor, b: torch.Tensor, method: str = "auto", block: int = CDIST_BLOCK
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per frame, the distance from each point of `a` (T,N,3) to its nearest point of `b` (T,M,3),
    and back.

    Returns float64 tensors (T,N) and (T,M) on `a`'s device. `method="auto"` uses the hierarchy on
    CPU, the Triton kernel elsewhere when it builds there (`nearest_kernel.usable`), else cdist;
    `block` bounds the cdist path's memory (elements of one distance block). Raises `ValueError`
    for other shapes (N, M >= 1) or an unknown method.
    """
    check_options(method)
    check_clouds(a, b)
    if method == "auto":
        if a.device.type == "cpu":
            method = "bvh"
        else:
            method = "triton" if nearest_kernel.usable(a.device) else "cdist"
    if method == "bvh":
        return _bvh_nearest(a, b)
    if method == "kdtree":
        return _kdtree_nearest(a, b)
    if method == "triton":
        return _measured(a, b, *nearest_kernel.nearest_indices(a, b))
    return _measured(a, b, *_cdist_indices(a, b, block))


def chamfer_hausdorff(
    ref: torch.Tensor, gen: torch.Tensor, method: str = "auto", block: int = CDIST_BLOCK
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-frame Chamfer (squared metres) and Hausdorff (metres) distances of clouds `ref` and `gen`
    (T,N,3).

    Chamfer = mean_a min_g ‖a−g‖² + mean_g min_a ‖a−g‖²; Hausdorff = max(max_a min_g ‖a−g‖, max_g
    min_a ‖a−g‖), from one nearest-neighbour pass. Frames whose two clouds are identical point for
    point are exactly 0 and skip the search (every frame of a model that returns the reference).
    Returns two float64 (T,) tensors; raises `ValueError` for other shapes (N, M >= 1) or an
    unknown method.
    """
    check_options(method)
    check_clouds(ref, gen)
    chamfer = torch.zeros(ref.shape[0], dtype=torch.float64, device=ref.device)
    hausdorff = torch.zeros_like(chamfer)
    differ = torch.ones_like(chamfer, dtype=torch.bool)
    if ref.shape == gen.shape:
        differ = (ref != gen).flatten(1).any(dim=1)
    if differ.any():
        d_rg, d_gr = nearest_distances(ref[differ], gen[differ], method, block)
        chamfer[differ] = d_rg.square().mean(dim=1) + d_gr.square().mean(dim=1)
        hausdorff[differ] = torch.maximum(d_rg.amax(dim=1), d_gr.amax(dim=1))
    return chamfer, hausdorff
