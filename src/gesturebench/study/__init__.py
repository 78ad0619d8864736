"""Perceptual-study analysis (docs/study.md): ratings ingestion and quality control, study windows,
the synthetic study, metric–rating correlations and target-specific composite metrics."""
