"""Body model: SMPL-X forward through the `smplx` package, joint sets, the procedural model file."""
