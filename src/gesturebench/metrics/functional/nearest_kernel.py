"""Fused nearest-neighbour search on the GPU (Triton): per frame, the index of each point's nearest
point in another cloud, without writing the N×M distance block to memory.

The chunked `cdist` path writes and re-reads 10,475 × 10,475 float32 distances per frame, so at
BEAT2's size (≈ 215k frames) it is bound by memory traffic; this kernel keeps a tile's running
minimum in registers and touches only the two clouds. Distances are compared in float32 after
moving each frame's clouds to a local origin (the first point of `a`), then the caller measures the
chosen neighbours in float64, as on the cdist path. Triton is optional (`pip install triton`, which
CUDA builds of torch bring along); `available()` says whether it can run.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import warnings

import torch

#: Tile shapes tried once per cloud size (points of the query cloud per program, of the target
#: cloud per inner step, warps); Triton's autotuner keeps the fastest. The interpreter runs the
#: first.
TILES = ((64, 64, 4), (128, 64, 4), (128, 64, 8), (64, 128, 4), (128, 128, 8), (32, 128, 4))


def available() -> bool:
    """True when Triton is installed (the kernel then runs on CUDA tensors, or anywhere under
    `TRITON_INTERPRET=1`)."""
    return importlib.util.find_spec("triton") is not None


@functools.cache
def usable(device: torch.device) -> bool:
    """True when the kernel builds and runs on `device`; otherwise warn once and return False, so
    that `method="auto"` falls back to cdist (a Triton that cannot compile for this GPU, say)."""
    if not available():
        return False
    try:
        nearest_indices(torch.zeros(1, 2, 3, device=device), torch.ones(1, 3, 3, device=device))
    except Exception as error:  # any build or launch failure means: use the other path
        warnings.warn(
            f"Triton nearest-neighbour kernel unusable on {device} ({error!r}); using cdist",
            stacklevel=2,
        )
        return False
    return True


@functools.cache
def _kernel():
    """The jitted kernel, built on first use so that importing this module never needs Triton."""
    import triton
    import triton.language as tl

    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    configs = [
        triton.Config({"BN": bn, "BM": bm}, num_warps=warps)
        for bn, bm, warps in (TILES[:1] if interpreted else TILES)
    ]

    @triton.autotune(configs=configs, key=["N", "M"])
    @triton.jit
    def nearest(a_ptr, b_ptr, out_ptr, N, M, BN: tl.constexpr, BM: tl.constexpr):
        # a (T,3,N) and b (T,3,M) float32, coordinate-major so that loads are contiguous.
        frame = tl.program_id(0).to(tl.int64)
        rows = tl.program_id(1) * BN + tl.arange(0, BN)
        in_a = rows < N
        a = a_ptr + frame * 3 * N
        ax = tl.load(a + rows, mask=in_a, other=0.0)
        ay = tl.load(a + N + rows, mask=in_a, other=0.0)
        az = tl.load(a + 2 * N + rows, mask=in_a, other=0.0)
        b = b_ptr + frame * 3 * M
        best = tl.full((BN, BM), float("inf"), tl.float32)
        best_at = tl.zeros((BN, BM), tl.int32)
        for start in range(0, M, BM):
            cols = start + tl.arange(0, BM)
            in_b = cols < M
            bx = tl.load(b + cols, mask=in_b, other=0.0)
            by = tl.load(b + M + cols, mask=in_b, other=0.0)
            bz = tl.load(b + 2 * M + cols, mask=in_b, other=0.0)
            dx = ax[:, None] - bx[None, :]
            dy = ay[:, None] - by[None, :]
            dz = az[:, None] - bz[None, :]
            d = dx * dx + dy * dy + dz * dz
            closer = (d < best) & in_b[None, :]
            best = tl.where(closer, d, best)
            best_at = tl.where(closer, cols[None, :], best_at)
        slot = tl.argmin(best, axis=1)
        picked = tl.sum(tl.where(tl.arange(0, BM)[None, :] == slot[:, None], best_at, 0), axis=1)
        tl.store(out_ptr + frame * N + rows, picked, mask=in_a)

    return nearest


def nearest_indices(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per frame, the index of each point of `a` (T,N,3)'s nearest point in `b` (T,M,3), and back:
    int64 tensors (T,N) and (T,M) on `a`'s device."""
    import triton

    origin = a[:, :1].double()
    a32 = (a.double() - origin).float().transpose(1, 2).contiguous()
    b32 = (b.double() - origin).float().transpose(1, 2).contiguous()
    T, N, M = a.shape[0], a.shape[1], b.shape[1]
    kernel = _kernel()
    out = []
    for q, t, n, m in ((a32, b32, N, M), (b32, a32, M, N)):
        idx = torch.empty((T, n), dtype=torch.int32, device=a.device)
        kernel[lambda meta, n=n: (T, triton.cdiv(n, meta["BN"]))](q, t, idx, n, m)
        out.append(idx.long())
    return out[0], out[1]
