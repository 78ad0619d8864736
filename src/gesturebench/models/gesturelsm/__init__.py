"""GestureLSM (Liu et al., ICCV 2025), the shortcut model of ``andypinxinliu/GestureLSM``,
re-implemented from its architecture with standard torch layers so that its released
`state_dict`s load strictly.

- `config`: network sizes and the paper's sampling (2 shortcut steps, guidance 2).
- `layers`: rotary/sinusoidal positions, time embedding, cross-attention and spatial–temporal
  blocks.
- `generator.GestureLSMGenerator`: modality encoder + denoiser (one 128-frame window).
- `rvqvae.RVQVAE`: the per-part residual VQ-VAEs (upper, hands, lower).
- `features`: the audio envelope/onset channels, word ids from BEAT2's ``vocab.pkl``.
- `weights`: the released files and strict loading.
- `inference`: the release's windowed, seeded generation over a whole recording.
- `pipeline.GestureLSM`: loaded files + one recording (waveform, words, reference, seed) → poses.

Parity with the official code: tests/test_gesturelsm.py (fixtures made from GestureLSM's classes).
"""
