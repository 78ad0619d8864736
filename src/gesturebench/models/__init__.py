"""Motion sources: LightningModules that produce SMPL-X motion for a sequence (the reference,
baselines, perturbed references, and the model sources of `sources` for published models and
yours)."""
