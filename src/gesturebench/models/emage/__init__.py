"""EMAGE (Liu et al., CVPR 2024), the audio-only release ``H-Liu1997/emage_audio``, re-implemented
from its architecture with standard torch layers so that its released `state_dict`s load strictly.

- `config`: the `config.json` fields the networks are built from.
- `layers`: convolution stacks, the waveform encoder, MLPs, the periodic position code.
- `generator.EmageGenerator`: one window of speech + seed motion → per-part latents and logits.
- `codecs.BodyCodec`: the per-part VQ-VAEs and global-motion autoencoder; codes → SMPL-X.
- `rotations`: 6D → axis-angle in torch.
- `inference`: the release's windowed, seeded generation over a whole recording.

Parity with the official code: tests/test_emage.py (fixtures made from PantoMatrix's classes).
"""
