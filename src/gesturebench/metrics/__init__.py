"""Metrics: one torchmetrics `Metric` per metric; `functional/` holds the pure maths they share."""
