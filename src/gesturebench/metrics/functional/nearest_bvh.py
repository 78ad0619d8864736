"""Exact float64 nearest neighbours on CPU: a bounding-volume hierarchy per cloud, built once per
run of frames and refitted every frame, searched a group of queries at a time (numba;
docs/metrics.md, Chamfer and Hausdorff).

A body mesh deforms smoothly, so vertices that are close in the first frame stay close: each
cloud's hierarchy (median splits into leaves of `LEAF` points) is built on its first frame and only
its boxes are recomputed for later frames. Queries are searched a node of up to `GROUP` points at a
time: each first measures two candidates, the point with its own index (the two meshes share their
topology) and the previous frame's neighbour (consecutive frames barely move). The group then
descends the other cloud's hierarchy, nearer box first, entering a box only if it is within the
largest of the group's best distances and within some query's own best distance (a branch-free
loop over the queries that the compiler vectorises); a leaf is scanned only for those queries.

Distances are measured exactly as `scipy.spatial.cKDTree` does (``sqrt((dx² + dy²) + dz²)`` in
float64) and a box is only skipped when it is provably farther than a query's best distance so far,
so each result is the minimum over all points, bit for bit.
"""

from __future__ import annotations

import numba
import numpy as np

from gesturebench.runtime.numba_lock import cached_kernel

#: Points per leaf (queries searched together; points scanned per visited box).
LEAF = 16
#: Query points searched together: the hierarchy's nodes of at most this many points.
GROUP = 64
#: Relative slack on every box-distance bound: rounding in the distances is far below it, so no box
#: that could hold a closer point is ever skipped.
SLACK = 1e-9
#: Depth-first stack size: far above the depth of a median-split tree of any cloud that fits memory.
STACK = 256


@cached_kernel(nogil=True)
def build(points: np.ndarray, leaf: int):
    """The hierarchy of `points` (N,3): the point order that makes each node's points contiguous,
    and per node its first and past-the-last point and its two children (-1: a leaf). Children
    are numbered after their parent, so boxes can be refitted in reverse node order."""
    n = points.shape[0]
    perm = np.arange(n)
    cap = 2 * (n // max((leaf + 1) // 2, 1) + 1)  # only nodes of over `leaf` points are split
    first = np.empty(cap, np.int64)
    last = np.empty(cap, np.int64)
    left = np.full(cap, -1, np.int64)
    right = np.full(cap, -1, np.int64)
    first[0], last[0] = 0, n
    count = 1
    todo = [0]
    while todo:
        node = todo.pop()
        lo, hi = first[node], last[node]
        if hi - lo <= leaf:
            continue
        seg = points[perm[lo:hi]]
        spread = np.empty(3)
        for k in range(3):
            spread[k] = seg[:, k].max() - seg[:, k].min()
        axis = np.argmax(spread)
        perm[lo:hi] = perm[lo:hi][np.argsort(seg[:, axis], kind="mergesort")]
        mid = (lo + hi) // 2
        for child, a, b in ((count, lo, mid), (count + 1, mid, hi)):
            first[child], last[child] = a, b
            todo.append(child)
        left[node], right[node] = count, count + 1
        count += 2
    return perm, first[:count], last[:count], left[:count], right[:count]


@cached_kernel(nogil=True)
def groups(tree, size):
    """The nodes of `tree` of at most `size` points whose parent has more (queries searched
    together)."""
    _, first, last, left, right = tree
    out = []
    todo = [0]
    while todo:
        node = todo.pop()
        if last[node] - first[node] <= size or left[node] < 0:
            out.append(node)
        else:
            todo.append(left[node])
            todo.append(right[node])
    return np.array(out, np.int64)


@cached_kernel(nogil=True)
def _refit(xyz, tree, box):
    """Each node's box (`box` (nodes,6): lo xyz, hi xyz) over the sorted points `xyz` (3,N)."""
    _, first, last, left, right = tree
    for node in range(first.shape[0] - 1, -1, -1):
        if left[node] < 0:
            for k in range(3):
                lo, hi = np.inf, -np.inf
                for j in range(first[node], last[node]):
                    lo = min(lo, xyz[k, j])
                    hi = max(hi, xyz[k, j])
                box[node, k], box[node, 3 + k] = lo, hi
        else:
            a, b = left[node], right[node]
            for k in range(3):
                box[node, k] = min(box[a, k], box[b, k])
                box[node, 3 + k] = max(box[a, 3 + k], box[b, 3 + k])


@numba.njit(nogil=True, inline="always")
def _gap(box_a, a, box_b, b, slack):
    """Lower bound on the squared distance between any point of box `a` and any of box `b`."""
    gx = max(max(box_b[b, 0] - box_a[a, 3], box_a[a, 0] - box_b[b, 3]) - slack, 0.0)
    gy = max(max(box_b[b, 1] - box_a[a, 4], box_a[a, 1] - box_b[b, 4]) - slack, 0.0)
    gz = max(max(box_b[b, 2] - box_a[a, 5], box_a[a, 2] - box_b[b, 5]) - slack, 0.0)
    return gx * gx + gy * gy + gz * gz


@numba.njit(nogil=True, inline="always")
def _square(qx, qy, qz, p, j):
    """Squared distance in cKDTree's operation order."""
    dx = qx - p[j, 0]
    dy = qy - p[j, 1]
    dz = qz - p[j, 2]
    return dx * dx + dy * dy + dz * dz


@numba.njit(nogil=True, inline="always")
def _within(qx, qy, qz, best, box, node, slack, near):
    """Mark in `near` the queries whose best squared distance reaches box `node`; whether any."""
    lx, ly, lz = box[node, 0] - slack, box[node, 1] - slack, box[node, 2] - slack
    hx, hy, hz = box[node, 3] + slack, box[node, 4] + slack, box[node, 5] + slack
    any_near = False
    for i in range(qx.shape[0]):
        gx = max(max(lx - qx[i], qx[i] - hx), 0.0)
        gy = max(max(ly - qy[i], qy[i] - hy), 0.0)
        gz = max(max(lz - qz[i], qz[i] - hz), 0.0)
        near[i] = gx * gx + gy * gy + gz * gz <= best[i]
        any_near |= near[i]
    return any_near


@numba.njit(nogil=True)
def _search(query, target, slack, guess, out, nearest):
    """Each point of cloud `query`'s exact distance to cloud `target` (`out`) and that neighbour's
    index (`nearest`); `guess` holds each query's first guess (-1: none). A cloud is its points
    sorted by its hierarchy ((3,N)), the hierarchy, its query groups, its boxes, its points (N,3)
    and the map from their indices to sorted positions."""
    qs, qtree, qgroups, qbox, _, _ = query
    ps, ptree, _, pbox, p, pinv = target
    qperm, qfirst, qlast, _, _ = qtree
    pperm, pfirst, plast, pleft, pright = ptree
    m = p.shape[0]
    size = np.max(qlast[qgroups] - qfirst[qgroups])
    best, arg = np.empty(size), np.empty(size, np.int64)
    near = np.empty(size, np.bool_)
    stack, reach = np.empty(STACK, np.int64), np.empty(STACK)  # nodes and their box distances
    px, py, pz = ps[0], ps[1], ps[2]
    for g in qgroups:
        lo, hi = qfirst[g], qlast[g]
        nq = hi - lo
        qx, qy, qz = qs[0, lo:hi], qs[1, lo:hi], qs[2, lo:hi]
        bound = -1.0
        for i in range(nq):
            orig = qperm[lo + i]
            b, a = np.inf, -1
            if orig < m:
                b, a = _square(qx[i], qy[i], qz[i], p, orig), pinv[orig]
            h = guess[orig]
            if h >= 0:
                d = _square(qx[i], qy[i], qz[i], p, h)
                if d < b:
                    b, a = d, pinv[h]
            best[i], arg[i] = b, a
            bound = max(bound, b)
        stack[0], reach[0], top = 0, 0.0, 1
        while top:
            top -= 1
            node = stack[top]
            if reach[top] > bound or not _within(qx, qy, qz, best, pbox, node, slack, near):
                continue
            if pleft[node] >= 0:
                c0, c1 = pleft[node], pright[node]
                g0, g1 = _gap(qbox, g, pbox, c0, slack), _gap(qbox, g, pbox, c1, slack)
                if g1 < g0:
                    c0, c1, g0, g1 = c1, c0, g1, g0
                if g1 <= bound:  # the farther child first, so that the nearer one is searched first
                    stack[top], reach[top] = c1, g1
                    top += 1
                if g0 <= bound:
                    stack[top], reach[top] = c0, g0
                    top += 1
                continue
            for i in range(nq):
                if not near[i]:
                    continue
                x, y, z, b, a = qx[i], qy[i], qz[i], best[i], arg[i]
                for j in range(pfirst[node], plast[node]):
                    dx = x - px[j]
                    dy = y - py[j]
                    dz = z - pz[j]
                    d = dx * dx + dy * dy + dz * dz
                    if d < b:
                        b, a = d, j
                best[i], arg[i] = b, a
            bound = best[0]
            for i in range(1, nq):
                bound = max(bound, best[i])
        for i in range(nq):
            orig = qperm[lo + i]
            out[orig] = np.sqrt(best[i])
            nearest[orig] = pperm[arg[i]]


@numba.njit(nogil=True, inline="always")
def _sorted(points, perm):
    """`points` (N,3) in hierarchy order, coordinate-major (3,N)."""
    xyz = np.empty((3, points.shape[0]))
    for j in range(points.shape[0]):
        for k in range(3):
            xyz[k, j] = points[perm[j], k]
    return xyz


@cached_kernel(nogil=True)
def nearest_frames(a: np.ndarray, b: np.ndarray, d_ab: np.ndarray, d_ba: np.ndarray) -> None:
    """Per frame of `a` (T,N,3) and `b` (T,M,3), float64, N and M ≥ 1: each point's distance to the
    other cloud (`d_ab` (T,N), `d_ba` (T,M), written in place); frame t starts from frame t−1's
    neighbours."""
    if a.shape[0] == 0:
        return
    n, m = a.shape[1], b.shape[1]
    if n == 0 or m == 0:
        raise ValueError("nearest_frames needs at least one point in each cloud")
    atree, btree = build(a[0], LEAF), build(b[0], LEAF)
    agroups, bgroups = groups(atree, GROUP), groups(btree, GROUP)
    ainv, binv = np.empty(n, np.int64), np.empty(m, np.int64)
    ainv[atree[0]] = np.arange(n)
    binv[btree[0]] = np.arange(m)
    abox, bbox = np.empty((atree[1].shape[0], 6)), np.empty((btree[1].shape[0], 6))
    near_ab, near_ba = np.full(n, -1, np.int64), np.full(m, -1, np.int64)
    for t in range(a.shape[0]):
        slack = SLACK * max(np.abs(a[t]).max(), np.abs(b[t]).max(), 1e-300)
        a_s, b_s = _sorted(a[t], atree[0]), _sorted(b[t], btree[0])
        _refit(a_s, atree, abox)
        _refit(b_s, btree, bbox)
        clouds = (
            (a_s, atree, agroups, abox, a[t], ainv),
            (b_s, btree, bgroups, bbox, b[t], binv),
        )
        _search(clouds[0], clouds[1], slack, near_ab, d_ab[t], near_ab)
        _search(clouds[1], clouds[0], slack, near_ba, d_ba[t], near_ba)
