"""The base of Chamfer and Hausdorff (chamfer.py, hausdorff.py): distances between the generated
and reference body surfaces (docs/metrics.md, Chamfer and Hausdorff).

Both need the same nearest-neighbour pass over every frame's root-aligned vertices, the dominant
cost of the geometric metrics. The two metric objects share it through `MotionPair.shared` (keyed by
the options), so the second metric updated with the same pair reuses the first one's work.
"""

from __future__ import annotations

from typing import Any

import torch

from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.functional.surface import (
    NearestMethod,
    chamfer_hausdorff,
    check_options,
    subsample_indices,
)
from gesturebench.metrics.pair import MotionPair
from gesturebench.runtime.errors import ConfigError

#: Frames root-aligned at a time (bounds the extra memory to a chunk of vertices).
FRAME_CHUNK = 256


def surface_per_frame(
    pair: MotionPair, method: str = "auto", num_points: int | None = None, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-frame Chamfer and Hausdorff (float64 (T,) each) of a pair's root-aligned vertices,
    computed once per pair."""
    return pair.shared(
        ("surface", method, num_points, seed),
        lambda: _surface_per_frame(pair, method, num_points, seed),
    )


def _surface_per_frame(
    pair: MotionPair, method: str, num_points: int | None, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    chamfer, hausdorff = [], []
    for start in range(0, pair.n_frames, FRAME_CHUNK):
        ref = pair.ref_body.frames(start, start + FRAME_CHUNK).root_aligned_vertices()
        gen = pair.gen_body.frames(start, start + FRAME_CHUNK).root_aligned_vertices()
        idx = subsample_indices(ref.shape[1], num_points, seed)
        if idx is not None:
            ref, gen = ref[:, idx], gen[:, idx]
        c, h = chamfer_hausdorff(ref, gen, method)
        chamfer.append(c)
        hausdorff.append(h)
    return torch.cat(chamfer), torch.cat(hausdorff)


class SurfaceMetric(SequenceMetric):
    """Chamfer or Hausdorff (`value`: their index in `surface_per_frame`): exact nearest neighbours
    over all vertices unless `num_points`."""

    direction = "lower"
    needs_vertices = True
    reads = ("expressions", "jaw", "eyes")  # face vertices, root-aligned (not `trans`)
    value: int

    def __init__(
        self,
        method: NearestMethod = "auto",
        num_points: int | None = None,
        seed: int = 0,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        try:
            check_options(method, num_points)
        except ValueError as err:
            raise ConfigError(f"metric {self.name}: {err}") from None
        self.method, self.num_points, self.seed = method, num_points, seed

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float]:
        per_frame = surface_per_frame(pair, self.method, self.num_points, self.seed)[self.value]
        return [float(per_frame.mean())], 1.0
