"""Density (Naeem et al. 2020) of generated motion-autoencoder features around the reference's
(docs/metrics.md, Density and Coverage)."""

from __future__ import annotations

from gesturebench.metrics.functional.density import density, resampled_density
from gesturebench.metrics.neighbour import NeighbourMetric


class Density(NeighbourMetric):
    """Density ↑: mean count of reference k-NN balls containing a generated feature, over k."""

    default_name = "density"
    statistic = staticmethod(density)
    resampled = staticmethod(resampled_density)
