"""Hausdorff: distance between the generated and reference body surfaces (docs/metrics.md,
Chamfer and Hausdorff); its nearest-neighbour pass is shared with Chamfer (surface.py)."""

from __future__ import annotations

from gesturebench.metrics.surface import SurfaceMetric


class Hausdorff(SurfaceMetric):
    """Hausdorff ↓: per-frame symmetric Hausdorff distance of the vertex sets (m), averaged over
    frames."""

    default_name = "hausdorff"
    value = 1
