"""Exact float64 nearest neighbours on CPU: a uniform grid per cloud and a bounded search, compiled
with numba (docs/metrics.md, Chamfer and Hausdorff).

Each query first measures two candidates, the vertex with its own index (the two meshes share their
topology) and the previous frame's neighbour (consecutive frames barely move); the smaller of the
two distances bounds the search, which then visits only the grid cells that could hold a closer
point, nearest first. Distances are measured exactly as `scipy.spatial.cKDTree` does
(``sqrt((dx² + dy²) + dz²)`` in float64) and a point is only skipped when its cell is provably
farther than the best distance so far, so the result is the minimum over all points, bit for bit.
"""

from __future__ import annotations

import math

import numba
import numpy as np

#: Grid cells per target point (fewer: more points per cell; more: more empty cells visited).
CELLS_PER_POINT = 0.125
#: Cells are this many times thinner along z (a column's cells are contiguous: no extra visits).
Z_SPLIT = 16
#: At most this many cells along one axis (bounds the grid's memory for very flat clouds).
MAX_CELLS_PER_AXIS = 1024
#: Relative slack on every cell-distance bound: floating-point rounding in cell assignment is far
#: below it, so no cell that could hold a closer point is ever skipped.
SLACK = 1e-9


@numba.njit(nogil=True, inline="always")
def _cell(q: float, lo: float, size: float, dim: int) -> int:
    """The grid index of coordinate `q` along one axis, clamped to the grid (clamped before the
    conversion to an integer, which is undefined for ±inf)."""
    return int(min(max((q - lo) / size, 0.0), dim - 1.0))


@numba.njit(nogil=True, cache=True)
def _grid(points: np.ndarray, cells_per_point: float, z_split: int):
    """Cell sizes, origin, cells per axis, the points sorted by cell (z fastest), their original
    indices and each cell's first point (the cell count appended). Cells are `z_split` times
    thinner along z: a column's cells are contiguous, so finer z costs no extra visits."""
    n = points.shape[0]
    lo = np.empty(3)
    extent = np.empty(3)
    for k in range(3):
        lo[k] = points[:, k].min()
        extent[k] = points[:, k].max() - lo[k]
    longest = extent.max()
    size = np.ones(3)
    if longest > 0.0:
        volume = 1.0
        for k in range(3):
            volume *= max(extent[k], longest / MAX_CELLS_PER_AXIS)
        side = max(
            (volume / (n * cells_per_point)) ** (1.0 / 3.0), longest / (MAX_CELLS_PER_AXIS - 1)
        )
        size[:] = side
        size[2] = max(side / z_split, longest / (MAX_CELLS_PER_AXIS - 1))
    dims = np.empty(3, np.int64)
    for k in range(3):
        dims[k] = math.floor(extent[k] / size[k]) + 1
    cell = np.empty(n, np.int64)
    start = np.zeros(dims[0] * dims[1] * dims[2] + 1, np.int64)
    for i in range(n):
        c = 0
        for k in range(3):
            c = c * dims[k] + _cell(points[i, k], lo[k], size[k], dims[k])
        cell[i] = c
        start[c + 1] += 1
    for c in range(start.shape[0] - 1):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    order = np.empty(n, np.int64)
    for i in range(n):
        order[fill[cell[i]]] = i
        fill[cell[i]] += 1
    return size, lo, dims, points[order], order, start


@numba.njit(nogil=True, inline="always")
def _square(qx: float, qy: float, qz: float, p: np.ndarray, j: int) -> float:
    """Squared distance in cKDTree's operation order."""
    dx = qx - p[j, 0]
    dy = qy - p[j, 1]
    dz = qz - p[j, 2]
    return dx * dx + dy * dy + dz * dz


@numba.njit(nogil=True, inline="always")
def _gap(q: float, lo: float, size: float, j: int, slack: float) -> float:
    """Lower bound on the distance along one axis from coordinate `q` to cell slab `j`."""
    left = lo + j * size
    right = left + size
    if q < left:
        return max(left - q - slack, 0.0)
    if q > right:
        return max(q - right - slack, 0.0)
    return 0.0


@numba.njit(nogil=True)
def _nearest(queries, target, guess, grid, slack, out, nearest):
    """For each query point, its exact distance to `target` (`out`) and that neighbour's index
    (`nearest`); its own index and `guess` (-1: none) are measured first and bound the search."""
    size, lo, dims, pts, order, start = grid
    lx, ly, lz = lo[0], lo[1], lo[2]
    nx, ny, nz = dims[0], dims[1], dims[2]
    m = target.shape[0]
    for i in range(queries.shape[0]):
        qx, qy, qz = queries[i, 0], queries[i, 1], queries[i, 2]
        best = np.inf
        arg = -1
        if i < m:
            best = _square(qx, qy, qz, target, i)
            arg = i
        g = guess[i]
        if g >= 0:
            d = _square(qx, qy, qz, target, g)
            if d < best:
                best = d
                arg = g
        found = -1
        cx, cy = _cell(qx, lx, size[0], nx), _cell(qy, ly, size[1], ny)
        z0, z1, reached = 0, -1, -1.0  # the z cells within reach of `reached` (a past best)
        for sx in (1, -1):  # slabs outwards from the query's: up from cx, then down from cx - 1
            ix = cx if sx == 1 else cx - 1
            while 0 <= ix < nx:
                gx = _gap(qx, lx, size[0], ix, slack)
                gx *= gx
                if gx > best:
                    break
                for sy in (1, -1):
                    iy = cy if sy == 1 else cy - 1
                    while 0 <= iy < ny:
                        gy = _gap(qy, ly, size[1], iy, slack)
                        if gx + gy * gy > best:
                            break
                        if best != reached:
                            reached = best
                            reach = math.sqrt(best) + slack
                            z0 = _cell(qz - reach, lz, size[2], nz)
                            z1 = _cell(qz + reach, lz, size[2], nz)
                        base = (ix * ny + iy) * nz
                        for j in range(start[base + z0], start[base + z1 + 1]):
                            d = _square(qx, qy, qz, pts, j)
                            if d < best:
                                best = d
                                found = j
                        iy += sy
                ix += sx
        if found >= 0:
            arg = order[found]
        out[i] = math.sqrt(best)
        nearest[i] = arg


@numba.njit(nogil=True, cache=True)
def nearest_frames(a: np.ndarray, b: np.ndarray, d_ab: np.ndarray, d_ba: np.ndarray) -> None:
    """Per frame of `a` (T,N,3) and `b` (T,M,3), float64: each point's distance to the other cloud
    (`d_ab` (T,N), `d_ba` (T,M), written in place); frame t starts from frame t−1's neighbours."""
    n, m = a.shape[1], b.shape[1]
    near_ab = np.full(n, -1, np.int64)
    near_ba = np.full(m, -1, np.int64)
    for t in range(a.shape[0]):
        scale = max(np.abs(a[t]).max(), np.abs(b[t]).max(), 1e-300)
        slack = SLACK * scale
        _nearest(
            a[t], b[t], near_ab, _grid(b[t], CELLS_PER_POINT, Z_SPLIT), slack, d_ab[t], near_ab
        )
        _nearest(
            b[t], a[t], near_ba, _grid(a[t], CELLS_PER_POINT, Z_SPLIT), slack, d_ba[t], near_ba
        )
