"""EMAGE's evaluation files on the Hugging Face Hub, where its evaluation code (PantoMatrix
0bbb03d, `emage_evaltools/mertic.py`) downloads them: the FGD encoder's weights and BC's fixed speed
normaliser. Both are resolved by `gesturebench.runtime.weights` into `<checkpoints>/emage_eval/`."""

from __future__ import annotations

from gesturebench.runtime.weights import HubFiles

REPO_ID = "H-Liu1997/EMAGE"
FOLDER = "emage_eval"
PREFIX = "EMAGE/test_sequences/weights/"

#: `AESKConv_240_100.bin`, {"model_state": …} of the `VAESKConv` autoencoder
FGD_ENCODER = HubFiles(
    REPO_ID, (PREFIX + "AESKConv_240_100.bin",), FOLDER, repo_type="space", docs="docs/metrics.md"
)
#: `mean_vel_smplxflame_30.npy`, 55 per-joint mean speeds computed with SMPL-X over BEAT2
MEAN_SPEED = HubFiles(
    REPO_ID,
    (PREFIX + "mean_vel_smplxflame_30.npy",),
    FOLDER,
    repo_type="space",
    docs="docs/metrics.md",
)
