"""A one-sequence BEAT2 layout cut from the real BEAT2 sample, with its npz arrays changed at
will: the damaged and edge-case datasets of the error and protocol-pin tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gesturebench.data.audio import load_audio, write_wav
from gesturebench.data.records import SAMPLE_RATE

#: the sample's sequence that the copy holds
SEQ = "2_scott_0_1_1"


def beat2_copy(sample: Path, root: Path, **changes) -> Path:
    """A one-sequence BEAT2 layout built from the real sample's first 10 s (motion and audio), with
    `changes` applied to the npz arrays."""
    (root / "smplxflame_30").mkdir(parents=True)
    audio = load_audio(sample / f"{SEQ}.wav")
    write_wav(root / "wave16k" / f"{SEQ}.wav", audio[: 10 * SAMPLE_RATE])
    (root / "train_test_split.csv").write_text(f"id,type\n{SEQ},test\n")
    arrays = dict(np.load(sample / f"{SEQ}.npz", allow_pickle=False))
    arrays["poses"], arrays["trans"], arrays["expressions"] = (
        arrays[k][:300] for k in ("poses", "trans", "expressions")
    )
    arrays.update(changes)
    path = root / "smplxflame_30" / f"{SEQ}.npz"
    np.savez(path, **arrays)
    return path
