"""Motion synthesis in SMPL-X axis-angle, shared by the mini-BEAT2 generator (`mini/`, which sits
here because it builds on it and on the body's rest skeleton) and the perturbed models
(`models/perturbed.py`): smooth time curves, the arm and hand gesture rig with its beat strokes, and
the leg IK that keeps the feet planted."""
