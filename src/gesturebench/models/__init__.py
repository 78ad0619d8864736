"""Motion sources: LightningModules that produce SMPL-X motion for a sequence (ground truth, files,
baselines, adapters)."""
