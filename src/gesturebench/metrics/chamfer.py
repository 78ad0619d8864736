"""Chamfer: distance between the generated and reference body surfaces (docs/metrics.md, Chamfer and
Hausdorff); its nearest-neighbour pass is shared with Hausdorff (surface.py)."""

from __future__ import annotations

from gesturebench.metrics.surface import SurfaceMetric


class Chamfer(SurfaceMetric):
    """Chamfer ↓: per-frame symmetric mean squared nearest-vertex distance (m²), averaged over
    frames."""

    default_name = "chamfer"
    value = 0
