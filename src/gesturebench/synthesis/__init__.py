"""Motion synthesis in SMPL-X axis-angle, shared by the mini-BEAT2 generator (`data/mini`) and the
perturbed models (`models/perturbed.py`): smooth time curves, the arm and hand gesture rig with its
beat strokes, and the leg IK that keeps the feet planted."""
