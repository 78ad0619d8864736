"""Statistics of a run's metrics: bootstrap intervals (docs/statistics.md)."""
