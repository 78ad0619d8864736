"""Coverage (Naeem et al. 2020) of generated motion-autoencoder features around the reference's
(docs/metrics.md, Density and Coverage)."""

from __future__ import annotations

from gesturebench.metrics.functional.coverage import coverage, resampled_coverage
from gesturebench.metrics.neighbour import NeighbourMetric


class Coverage(NeighbourMetric):
    """Coverage ↑: fraction of reference k-NN balls containing a generated feature."""

    default_name = "coverage"
    value_range = (0.0, 1.0)
    statistic = staticmethod(coverage)
    resampled = staticmethod(resampled_coverage)
